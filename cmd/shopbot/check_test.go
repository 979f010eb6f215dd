package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"shopbot/state/redisstore"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"shopbot/bot/botapitest"
	"shopbot/reseller/resellersim"
	"shopbot/state/statetest"
)

const checkToken = "424242:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCC-secret"

func checkEnv(t *testing.T, over map[string]string) (func(string) string, *resellersim.Sim, *botapitest.Server) {
	fake := botapitest.NewT(t, botapitest.WithToken(checkToken))
	sim := resellersim.New(resellersim.Config{APIKey: goodKey})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	redisURL := "redis://" + statetest.Addr(t) + "/0"
	base := map[string]string{
		"TELEGRAM_TOKEN": checkToken, "TELEGRAM_API_URL": fake.URL(),
		"RESELLER_BASE_URL": srv.URL + "/api/v1", "RESELLER_API_KEY": goodKey, "REDIS_URL": redisURL,
	}
	for k, v := range over {
		base[k] = v
	}
	return func(k string) string { return base[k] }, sim, fake
}

// runCheck runs `shopbot check` with flags. The test Redis (miniredis, or
// the CI's redis-server without AOF) keeps nothing through a restart, so
// tests about the other checks pass --allow-volatile.
func runCheck(t *testing.T, getenv func(string) string, flags ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"check"}, flags...), getenv, strings.NewReader(""), &out, &errOut)
	s := out.String() + errOut.String()
	if strings.Contains(s, checkToken) || strings.Contains(s, goodKey) {
		t.Fatalf("a secret in the output:\n%s", s)
	}
	return code, s
}

func TestCheckGoodConfiguration(t *testing.T) {
	getenv, _, _ := checkEnv(t, nil)
	code, out := runCheck(t, getenv, "--allow-volatile")
	if code != 0 || strings.Count(out, "\n") != 5 || !strings.Contains(out, "ok    telegram  bot @") ||
		!strings.Contains(out, "warn  mini app  off: WEBAPP_URL is not set") ||
		!strings.Contains(out, "ok    replicas  none running; this build: ") ||
		!strings.Contains(out, "ok    upstream  account") || !strings.Contains(out, "redis     answers: ") ||
		!strings.Contains(out, "; sync ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestCheckBadConfigurations(t *testing.T) {
	cases := []struct {
		name string
		over map[string]string
		prep func(*resellersim.Sim)
		want string
	}{
		{"token rejected", map[string]string{"TELEGRAM_TOKEN": "424242:DDDDDDDDDDDDDDDDDDDDDDDDDDDDDD-other"}, nil, "FAIL  telegram"},
		{"key rejected", map[string]string{"RESELLER_API_KEY": "wrong-key"}, nil, "FAIL  upstream  the upstream rejected RESELLER_API_KEY"},
		{"account blocked", nil, func(s *resellersim.Sim) { s.SetAccountStatus(resellersim.StatusBlocked) }, "FAIL  upstream  the upstream account is suspended"},
		{"redis down", map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, nil, "FAIL  redis"},
		{"webhook never set", map[string]string{"WEBHOOK_URL": "https://shop.example/hook", "WEBHOOK_SECRET": "s"}, nil, "warn  webhook   no webhook is set yet"},
		{"mini app on", map[string]string{"WEBAPP_URL": "https://shop.example/app"}, nil, "ok    mini app  https://shop.example/app/, served on HTTP_ADDR 127.0.0.1:8080 at /app/"},
		{"mini app not https", map[string]string{"WEBAPP_URL": "http://shop.example/app/"}, nil, "warn  mini app  off: WEBAPP_URL must be a public https:// address"},
		{"mini app on a private host", map[string]string{"WEBAPP_URL": "https://192.168.1.5/app/"}, nil, "warn  mini app  off: WEBAPP_URL must be a public https:// address"},
		{"missing variable", map[string]string{"RESELLER_API_KEY": ""}, nil, "RESELLER_API_KEY is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			getenv, sim, _ := checkEnv(t, tc.over)
			if tc.prep != nil {
				tc.prep(sim)
			}
			code, out := runCheck(t, getenv, "--allow-volatile")
			if !strings.Contains(out, tc.want) {
				t.Fatalf("output lacks %q:\n%s", tc.want, out)
			}
			if strings.Contains(tc.want, "FAIL") || strings.Contains(tc.want, "required") {
				if code == 0 {
					t.Fatalf("exit 0 with a failure:\n%s", out)
				}
			} else if code != 0 {
				t.Fatalf("exit %d for a warning:\n%s", code, out)
			}
		})
	}
}

func TestRedisVerdict(t *testing.T) {
	base := redisstore.Persistence{Version: "7.0.15", SaveKnown: true, MaxmemoryPolicy: "noeviction", Mode: redisstore.SyncNone}
	with := func(f func(*redisstore.Persistence)) redisstore.Persistence { p := base; f(&p); return p }
	cases := []struct {
		name   string
		p      redisstore.Persistence
		status string
		want   string
	}{
		{"no persistence", base, "FAIL", "a restart loses everything (use appendonly yes"},
		{"RDB only", with(func(p *redisstore.Persistence) { p.Save = "3600 1" }), "warn", "use appendonly yes"},
		{"AOF everysec on 7.0", with(func(p *redisstore.Persistence) { p.AOF, p.AppendFsync = true, "everysec" }), "warn", "sync none: money writes are not confirmed"},
		{"AOF always on 7.0", with(func(p *redisstore.Persistence) { p.AOF, p.AppendFsync = true, "always" }), "ok", "a crash loses nothing acknowledged"},
		{"AOF on 7.2", with(func(p *redisstore.Persistence) {
			p.Version, p.AOF, p.AppendFsync, p.Mode = "7.2.4", true, "everysec", redisstore.SyncWaitAOF
		}), "ok", "sync waitaof: money writes are fsynced"},
		{"a replica", with(func(p *redisstore.Persistence) { p.Replicas, p.Mode, p.WaitReplicas = 1, redisstore.SyncWait, 1 }), "ok", "sync wait"},
		{"evicting", with(func(p *redisstore.Persistence) { p.AOF, p.MaxmemoryPolicy = true, "volatile-lru" }), "FAIL", "use noeviction: Redis must refuse writes"},
		{"unknown server", redisstore.Persistence{Mode: redisstore.SyncNone}, "FAIL", "redis version unknown"},
	}
	for _, tc := range cases {
		status, detail := redisVerdict(tc.p, false)
		if status != tc.status || !strings.Contains(detail, tc.want) || strings.Contains(detail, "\n") {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, status, detail, tc.status, tc.want)
		}
		// --allow-volatile turns the volatile failures into warnings, nothing else.
		allowed, _ := redisVerdict(tc.p, true)
		if want := map[string]string{"FAIL": "warn"}[tc.status]; want != "" && allowed != want || want == "" && allowed != tc.status {
			t.Errorf("%s with --allow-volatile: %s", tc.name, allowed)
		}
	}
}

// TestCheckRedisSettings runs check against a throwaway redis-server (when
// one is on PATH): an evicting policy fails the check; appendonly with
// everysec passes and says what a crash loses.
func TestCheckRedisSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--maxmemory-policy", "allkeys-lru"}, 1, "FAIL  redis     answers: redis "},
		{[]string{"--appendonly", "yes", "--appendfsync", "everysec"}, 0, "AOF on, appendfsync everysec, RDB off"},
	} {
		addr := throwawayRedis(t, tc.args...)
		getenv, _, _ := checkEnv(t, map[string]string{"REDIS_URL": "redis://" + addr + "/0"})
		code, out := runCheck(t, getenv)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Fatalf("%v: exit %d, want %d and %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
		t.Logf("%v:\n%s", tc.args, out)
	}
}

// On a Redis that cannot confirm money writes (AOF everysec, below 7.2 or
// without a replica), check warns and says plainly what a crash loses and
// what the shop does about it, with the journal and without it.
func TestCheckRedisWithoutConfirmedFsyncSaysWhatACrashLoses(t *testing.T) {
	addr := throwawayRedis(t, "--appendonly", "yes", "--appendfsync", "everysec")
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	p, err := redisstore.ProbeMasters(t.Context(), probe)
	if err != nil {
		t.Fatal(err)
	}
	if p[0].Mode != redisstore.SyncNone {
		t.Skipf("redis-server %s confirms money writes (%s): nothing to warn about", p[0].Version, p[0].Mode)
	}
	for _, tc := range []struct {
		journal string
		want    []string
	}{
		{"", []string{"the journal in JOURNAL_DIR", "puts the lost upstream numbers back from the journal", "rebuilds lost wallet orders from it"}},
		{"off", []string{"JOURNAL_DIR is off, so nothing outside Redis records paid orders or creates", "rebuilt only when its debit survived"}},
	} {
		getenv, _, _ := checkEnv(t, map[string]string{"REDIS_URL": "redis://" + addr + "/0", "JOURNAL_DIR": tc.journal})
		code, out := runCheck(t, getenv)
		flat := strings.Join(strings.Fields(out), " ") // the notes are wrapped
		want := append([]string{
			"warn redis answers: redis ",
			"loses up to about the last second of the writes it had acknowledged, money writes among them",
			"A canary counter in Redis shows within about a second that writes were lost",
			"the Stars sweep",
			"Before any create the upstream is listed",
			"older than what a crash can take (3 s)",
			"Redis 7.2 or later with appendonly yes (WAITAOF), or a replica (WAIT)",
		}, tc.want...)
		for _, w := range want {
			if code != 0 || !strings.Contains(flat, w) {
				t.Fatalf("JOURNAL_DIR=%q: exit %d, want %q in:\n%s", tc.journal, code, w, out)
			}
		}
		t.Logf("JOURNAL_DIR=%q:\n%s", tc.journal, out)
	}
}

// What a crash loses is spelled out only where the shop cannot confirm
// money writes and the node keeps them through a restart.
func TestUnconfirmedLoss(t *testing.T) {
	base := redisstore.Persistence{Version: "7.0.15", SaveKnown: true, MaxmemoryPolicy: "noeviction", Mode: redisstore.SyncNone, AOF: true, AppendFsync: "everysec"}
	with := func(f func(*redisstore.Persistence)) redisstore.Persistence { p := base; f(&p); return p }
	for _, tc := range []struct {
		name string
		p    redisstore.Persistence
		want string
	}{
		{"everysec on 7.0", base, "up to about the last second"},
		{"appendfsync no", with(func(p *redisstore.Persistence) { p.AppendFsync = "no" }), "often the last 30 seconds"},
		{"appendfsync always", with(func(p *redisstore.Persistence) { p.AppendFsync = "always" }), ""},
		{"WAITAOF on 7.2", with(func(p *redisstore.Persistence) { p.Version, p.Mode = "7.2.4", redisstore.SyncWaitAOF }), ""},
		{"a replica", with(func(p *redisstore.Persistence) { p.Replicas, p.Mode, p.WaitReplicas = 1, redisstore.SyncWait, 1 }), ""},
		{"AOF off", with(func(p *redisstore.Persistence) { p.AOF = false }), ""},
	} {
		if got := unconfirmedLoss(tc.p); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// throwawayRedis runs redis-server on a free port with args (skipping the
// test without redis-server) and returns its address once it answers.
func throwawayRedis(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command(bin, append([]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir(), "--logfile", ""}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer within 10 s")
		}
		<-tick.C
	}
	return addr
}

// Without --allow-volatile, check exits 1 on a Redis that keeps nothing
// through a restart (the test store) and says how to accept it; with the
// flag it exits 0 with a warning. An unknown flag is a usage error.
func TestCheckFailsOnVolatileRedisUnlessAllowed(t *testing.T) {
	// miniredis, whatever TEST_REDIS_URL says: its persistence cannot be
	// confirmed, so it is volatile wherever the test runs.
	getenv, _, _ := checkEnv(t, map[string]string{"REDIS_URL": "redis://" + miniredis.RunT(t).Addr() + "/0"})
	code, out := runCheck(t, getenv)
	if code != 1 || !strings.Contains(out, "FAIL  redis") || !strings.Contains(out, "--allow-volatile") {
		t.Fatalf("volatile Redis without the flag: exit %d:\n%s", code, out)
	}
	code, out = runCheck(t, getenv, "--allow-volatile")
	if code != 0 || !strings.Contains(out, "warn  redis") || !strings.Contains(out, "allowed by --allow-volatile") {
		t.Fatalf("volatile Redis with the flag: exit %d:\n%s", code, out)
	}
	if code, out = runCheck(t, getenv, "--bogus"); code != 2 || !strings.Contains(out, `unknown flag "--bogus"`) {
		t.Fatalf("unknown flag: exit %d:\n%s", code, out)
	}
}

// check --live asks /healthz on HTTP_ADDR: 0 when it answers 200, 1 when
// it answers otherwise or nothing listens.
func TestCheckLive(t *testing.T) {
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	live := func() (int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"check", "--live"}, func(k string) string {
			if k == "HTTP_ADDR" {
				return ":" + port
			}
			return ""
		}, strings.NewReader(""), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := live(); code != 0 || !strings.Contains(out, "ok    live") {
		t.Fatalf("healthy: exit %d: %s", code, out)
	}
	status.Store(503)
	if code, out := live(); code != 1 || !strings.Contains(out, "503") {
		t.Fatalf("unhealthy: exit %d: %s", code, out)
	}
	srv.Close()
	if code, _ := live(); code != 1 {
		t.Fatalf("nothing listening: exit %d", code)
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"version"}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "shopbot dev (go") {
		t.Fatalf("version: exit %d, %q %q", code, out.String(), errOut.String())
	}
}

// On a Sentinel setup, check names the mode and the master the sentinels
// point at now (TEST_REDIS_SENTINEL_URL; skipped without it).
func TestCheckRedisSentinel(t *testing.T) {
	url := os.Getenv("TEST_REDIS_SENTINEL_URL")
	if url == "" {
		t.Skip("TEST_REDIS_SENTINEL_URL is not set")
	}
	getenv, _, _ := checkEnv(t, map[string]string{"REDIS_URL": "", "REDIS_SENTINEL_URL": url})
	code, out := runCheck(t, getenv)
	master, err := redisstore.SentinelMaster(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(out, "redis     sentinel: master "+master+" answers: ") || !strings.Contains(out, "replicas online") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// On a Redis Cluster, check reports every master and its durability
// (TEST_REDIS_CLUSTER_URL; skipped without it).
func TestCheckRedisCluster(t *testing.T) {
	url := os.Getenv("TEST_REDIS_CLUSTER_URL")
	if url == "" {
		t.Skip("TEST_REDIS_CLUSTER_URL is not set")
	}
	getenv, _, _ := checkEnv(t, map[string]string{"REDIS_URL": "", "REDIS_CLUSTER_URL": url})
	code, out := runCheck(t, getenv)
	if code != 0 || !strings.Contains(out, "redis     cluster: ") || strings.Count(out, "cluster node ") < 3 || strings.Count(out, "; sync ") < 3 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// A failed check says its likely cause: a rejected token, a host that
// does not resolve, a connection refused. A Bot API that cannot be reached
// is not blamed on the token.
func TestCheckSaysWhyTelegramOrTheUpstreamFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		over map[string]string
		want string
	}{
		{"token rejected", map[string]string{"TELEGRAM_TOKEN": "424242:DDDDDDDDDDDDDDDDDDDDDDDDDDDDDD-other"}, "(Telegram rejected TELEGRAM_TOKEN: copy it again from @BotFather)"},
		{"bot api host unknown", map[string]string{"TELEGRAM_API_URL": "http://no-such-host.invalid"}, "(the host no-such-host.invalid does not resolve: check TELEGRAM_API_URL and this machine's DNS)"},
		{"upstream refused", map[string]string{"RESELLER_BASE_URL": "http://127.0.0.1:1/api/v1"}, "(cannot connect: check RESELLER_BASE_URL, the network and any firewall or proxy)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv, _, _ := checkEnv(t, tc.over)
			code, out := runCheck(t, getenv, "--allow-volatile")
			if code == 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, output lacks %q:\n%s", code, tc.want, out)
			}
			if tc.name != "token rejected" && strings.Contains(out, "TELEGRAM_TOKEN") {
				t.Fatalf("blamed on the token:\n%s", out)
			}
		})
	}
}

// The Redis client's own log lines (its pool failing to dial) do not come
// before the report: the redis line says what failed.
func TestCheckSilencesTheRedisClientLog(t *testing.T) {
	rec := &redisLines{}
	redis.SetLogger(rec)
	getenv, _, _ := checkEnv(t, map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"})
	if code, out := runCheck(t, getenv, "--allow-volatile"); code == 0 || !strings.Contains(out, "FAIL  redis") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if n := rec.n.Load(); n != 0 {
		t.Fatalf("the Redis client logged %d lines during the check", n)
	}
}

type redisLines struct{ n atomic.Int64 }

func (r *redisLines) Printf(context.Context, string, ...any) { r.n.Add(1) }

// The token and the key are redacted where they stand; a short key is not
// cut out of an ordinary word that contains it.
func TestScrubSecrets(t *testing.T) {
	cfg := &Config{TelegramToken: "123456:ABCDEFGHIJKLMNOPQRSTUVWX", ResellerKey: "look"}
	for in, want := range map[string]string{
		"dial tcp: lookup api.example on 10.0.0.1:53": "dial tcp: lookup api.example on 10.0.0.1:53",
		"key look rejected":                           "key <secret> rejected",
		"look":                                        "<secret>",
		"key=look&x=look-up":                          "key=<secret>&x=look-up",
		"Post /bot123456:ABCDEFGHIJKLMNOPQRSTUVWX/getMe": "Post /bot<secret>/getMe",
		"outlook, looks, look_up, look; look":            "outlook, looks, look_up, <secret>; <secret>",
	} {
		if got := scrubSecrets(in, cfg); got != want {
			t.Errorf("scrubSecrets(%q) = %q, want %q", in, got, want)
		}
	}
	if got := scrubSecrets("secret <secret>", &Config{ResellerKey: "secret"}); got != "<secret> <<secret>>" {
		t.Errorf("a key that is the mark itself: %q", got)
	}
}
