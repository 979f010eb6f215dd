//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/reseller/resellersim"
)

// The dashboard and the alert rules this test holds against a real shop.
const (
	dashboardFile = "../../deploy/grafana/shopbot.json"
	alertsFile    = "../../deploy/prometheus/alerts.yml"
)

// TestDashboardAndAlertMetricsScraped runs the real binary in webhook mode
// on a redis-server of its own, behind the fake Bot API and the upstream
// simulator, makes a dozen purchases (gift cards delivered, top-ups failed
// upstream and refunded), and has a real Prometheus scrape its /metrics
// every second with the alert rules loaded. Then every metric name the
// Grafana dashboard (deploy/grafana/shopbot.json) and the rules
// (deploy/prometheus/alerts.yml, as Prometheus loaded them) use must exist
// in Prometheus, every rule must evaluate without error, and every
// dashboard query must be valid PromQL. It runs with SCRAPE_CHECK=1 and
// needs prometheus and redis-server on the PATH (.ci/run installs both).
func TestDashboardAndAlertMetricsScraped(t *testing.T) {
	if os.Getenv("SCRAPE_CHECK") == "" {
		t.Skip("set SCRAPE_CHECK=1 (needs prometheus and redis-server on the PATH)")
	}
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("SCRAPE_CHECK is set but prometheus is not on the PATH (Debian's prometheus package)")
	}
	redisBin, ok := ownRedis()
	if !ok {
		t.Fatal("SCRAPE_CHECK is set but redis-server is not on the PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logDir := t.TempDir()

	bin := buildShopbot(t, t.TempDir())
	rs := startRedisServer(t, redisBin, t.TempDir(), logDir)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(rs.port)})
	defer rdb.Close()

	sim := resellersim.New(resellersim.Config{APIKey: "scrape-upstream-key", Seed: 7, Balance: decimal.NewFromInt(100_000)})
	for _, id := range []string{"apple-us-10", "apple-us-2"} {
		if !sim.SetStock(id, 1_000) {
			t.Fatalf("the simulator has no gift card %s", id)
		}
	}
	quick := resellersim.Behavior{Mode: resellersim.Complete, ProcessingAfter: 200 * time.Millisecond, CompleteAfter: 500 * time.Millisecond}
	sim.SetBehavior(resellersim.LineGiftCard, quick)
	// Every top-up fails upstream: its buyer is refunded, so the refund
	// counters exist.
	sim.SetBehavior(resellersim.LineGameTopup, resellersim.Behavior{Mode: resellersim.Fail, ProcessingAfter: 200 * time.Millisecond, CompleteAfter: 500 * time.Millisecond})
	upstream := httptest.NewServer(sim)
	defer upstream.Close()

	const token = "100200:SCRAPE-fake-bot-api-token-not-real"
	var violations violationLog
	fake, err := botapitest.New(botapitest.WithToken(token),
		botapitest.WithBotUser(types.User{FirstName: "Scrape Shop", Username: "scrape_shop_bot"}),
		botapitest.OnViolation(violations.add))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()

	secret := randomHex(16)
	const webhookPath = "/telegram/webhook"
	env := []string{
		"TELEGRAM_TOKEN=" + token,
		"TELEGRAM_API_URL=" + fake.URL(),
		"RESELLER_BASE_URL=" + upstream.URL + "/api/v1",
		"RESELLER_API_KEY=scrape-upstream-key",
		"REDIS_URL=" + rs.url(),
		"PAYMENT_METHODS=stars",
		"WEBHOOK_URL=https://shop.scrape.invalid" + webhookPath,
		"WEBHOOK_SECRET=" + secret,
		"TZ=UTC",
	}
	cl := newCluster(t, bin, logDir, 1, env, "")
	metricsPorts := cl.exposeMetrics()
	defer cl.stopGracefully()

	// Prometheus first: it starts while the shop does.
	prom := startPrometheus(t, ctx, promBin, metricsPorts)

	startCtx, startCancel := context.WithTimeout(ctx, 60*time.Second)
	err = cl.startAll(startCtx)
	startCancel()
	if err != nil {
		t.Fatal(err)
	}
	feedCtx, stopFeed := context.WithCancel(ctx)
	feed := newWebhookFeed(fake, cl.ports(), webhookPath, secret, 0)
	feedDone := make(chan struct{})
	go func() { feed.run(feedCtx); close(feedDone) }()
	defer func() { stopFeed(); <-feedDone }()

	const purchases = 12
	sh := newShoppers(fake, purchases, t.Logf, os.Getenv("CHAOS_DEBUG") != "")
	loadCtx, loadCancel := context.WithTimeout(ctx, 90*time.Second)
	sh.run(loadCtx, 4, 8_000_000_001, 7)
	loadCancel()
	if n := sh.paid.Load(); n < purchases {
		t.Fatalf("the buyers paid %d of %d times", n, purchases)
	}
	orders := records.NewOrders(rdb, redisstore.DefaultPrefix)
	if settled, why := settle(ctx, time.Minute, fake, intake.NewQueue(rdb, redisstore.DefaultPrefix), orders, records.NewChargeReviews(rdb, redisstore.DefaultPrefix), false); !settled {
		t.Fatalf("the purchases did not settle: %s", why)
	}
	st, err := orders.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("orders: %v", st.ByStatus)
	if st.ByStatus["delivered"] == 0 || st.ByStatus["refunded"] == 0 {
		t.Fatalf("want orders delivered and refunded, have %v", st.ByStatus)
	}

	// A few scrapes after the last order moved, and every rule evaluated.
	settledAt := float64(time.Now().UnixMilli()) / 1000
	prom.until(t, ctx, "three scrapes after the purchases settled", func() bool {
		v, ok := prom.scalar(t, `max(timestamp(up{job="shopbot"}))`)
		return ok && v >= settledAt+3
	})
	var rules []promRule
	prom.until(t, ctx, "every rule evaluated", func() bool {
		rules = prom.rules(t)
		return len(rules) > 0 && !slices.ContainsFunc(rules, func(r promRule) bool { return r.Health == "unknown" })
	})
	if want := alertCount(t); len(rules) != want {
		t.Errorf("Prometheus loaded %d rules, %s has %d", len(rules), alertsFile, want)
	}
	for _, r := range rules {
		if r.Health != "ok" {
			t.Errorf("rule %s does not evaluate: %s: %s", r.Name, r.Health, r.LastError)
		}
	}

	// Every metric either uses, and every dashboard query's syntax.
	used := map[string][]string{} // metric -> where
	for _, r := range rules {
		for _, m := range metricNames(r.Query) {
			used[m] = append(used[m], "rule "+r.Name)
		}
	}
	for _, q := range dashboardQueries(t) {
		for _, m := range metricNames(q.expr) {
			used[m] = append(used[m], "panel "+q.where)
		}
		if err := prom.valid(t, grafanaVars(q.expr)); err != nil {
			t.Errorf("panel %s: %s: %v", q.where, q.expr, err)
		}
	}
	if len(used) < 20 {
		t.Fatalf("only %d metric names found in the dashboard and the rules: %v", len(used), used)
	}
	var missing []string
	for m, where := range used {
		if _, ok := prom.scalar(t, fmt.Sprintf(`count({__name__=%q})`, m)); !ok {
			missing = append(missing, fmt.Sprintf("%s (%s)", m, strings.Join(slices.Compact(slices.Sorted(slices.Values(where))), ", ")))
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d of %d metric names are not in Prometheus after scraping the shop:\n  %s", len(missing), len(used), strings.Join(missing, "\n  "))
	}
	t.Logf("%d metric names of the dashboard and %d rules looked up in Prometheus", len(used), len(rules))
	if n := violations.count(); n > 0 {
		t.Errorf("%d Bot API schema violations, first: %v", n, violations.first())
	}
}

// prometheus is a prometheus server of the test's own.
type prometheus struct {
	base string
}

// startPrometheus runs prometheus on a free port, scraping the shop's
// metrics ports every second as job "shopbot" with the alert rules
// loaded, and waits until it is ready.
func startPrometheus(t *testing.T, ctx context.Context, bin string, ports []int) *prometheus {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, p := range ports {
		targets = append(targets, fmt.Sprintf("%q", "127.0.0.1:"+strconv.Itoa(p)))
	}
	config := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: shopbot
    static_configs: [{targets: [%s]}]
`, rules, strings.Join(targets, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		_ = logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("prometheus's log:\n%s", b)
			}
		}
	})
	p := &prometheus{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	p.until(t, ctx, "prometheus to be ready", func() bool {
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// until polls cond every 200 ms until it holds or ctx ends.
func (p *prometheus) until(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if !sleepCtx(ctx, 200*time.Millisecond) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// api GETs an API path and decodes its data; a non-success answer is an error.
func (p *prometheus) api(path string, q url.Values, data any) error {
	resp, err := http.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s", body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

// scalar runs an instant query and returns the value of its first sample,
// false when the result is empty.
func (p *prometheus) scalar(t *testing.T, query string) (float64, bool) {
	t.Helper()
	var data struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	if err := p.api("/api/v1/query", url.Values{"query": {query}}, &data); err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	if len(data.Result) == 0 {
		return 0, false
	}
	s, _ := data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// valid reports whether Prometheus accepts query (it may return nothing).
func (p *prometheus) valid(t *testing.T, query string) error {
	t.Helper()
	var data json.RawMessage
	return p.api("/api/v1/query", url.Values{"query": {query}}, &data)
}

// promRule is one rule as Prometheus loaded it.
type promRule struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
}

func (p *prometheus) rules(t *testing.T) []promRule {
	t.Helper()
	var data struct {
		Groups []struct {
			Rules []promRule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.api("/api/v1/rules", nil, &data); err != nil {
		t.Fatalf("rules: %v", err)
	}
	var out []promRule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// alertCount counts the rules of the alerts file, to know Prometheus
// loaded them all.
func alertCount(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	return len(regexp.MustCompile(`(?m)^\s*- alert: `).FindAll(b, -1))
}

// dashboardQuery is one PromQL expression of the dashboard and where it is.
type dashboardQuery struct {
	where string
	expr  string
}

// dashboardQueries reads every panel's targets (rows' nested panels too)
// and the templating queries, whose label_values(metric, label) name a
// metric as well.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var dash struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []dashboardQuery
	var walk func([]json.RawMessage)
	walk = func(raws []json.RawMessage) {
		for _, raw := range raws {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: a panel: %v", dashboardFile, err)
			}
			for _, tg := range p.Targets {
				if tg.Expr == "" {
					t.Errorf("panel %q has a target without an expression", p.Title)
					continue
				}
				out = append(out, dashboardQuery{where: p.Title, expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	labelValues := regexp.MustCompile(`^label_values\(\s*([^,]+?)\s*,\s*\w+\s*\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil {
			_ = json.Unmarshal(v.Query, &q.Query) // a plain string
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q.Query)
			continue
		}
		out = append(out, dashboardQuery{where: "variable " + v.Name, expr: m[1]})
	}
	return out
}

// grafanaVars puts values in for the dashboard's variables, as Grafana
// would: the job, and the rate interval for a 1 s scrape.
func grafanaVars(expr string) string {
	return strings.NewReplacer("$__rate_interval", "1m", "$job", "shopbot").Replace(expr)
}

var (
	promStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promVariables = regexp.MustCompile(`\$\{?\w+\}?`)
	promIdent     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promKeywords  = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true,
		"without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges, grouping clauses
// and variables are taken out, but for function and aggregation names
// (followed by a parenthesis), keywords and number parts (1e3, 5m).
func metricNames(expr string) []string {
	s := promStrings.ReplaceAllString(expr, `""`)
	s = promMatchers.ReplaceAllString(s, "{}")
	s = promRanges.ReplaceAllString(s, "[]")
	s = promGrouping.ReplaceAllString(s, "")
	s = promVariables.ReplaceAllString(s, "")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsAny(s[loc[0]-1:loc[0]], "0123456789.") {
			continue // part of a number or duration
		}
		if rest := strings.TrimLeft(s[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function or an aggregation
		}
		if promKeywords[strings.ToLower(name)] || slices.Contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

func TestMetricNamesOfPromQL(t *testing.T) {
	for expr, want := range map[string][]string{
		`up{job="shopbot"} == 0`: {"up"},
		`sum by (line, state) (rate(shopbot_order_transitions_total{job=~"$job"}[$__rate_interval])) * 3600`:                             {"shopbot_order_transitions_total"},
		`histogram_quantile(0.99, sum by (le) (rate(shopbot_handler_seconds_bucket{kind=~"a|b"}[10m]))) > 2.5`:                           {"shopbot_handler_seconds_bucket"},
		`sum(increase(shopbot_refunds_total[1h])) / sum(increase(x_total{state="paid"}[1h])) > 0.2 and sum(increase(x_total[1h])) >= 10`: {"shopbot_refunds_total", "x_total"},
		`max by (node) (a_bytes / (b_bytes > 0)) > 0.9`:                                                                                  {"a_bytes", "b_bytes"},
		`absent(up{job="shopbot"} == 1)`:                             {"up"},
		`predict_linear(max(balance_usd)[6h:5m], 24 * 3600) < 1e3`:   {"balance_usd"},
		`rate(a[5m] offset 1h) + on(instance) group_left(version) b`: {"a", "b"},
		`count({__name__="x"})`:                                      nil,
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}
