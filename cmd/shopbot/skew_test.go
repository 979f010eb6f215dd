//go:build linux

package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
)

// The version-skew run: two builds of the shop on one Redis, as during a
// rolling upgrade. The "old" build is this commit's code as shipped
// (version 1.0.0-old, schema generation 1); the "next" one is the same
// code built with -tags skewnext (state/compat_skewnext.go,
// skewnext.go): generation 2, which writes wallet top-ups in a record
// version generation 1 does not read, and runs a job kind ("skewprobe")
// generation 1 does not know. The old side is the production code on
// purpose: its tolerance is what keeps the next upgrade safe.
//
// It shows, with the real binaries, webhook deliveries and the fake Bot
// API:
//   - a job of a kind the old build does not know is never claimed by it,
//     while it runs its own jobs, and is run by the next build once that
//     starts;
//   - shopbot check names both running versions;
//   - a wallet top-up the next build recorded, paid while only the old
//     build runs, is neither refunded nor credited by it (its update, its
//     Stars sweep), and is credited once the next build starts;
//   - while both run, the old build hands such a payment to the next one
//     (it waits in its chat's queue while the next replica is frozen, and
//     is credited when it thaws);
//   - a build refuses to start beside a live replica of a version that
//     excludes it, naming both.
//
// It needs redis-server on the PATH and builds the binary twice (about a
// minute the first time, seconds with the build cache); SKEW_CHECK=1 runs
// it (CI does, CONTRIBUTING.md); SKEW_LOG_DIR keeps the replicas' logs,
// SKEW_LOG_LEVEL sets their LOG_LEVEL.
func TestVersionSkew(t *testing.T) {
	if os.Getenv("SKEW_CHECK") == "" {
		t.Skip("the version-skew run: set SKEW_CHECK=1 (it builds the shop twice)")
	}
	redisBin, own := ownRedis()
	if !own {
		t.Skip("the version-skew run needs redis-server on the PATH")
	}
	start := time.Now()
	logDir := os.Getenv("SKEW_LOG_DIR")
	if logDir == "" {
		logDir = t.TempDir()
	}
	binDir := t.TempDir()
	oldBin := buildShopbotAs(t, binDir, "shopbot-old", "1.0.0-old", "")
	nextBin := buildShopbotAs(t, binDir, "shopbot-next", "2.0.0-next", "skewnext")
	built := time.Since(start)

	redisDir := filepath.Join(t.TempDir(), "redis")
	if err := os.MkdirAll(redisDir, 0o755); err != nil {
		t.Fatal(err)
	}
	rs := startRedisServer(t, redisBin, redisDir, logDir)
	opt, err := redis.ParseURL(rs.url() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	sim := resellersim.New(resellersim.Config{APIKey: "skew-upstream-key", Seed: 7, Balance: decimal.NewFromInt(1000)})
	upstream := httptest.NewServer(sim)
	defer upstream.Close()
	const token = "100300:SKEW-fake-bot-api-token-not-real"
	var violations violationLog
	fake, err := botapitest.New(botapitest.WithToken(token), botapitest.WithBotUser(types.User{FirstName: "Skew Shop", Username: "skew_shop_bot"}),
		botapitest.OnViolation(violations.add))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	const buyer = 7_000_000_001
	fake.SetUser(buyer, types.User{FirstName: "Buyer", LanguageCode: "en"})

	secret := randomHex(16)
	const webhookPath = "/telegram/webhook"
	env := []string{
		"TELEGRAM_TOKEN=" + token, "TELEGRAM_API_URL=" + fake.URL(),
		"RESELLER_BASE_URL=" + upstream.URL + "/api/v1", "RESELLER_API_KEY=skew-upstream-key",
		"REDIS_URL=" + rs.url() + "/0", "PAYMENT_METHODS=stars,wallet",
		"WEBHOOK_URL=https://shop.skew.invalid" + webhookPath, "WEBHOOK_SECRET=" + secret,
		"JOURNAL_DIR=" + filepath.Join(t.TempDir(), "journal"), "TZ=UTC",
	}
	if lv := os.Getenv("SKEW_LOG_LEVEL"); lv != "" {
		env = append(env, "LOG_LEVEL="+lv)
	}
	old := newCluster(t, oldBin, logDir, 1, env, "old-")
	next := newCluster(t, nextBin, logDir, 1, env, "next-")
	defer old.stopGracefully()
	defer next.stopGracefully()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sk := &skewRun{t: t, ctx: ctx, fake: fake, rdb: rdb, path: webhookPath, secret: secret, buyer: buyer}
	defer sk.stopFeed()

	// 1. Only the old build runs. A job of a kind it does not know, due
	// before one of its own, is never claimed: its own job runs (an order
	// job without an order finishes at once), the other stays due as it
	// was.
	sk.startOnly(old, next)
	schedule := sched.NewSchedule(rdb, redisstore.DefaultPrefix)
	probeDue := time.Now().Add(-2 * time.Second).Truncate(time.Millisecond)
	const probe, ownJob = "skewprobe:1", "order:999999999"
	if err := schedule.Put(ctx, probe, probeDue); err != nil {
		t.Fatal(err)
	}
	if err := schedule.Put(ctx, ownJob, probeDue.Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	sk.until("the old build runs its own job", func() bool {
		_, ok, _ := schedule.Due(ctx, ownJob)
		return !ok
	})
	if due, ok, _ := schedule.Due(ctx, probe); !ok || !due.Equal(probeDue) {
		t.Fatalf("the job of a kind the old build does not know: due %v (scheduled %v), want untouched at %v", due, ok, probeDue)
	}
	if gen, _ := schedule.LeftFor(ctx, probe); gen != 0 {
		t.Fatalf("the unknown job was claimed and left for generation %d", gen)
	}

	// 2. The next build starts beside it and runs that job; shopbot check
	// names both versions.
	sk.start(next)
	sk.feedTo(old, next)
	sk.until("the next build runs the job the old one left", func() bool {
		v, _ := rdb.Get(ctx, redisstore.DefaultPrefix+"skewprobe-ran:"+probe).Result()
		return v == "2.0.0-next"
	})
	check := exec.CommandContext(ctx, oldBin, "check", "--allow-volatile")
	check.Env = env
	out, _ := check.CombinedOutput()
	if !strings.Contains(string(out), "replicas  2 running: ") || !strings.Contains(string(out), "1.0.0-old (gen 1) x1") ||
		!strings.Contains(string(out), "2.0.0-next (gen 2) x1") || !strings.Contains(string(out), "starts beside them") {
		t.Fatalf("shopbot check does not name the running versions:\n%s", out)
	}

	// 3. A wallet top-up made by the next build (its record in a version
	// the old build does not read), paid while only the old build runs
	// (the update and the Stars sweep both reach the old build): never
	// refunded, never credited there.
	sk.startOnly(next, old)
	inv := sk.topupInvoice("10", 770)
	res, err := fake.Pay(ctx, buyer, inv.MessageID, botapitest.PayOptions{LoseUpdate: true})
	if err != nil || res.Declined {
		t.Fatalf("pay the top-up: %+v %v", res, err)
	}
	topupID := strings.TrimPrefix(res.Payload, "w:")
	topupKey := redisstore.DefaultPrefix + "{wallet:" + strconv.Itoa(buyer) + "}:topup:" + topupID
	if v, _ := rdb.HGet(ctx, topupKey, "v").Result(); v != "2" {
		t.Fatalf("the next build recorded the top-up in version %q, want 2", v)
	}
	oldLog := old.replicas[0].log.Name()
	mark := logSize(t, oldLog)
	sk.startOnly(old, next)
	sk.until("the old build's Stars sweep passes the top-up by", func() bool {
		return logHas(t, oldLog, mark, "sweep: payment of a newer version left for it", 1) && !sk.sweeping()
	})
	fake.PushSuccessfulPayment(buyer, res.Payload, res.TotalAmount, res.ChargeID)
	sk.until("the old build takes the payment's update", func() bool {
		return logHas(t, oldLog, mark, "payment this version cannot settle; left for a replica of a newer version", 1) && sk.drained()
	})
	wallets := records.NewWallets(rdb, redisstore.DefaultPrefix)
	sk.noRefunds()
	if bal := sk.balance(wallets); !bal.IsZero() {
		t.Fatalf("the old build credited a top-up it does not read: balance %s", bal)
	}
	if d, _ := wallets.TopupRefundDecided(ctx, buyer, res.ChargeID); d != "" {
		t.Fatalf("the old build decided a refund (%s)", d)
	}

	// 4. The next build starts: its sweep credits the top-up, once.
	sk.start(next)
	sk.feedTo(old, next)
	credited := locales.T(locales.En, "wtopup.credited", "usd", locales.Money(locales.En, decimal.NewFromInt(10)), "stars", locales.Stars(locales.En, 770),
		"balance", locales.Money(locales.En, decimal.NewFromInt(10)))
	sk.until("the next build credits the top-up", func() bool { return sk.told(stripTags(credited)) })
	if bal := sk.balance(wallets); !bal.Equal(decimal.NewFromInt(10)) {
		t.Fatalf("balance %s after the credit, want 10", bal)
	}

	// 5. Both run. A top-up of the next build paid through the old
	// replica while the next one is frozen waits in its chat's queue (the
	// old build hands it on, again and again), and is credited when the
	// next one thaws.
	sk.startOnly(next, old)
	inv = sk.topupInvoice("5", 385)
	sk.start(old)
	sk.feedTo(old)
	res, err = fake.Pay(ctx, buyer, inv.MessageID, botapitest.PayOptions{LoseUpdate: true})
	if err != nil || res.Declined {
		t.Fatalf("pay the second top-up through the old replica: %+v %v", res, err)
	}
	mark = logSize(t, oldLog)
	frozen := true
	next.freeze()
	defer func() {
		if frozen { // a failure while frozen: thaw, or stopping it blocks
			next.thaw()
		}
	}()
	fake.PushSuccessfulPayment(buyer, res.Payload, res.TotalAmount, res.ChargeID)
	sk.until("the old build hands the payment to the frozen next replica", func() bool {
		return logHas(t, oldLog, mark, "update left for a replica of a newer version", 3)
	})
	if bal := sk.balance(wallets); !bal.Equal(decimal.NewFromInt(10)) {
		t.Fatalf("balance %s while the next replica is frozen, want 10", bal)
	}
	sk.noRefunds()
	whileFrozen := logCount(t, oldLog, mark, "update left for a replica of a newer version")
	frozen = false
	next.thaw()
	thawed := time.Now()
	sk.until("the next build credits the second top-up", func() bool { return sk.balance(wallets).Equal(decimal.NewFromInt(15)) })
	tookOver := time.Since(thawed)
	handed := logCount(t, oldLog, mark, "update left for a replica of a newer version")

	// 6. A build that a live replica's version excludes refuses to start
	// and says why.
	reg := redisstore.NewReplicas(rdb, redisstore.DefaultPrefix)
	breaking := redisstore.Replica{ID: "breaking-1", Version: "9.0.0-breaking", Gen: 9, MinPeer: 9, Host: "elsewhere", Started: time.Now()}
	if err := reg.Beat(ctx, breaking, time.Now()); err != nil {
		t.Fatal(err)
	}
	refused := exec.CommandContext(ctx, oldBin)
	refused.Env = append(append([]string(nil), env...), "HTTP_ADDR=127.0.0.1:0", "METRICS_ADDR=127.0.0.1:0")
	out, err = refused.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing to start") || !strings.Contains(string(out), "9.0.0-breaking") ||
		!strings.Contains(string(out), "version 1.0.0-old (schema generation 1") {
		t.Fatalf("a build excluded by a live replica: %v\n%s", err, out)
	}
	if err := reg.Leave(ctx, breaking.ID); err != nil {
		t.Fatal(err)
	}

	sk.stopFeed()
	old.stopGracefully()
	next.stopGracefully()
	sk.noRefunds()
	if n := violations.count(); n > 0 {
		t.Errorf("%d Bot API schema violations, first: %v", n, violations.first())
	}
	t.Logf("version skew: builds %s, run %s; the old build handed the paid update on %d times while the next replica was frozen and %d times after; the next one credited it %s after it thawed; logs in %s",
		built.Round(time.Second), (time.Since(start) - built).Round(100*time.Millisecond), whileFrozen, handed-whileFrozen, tookOver.Round(10*time.Millisecond), logDir)
}

// buildShopbotAs builds the shop as name, stamped with version, with build
// tags (none: ""), into dir.
func buildShopbotAs(t *testing.T, dir, name, version, tags string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin, "-ldflags", "-X shopbot/bot.Version=" + version}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, ".")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

// skewRun drives the two builds: which run, where the webhook deliveries
// go, and the buyer.
type skewRun struct {
	t      *testing.T
	ctx    context.Context
	fake   *botapitest.Server
	rdb    *redis.Client
	path   string
	secret string
	buyer  int64

	stop func() // stops the running feed
}

// start starts c's replica and waits until it answers /healthz.
func (s *skewRun) start(c *cluster) {
	s.t.Helper()
	if err := c.restart(); err != nil {
		s.t.Fatal(err)
	}
	for _, p := range c.ports() {
		if err := waitHealthy(s.ctx, p); err != nil {
			s.t.Fatalf("replica on %d: %v", p, err)
		}
	}
}

// startOnly stops other (gracefully: it leaves the registry), starts c and
// sends every delivery to c.
func (s *skewRun) startOnly(c, other *cluster) {
	s.t.Helper()
	s.stopFeed()
	other.stopGracefully()
	s.start(c)
	s.feedTo(c)
}

// feedTo sends the webhook deliveries to the replicas of cs from now on.
func (s *skewRun) feedTo(cs ...*cluster) {
	s.stopFeed()
	var ports []int
	for _, c := range cs {
		ports = append(ports, c.ports()...)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	feed := newWebhookFeed(s.fake, ports, s.path, s.secret, 0)
	done := make(chan struct{})
	go func() { feed.run(ctx); close(done) }()
	s.stop = func() { cancel(); <-done }
}

func (s *skewRun) stopFeed() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// until waits for cond, looking again at every Bot API call and every
// 100 ms (for what only Redis or a log shows), and fails the test after a
// minute.
func (s *skewRun) until(what string, cond func() bool) {
	s.t.Helper()
	calls, stop := s.fake.Subscribe()
	defer stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	for !cond() {
		select {
		case <-calls:
		case <-tick.C:
		case <-limit.C:
			s.t.Fatalf("version skew: %s: not within a minute", what)
		case <-s.ctx.Done():
			s.t.Fatalf("version skew: %s: %v", what, s.ctx.Err())
		}
	}
}

// topupInvoice walks the buyer through /wallet to a top-up of usd and
// returns its invoice.
func (s *skewRun) topupInvoice(usd string, stars int64) types.Message {
	s.t.Helper()
	before := s.lastID()
	s.fake.SendCommand(s.buyer, "wallet", "")
	s.press(before, locales.T(locales.En, "wtopup.btn"))
	s.press(before, locales.T(locales.En, "wtopup.btn_amount", "usd", locales.Money(locales.En, decimal.RequireFromString(usd)), "stars", locales.Stars(locales.En, stars)))
	var inv types.Message
	s.until("the top-up invoice", func() bool {
		for _, m := range s.fake.MessagesIn(s.buyer) {
			if m.MessageID > before && m.Invoice != nil && m.Invoice.TotalAmount == stars {
				inv = m
				return true
			}
		}
		return false
	})
	return inv
}

// press waits for a message after from with a button labelled label and
// presses it.
func (s *skewRun) press(from int, label string) {
	s.t.Helper()
	s.until("a button "+label, func() bool {
		msgs := s.fake.MessagesIn(s.buyer)
		for i := len(msgs) - 1; i >= 0 && msgs[i].MessageID > from; i-- {
			for _, b := range msgs[i].ReplyMarkup.Buttons() {
				if b.Text == label && b.CallbackData != "" {
					s.fake.Press(s.buyer, msgs[i].MessageID, b.CallbackData)
					return true
				}
			}
		}
		return false
	})
}

func (s *skewRun) lastID() int {
	m, ok := s.fake.LastMessage(s.buyer)
	if !ok {
		return 0
	}
	return m.MessageID
}

// told reports whether the buyer got a message containing text.
func (s *skewRun) told(text string) bool {
	for _, m := range s.fake.MessagesIn(s.buyer) {
		if strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}

// drained reports whether every update was delivered and handled.
func (s *skewRun) drained() bool {
	if len(s.fake.QueuedUpdates()) > 0 {
		return false
	}
	n, err := intake.NewQueue(s.rdb, redisstore.DefaultPrefix).Pending(s.ctx)
	return err == nil && n == 0
}

// sweeping reports whether a replica holds the Stars sweep's lock.
func (s *skewRun) sweeping() bool {
	n, err := s.rdb.Exists(s.ctx, redisstore.DefaultPrefix+"pay:sweep-lock").Result()
	return err != nil || n > 0
}

func (s *skewRun) balance(w *records.Wallets) decimal.Decimal {
	s.t.Helper()
	b, err := w.Balance(s.ctx, s.buyer)
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

// noRefunds fails the test on any Stars refund.
func (s *skewRun) noRefunds() {
	s.t.Helper()
	if n := len(s.fake.CallsFor("refundStarPayment")); n > 0 {
		s.t.Fatalf("%d Stars refunds: a build refunded a payment", n)
	}
	for _, tx := range s.fake.StarTransactions() {
		if s.fake.Refunded(tx.ID) {
			s.t.Fatalf("charge %s refunded", tx.ID)
		}
	}
}

// stripTags drops the HTML tags of a message text (the fake keeps the
// text as Telegram shows it).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// logSize is the size of the log at path now: logHas and logCount read
// what was written after it.
func logSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// logCount counts the lines of the log at path written after offset whose
// message starts with msg (the replicas log JSON).
func logCount(t *testing.T, path string, offset int64, msg string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if offset > int64(len(b)) {
		offset = 0
	}
	return bytes.Count(b[offset:], []byte(`"msg":"`+msg))
}

// logHas reports whether at least n such lines were written.
func logHas(t *testing.T, path string, offset int64, msg string, n int) bool {
	return logCount(t, path, offset, msg) >= n
}
