//go:build linux

package main

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// TestChaos is the black-box chaos run (CONTRIBUTING.md): several replicas of the real
// shopbot binary (webhook mode, production configuration) share one real
// Redis; simulated buyers buy gift cards (codes) and look-alike in-game
// top-ups (same offer, a different player id each) through the fake Bot
// API and pay Stars invoices. Before it, another shop with the same token
// and journal directory but its own Redis database and upstream account
// makes purchases of its own (runForeignShop). Meanwhile a random replica
// is killed with SIGKILL every few seconds and restarted, the upstream
// answers 5xx, 429 and ambiguous creates (some created the order, some did
// not), the fake Telegram delivers some updates twice, Redis is rolled
// back to a snapshot taken a second or two earlier, crashed with SIGKILL
// and restarted from its AOF, and restarted on a backup older than the
// journal window. Then the faults stop, the shop settles, and the test
// checks what a shop owner and the buyers care about (see
// chaos_check_test.go):
//
//   - every paid charge ends delivered or refunded, exactly once (or, for
//     a purchase paid before the restore on an old backup, held for the
//     admin's review: never bought again, refunded or sent to another);
//   - every upstream order is claimed by exactly one purchase, its own;
//   - nothing is stuck (no order left unfinished or in needs_review);
//   - the upstream balance moved by exactly the delivered orders' charged_usd;
//   - every buyer got their own codes (and top-ups for their own player id);
//   - payment-to-delivery p99 is under CHAOS_P99_MAX (60 s).
//
// It starts its own redis-server when one is on the PATH (else it needs
// TEST_REDIS_URL and CHAOS_REDIS=shared, and Redis is only rolled back);
// the run uses its own database there (CHAOS_REDIS_DB, default 13, and the
// next for the other shop). Knobs: see chaosConfig.
func TestChaos(t *testing.T) {
	redisBin, own := ownRedis()
	redisURL := os.Getenv("TEST_REDIS_URL")
	if !own && redisURL == "" {
		t.Skip("chaos: needs a real Redis: redis-server on the PATH (the run starts its own), or TEST_REDIS_URL with CHAOS_REDIS=shared")
	}
	cfg := loadChaosConfig(t)
	if !own {
		cfg.redisCrashes, cfg.restores = 0, 0
	}
	t.Logf("chaos: %s", cfg)

	logDir := cfg.logDir
	if logDir == "" {
		logDir = t.TempDir()
	} else if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := buildShopbot(t, t.TempDir())
	var rs *redisServer
	if own {
		dir := filepath.Join(t.TempDir(), "redis")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		rs = startRedisServer(t, redisBin, dir, logDir)
		redisURL = rs.url()
		t.Logf("chaos: its own Redis on %s (appendonly yes, appendfsync everysec; log %s)", redisURL, rs.log)
	}
	cr := openChaosRedis(t, redisURL, cfg.redisDB)
	rng := rand.New(rand.NewPCG(cfg.seed, 0x5eed))

	// The upstream: a big balance, stock for every purchase, orders that
	// take a moment, and one top-up offer that fails (its buyers are
	// refunded).
	startBalance := decimal.NewFromInt(1_000_000)
	sim := resellersim.New(resellersim.Config{APIKey: "chaos-upstream-key", Seed: int64(cfg.seed), Balance: startBalance})
	for _, id := range []string{"apple-us-10", "apple-us-2"} {
		if !sim.SetStock(id, 1_000_000) {
			t.Fatalf("chaos: the simulator has no gift card %s", id)
		}
	}
	slow := resellersim.Behavior{Mode: resellersim.Complete, ProcessingAfter: 500 * time.Millisecond, CompleteAfter: 2 * time.Second}
	sim.SetBehavior(resellersim.LineGiftCard, slow)
	sim.SetBehavior(resellersim.LineGameTopup, slow)
	sim.SetBehavior("pubg-mobile-global-325", resellersim.Behavior{Mode: resellersim.Fail, ProcessingAfter: 500 * time.Millisecond, CompleteAfter: 2 * time.Second})
	upstream := httptest.NewServer(sim)
	defer upstream.Close()

	// The fake Telegram.
	const token = "100200:CHAOS-fake-bot-api-token-not-real"
	var violations violationLog
	fake, err := botapitest.New(botapitest.WithToken(token),
		botapitest.WithBotUser(types.User{FirstName: "Chaos Shop", Username: "chaos_shop_bot"}),
		botapitest.OnViolation(violations.add))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	const adminID = 777000001
	fake.SetUser(adminID, types.User{FirstName: "Admin", Username: "chaos_admin", LanguageCode: "en"})

	// Another shop with the same token and journal directory first.
	journalDir := filepath.Join(t.TempDir(), "journal")
	if cfg.foreign > 0 {
		runForeignShop(t, bin, logDir, redisURL, cfg.redisDB+1, token, journalDir, cfg.foreign)
	}

	// The replicas, as production runs them: webhook mode behind a load
	// balancer (the feed), one Redis.
	secret := randomHex(16)
	const webhookPath = "/telegram/webhook"
	env := []string{
		"TELEGRAM_TOKEN=" + token,
		"TELEGRAM_API_URL=" + fake.URL(),
		"RESELLER_BASE_URL=" + upstream.URL + "/api/v1",
		"RESELLER_API_KEY=chaos-upstream-key",
		"REDIS_URL=" + cr.url,
		"ADMIN_IDS=" + strconv.Itoa(adminID),
		"PAYMENT_METHODS=stars",
		"WEBHOOK_URL=https://shop.chaos.invalid" + webhookPath,
		"WEBHOOK_SECRET=" + secret,
		"LOG_LEVEL=" + cfg.logLevel,
		"JOURNAL_DIR=" + journalDir,
		"JOURNAL_KEEP=" + cfg.journalKeep.String(),
		"TZ=UTC",
	}
	cl := newCluster(t, bin, logDir, cfg.replicas, env, "")
	defer cl.stopGracefully() // before the upstream and the fake close, on every path
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 60*time.Second)
	if err := cl.startAll(startCtx); err != nil {
		startCancel()
		t.Fatalf("chaos: %v", err)
	}
	startCancel()
	if fake.Webhook().URL == "" {
		t.Fatal("chaos: the replicas did not set a webhook")
	}
	t.Logf("chaos: %d replicas up (logs in %s)", cfg.replicas, logDir)

	feedCtx, stopFeed := context.WithCancel(ctx)
	feed := newWebhookFeed(fake, cl.ports(), webhookPath, secret, cfg.dupRate)
	feedDone := make(chan struct{})
	go func() { feed.run(feedCtx); close(feedDone) }()
	defer func() { stopFeed(); <-feedDone }()

	// The load, with the faults running beside it.
	sh := newShoppers(fake, cfg.purchases, t.Logf, cfg.debug)
	faultCtx, stopFaults := context.WithCancel(ctx)
	fl := &faults{t: t, cl: cl, cr: cr, rs: rs, sim: sim, sh: sh, cfg: cfg, rng: rng}
	var faultsWG sync.WaitGroup
	faultsWG.Add(4)
	go func() { defer faultsWG.Done(); fl.crashLoop(faultCtx) }()
	loadDone, restored := make(chan struct{}), make(chan struct{})
	go func() { defer close(restored); fl.restoreLoop(ctx, loadDone) }()
	go func() { defer faultsWG.Done(); fl.killLoop(faultCtx) }()
	go func() { defer faultsWG.Done(); fl.upstreamLoop(faultCtx) }()
	go func() { defer faultsWG.Done(); fl.rollbackLoop(faultCtx) }()

	loadStart := time.Now()
	loadCtx, loadCancel := context.WithTimeout(ctx, cfg.loadMax)
	sh.run(loadCtx, cfg.buyers, 6_000_000_001, cfg.seed)
	loadTimedOut := loadCtx.Err() != nil
	loadCancel()
	loadTime := time.Since(loadStart)
	stopFaults()
	faultsWG.Wait()
	close(loadDone)
	<-restored
	sim.ClearFaults()
	feed.setDupRate(0)
	if err := cl.restart(); err != nil {
		t.Fatalf("chaos: %v", err)
	}
	t.Logf("chaos: load done in %s: %d paid (%d attempts, %d abandoned); faults stopped; settling (at most %s)",
		loadTime.Round(time.Second), sh.paid.Load(), sh.attempts.Load(), sh.abandoned.Load(), cfg.settle)
	if loadTimedOut {
		t.Errorf("chaos: the buyers paid only %d of %d times within CHAOS_LOAD_MAX=%s", sh.paid.Load(), cfg.purchases, cfg.loadMax)
	}

	// Settle: wait for a condition, never a fixed sleep.
	orders := records.NewOrders(cr.rdb, redisstore.DefaultPrefix)
	queue := intake.NewQueue(cr.rdb, redisstore.DefaultPrefix)
	settleStart := time.Now()
	reviews := records.NewChargeReviews(cr.rdb, redisstore.DefaultPrefix)
	settled, why := settle(ctx, cfg.settle, fake, queue, orders, reviews, !fl.restoredAt().IsZero())
	settleTime := time.Since(settleStart)
	if !settled {
		t.Logf("chaos: not settled after %s: %s", cfg.settle, why)
	}
	cl.stopGracefully()
	stopFeed()
	<-feedDone

	// Read the outcome and check it.
	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	w, err := gather(rctx, fake, sim, orders, reviews, sh, fl.restoredAt())
	if err != nil {
		t.Fatalf("chaos: read the outcome: %v", err)
	}
	kills, crashes := cl.counts()
	rep := checkChaos(w, startBalance, cfg.p99Max)
	rep.run = runFigures{
		seed: cfg.seed, replicas: cfg.replicas, buyers: cfg.buyers, load: loadTime, settle: settleTime, settled: settled,
		kills: kills, crashes: crashes, rollbacks: fl.rollbacks(), restoredAt: fl.restoredAt(), noRestore: fl.noRestoreWhy(), rollbackNotes: fl.rollbackNotes(),
		faults: fl.faultCounts(), dupDeliveries: feed.dups.Load(), deliveries: feed.delivered.Load(),
		failedDeliveries: feed.failures.Load(), attempts: sh.attempts.Load(), abandoned: sh.abandoned.Load(),
		declined: sh.declined.Load(), noInvoice: sh.noInvoice.Load(), payTimeouts: sh.payErrors.Load(),
		stuckAt: sh.stuckAtCopy(), declines: sh.declinesCopy(), violations: violations.count(),
	}
	t.Log("chaos: figures\n" + rep.String())
	if n := violations.count(); n > 0 {
		t.Errorf("chaos: %d Bot API schema violations by the bot, first: %v", n, violations.first())
	}
	if rep.run.rollbacks < 1 && cfg.rollbacks > 0 {
		t.Errorf("chaos: Redis was never rolled back (the load ended before the first rollback point)")
	}
	if n := rep.run.faults["redis crash"]; n < cfg.redisCrashes {
		t.Errorf("chaos: Redis crashed %d of %d times (the load ended first)", n, cfg.redisCrashes)
	}
	if n := rep.run.faults["redis restore"]; n < cfg.restores {
		t.Errorf("chaos: Redis was restored on an old backup %d of %d times (the load ended first: raise CHAOS_PURCHASES or lower CHAOS_JOURNAL_KEEP)", n, cfg.restores)
	}
	for _, f := range rep.failures() {
		t.Error(f)
	}
	if t.Failed() {
		// Last, so a log's tail tells the run's shape without the figures above.
		t.Logf("chaos: in short: %s", rep.short())
		t.Logf("chaos: replica logs: %s (set CHAOS_LOG_DIR to keep them)", logDir)
	}
}

// chaosConfig is the run's knobs, from the environment.
type chaosConfig struct {
	purchases int           // CHAOS_PURCHASES: paid charges to make (the test is skipped unless set)
	replicas  int           // CHAOS_REPLICAS: shopbot processes (default 3)
	buyers    int           // CHAOS_BUYERS: concurrent buyers (default purchases/5, 10..100)
	seed      uint64        // CHAOS_SEED: buyers' choices and the fault schedule (default random, printed)
	killEvery time.Duration // CHAOS_KILL_EVERY: mean time between two SIGKILLs (default 4s; 0 = none)
	faultGap  time.Duration // CHAOS_FAULT_EVERY: mean time between two upstream faults (default 1s; 0 = none)
	rollbacks int           // CHAOS_ROLLBACKS: Redis rollbacks during the load (default 2)
	dupRate   float64       // CHAOS_DUP_RATE: share of updates Telegram delivers twice (default 0.05)
	settle    time.Duration // CHAOS_SETTLE: longest wait for the shop to settle after the faults (default 3m; 8m with a restore)
	loadMax   time.Duration // CHAOS_LOAD_MAX: longest load phase (default 2s a purchase per buyer batch, at least 3m)
	p99Max    time.Duration // CHAOS_P99_MAX: payment-to-delivery p99 bound (default 60s; "report": printed, not asserted)
	redisDB   int           // CHAOS_REDIS_DB: the database used on TEST_REDIS_URL's server (default 13)
	// With its own Redis (CHAOS_REDIS=own, the default when redis-server is on the PATH):
	redisCrashes int           // CHAOS_REDIS_CRASHES: SIGKILLs of Redis, restarted from its AOF (default 2)
	restores     int           // CHAOS_RESTORES: restarts on a backup older than the journal window (default 1; 0 or 1)
	wipe         bool          // CHAOS_WIPE=1: the restore is onto an empty Redis (its volume lost), a third of the way in
	journalKeep  time.Duration // CHAOS_JOURNAL_KEEP: the replicas' JOURNAL_KEEP (default 90s, so a backup can be older within the run)
	foreign      int           // CHAOS_FOREIGN_PURCHASES: purchases of another shop with the same token and journal directory before the run (default 30; 0 = none)
	logDir       string        // CHAOS_LOG_DIR: keep the replicas' logs there (default a temporary directory)
	debug        bool          // CHAOS_DEBUG: log every purchase and abandoned attempt
	logLevel     string        // CHAOS_LOG_LEVEL: the replicas' LOG_LEVEL (default info; debug names the slot holder an order waits for)
}

func (c chaosConfig) String() string {
	return fmt.Sprintf("purchases=%d replicas=%d buyers=%d seed=%d kill_every=%s fault_every=%s rollbacks=%d redis_crashes=%d restores=%d wipe=%v journal_keep=%s foreign=%d dup_rate=%.2f settle=%s load_max=%s p99_max=%s redis_db=%d",
		c.purchases, c.replicas, c.buyers, c.seed, c.killEvery, c.faultGap, c.rollbacks, c.redisCrashes, c.restores, c.wipe, c.journalKeep, c.foreign, c.dupRate, c.settle, c.loadMax, c.p99Max, c.redisDB)
}

func loadChaosConfig(t *testing.T) chaosConfig {
	t.Helper()
	intVar := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("chaos: %s=%q is not a whole number", name, v)
		}
		return n
	}
	durVar := func(name string, def time.Duration) time.Duration {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		if v == "report" && name == "CHAOS_P99_MAX" {
			return 0 // measured and printed, not asserted
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.Fatalf("chaos: %s=%q is not a duration", name, v)
		}
		return d
	}
	if os.Getenv("CHAOS_PURCHASES") == "" {
		// It takes minutes: CI runs it as a step of its own (.ci/run).
		t.Skip("chaos: set CHAOS_PURCHASES (e.g. 300) to run it")
	}
	c := chaosConfig{
		purchases:    intVar("CHAOS_PURCHASES", 300),
		replicas:     intVar("CHAOS_REPLICAS", 3),
		killEvery:    durVar("CHAOS_KILL_EVERY", 4*time.Second),
		faultGap:     durVar("CHAOS_FAULT_EVERY", time.Second),
		rollbacks:    intVar("CHAOS_ROLLBACKS", 2),
		settle:       durVar("CHAOS_SETTLE", 0),
		p99Max:       durVar("CHAOS_P99_MAX", 60*time.Second),
		redisDB:      intVar("CHAOS_REDIS_DB", 13),
		redisCrashes: intVar("CHAOS_REDIS_CRASHES", 2),
		restores:     min(intVar("CHAOS_RESTORES", 1), 1),
		journalKeep:  durVar("CHAOS_JOURNAL_KEEP", 90*time.Second),
		wipe:         os.Getenv("CHAOS_WIPE") == "1",
		foreign:      intVar("CHAOS_FOREIGN_PURCHASES", 30),
		logDir:       os.Getenv("CHAOS_LOG_DIR"),
		debug:        os.Getenv("CHAOS_DEBUG") != "",
		logLevel:     cmp.Or(os.Getenv("CHAOS_LOG_LEVEL"), "info"),
		dupRate:      0.05,
	}
	if c.purchases < 1 || c.replicas < 1 {
		t.Fatal("chaos: CHAOS_PURCHASES and CHAOS_REPLICAS must be at least 1")
	}
	if c.settle == 0 {
		// A restore's lost quotes are listed for review only after
		// checkout's orphan wait (5 minutes from the payment).
		c.settle = 3 * time.Minute
		if c.restores > 0 {
			c.settle = 8 * time.Minute
		}
	}
	c.buyers = intVar("CHAOS_BUYERS", min(max(c.purchases/5, 10), 100))
	if c.buyers < 1 {
		t.Fatal("chaos: CHAOS_BUYERS must be at least 1")
	}
	c.loadMax = durVar("CHAOS_LOAD_MAX", max(3*time.Minute, time.Duration(c.purchases/c.buyers+1)*30*time.Second))
	if v := os.Getenv("CHAOS_DUP_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			t.Fatalf("chaos: CHAOS_DUP_RATE=%q is not a share from 0 to 1", v)
		}
		c.dupRate = f
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("chaos: CHAOS_SEED=%q is not a number", v)
		}
		c.seed = n
	} else {
		c.seed = rand.Uint64() % 1_000_000
	}
	return c
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

// violationLog keeps the fake's Bot API schema violations.
type violationLog struct {
	mu   sync.Mutex
	errs []error
}

func (v *violationLog) add(err error) {
	v.mu.Lock()
	v.errs = append(v.errs, err)
	v.mu.Unlock()
}

func (v *violationLog) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.errs)
}

func (v *violationLog) first() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.errs) == 0 {
		return nil
	}
	return v.errs[0]
}

// settle waits until the shop has nothing left to do: Telegram's queue
// and the intake are empty, no order is on its way (paid, placing, placed,
// refunding, or delivered but not yet told to the buyer), and every charge
// has an order or a refund (or the charges without one stayed so for 15 s
// with nothing else moving: lost). needs_review counts as settled: nothing
// moves it but an admin. It returns false, with what was still moving, when
// limit runs out.
//
// With patient set (Redis was restored on an old backup), charges without
// an order are not given up on while quiet: the sweep lists a charge whose
// quote the restore took for review only once the upstream orders it may
// have bought had their time to be claimed (checkout's orphan wait), so
// the wait lasts until each is settled or listed, or limit.
func settle(ctx context.Context, limit time.Duration, fake *botapitest.Server, queue *intake.Queue, orders *records.Orders, reviews *records.ChargeReviews, patient bool) (bool, string) {
	deadline := time.Now().Add(limit)
	var quietSince time.Time
	lastUnmatched := ""
	why := ""
	for {
		busy, unmatched, err := settleState(ctx, fake, queue, orders, reviews)
		switch {
		case err != nil:
			why = err.Error()
			quietSince = time.Time{}
		case busy != "":
			why = busy
			quietSince = time.Time{}
		case unmatched == "":
			return true, ""
		default:
			why = "charges without order or refund: " + unmatched
			if unmatched != lastUnmatched || quietSince.IsZero() {
				quietSince, lastUnmatched = time.Now(), unmatched
			} else if !patient && time.Since(quietSince) >= 15*time.Second {
				return true, "" // nothing moves them: the check reports them lost
			}
		}
		if time.Now().After(deadline) {
			return false, why
		}
		if !sleepCtx(ctx, time.Second) {
			return false, "cancelled"
		}
	}
}

// settleState returns what still moves (empty when nothing does) and the
// charges that have neither an order nor a refund.
func settleState(ctx context.Context, fake *botapitest.Server, queue *intake.Queue, orders *records.Orders, reviews *records.ChargeReviews) (busy, unmatched string, err error) {
	if n := fake.PendingUpdates(); n > 0 {
		return fmt.Sprintf("%d updates not yet delivered", n), "", nil
	}
	if n, err := queue.Pending(ctx); err != nil {
		return "", "", err
	} else if n > 0 {
		return fmt.Sprintf("%d chats with updates in the intake", n), "", nil
	}
	all, err := orders.List(ctx, 0, 1<<30, state.OrderFilter{})
	if err != nil {
		return "", "", err
	}
	moving := map[string]int{}
	byCharge := map[string]bool{}
	for _, o := range all {
		byCharge[o.ChargeID] = true
		switch {
		case o.Status == state.OrderNeedsReview:
		case o.Status == state.OrderDelivered && o.DeliveredAt.IsZero():
			moving["delivered, buyer not yet told"]++
		case !state.Terminal(o.Status):
			moving[o.Status]++
		}
	}
	if len(moving) > 0 {
		var parts []string
		for k, v := range moving {
			parts = append(parts, fmt.Sprintf("%d %s", v, k))
		}
		return "orders on their way: " + strings.Join(parts, ", "), "", nil
	}
	listed, err := reviews.List(ctx, 0, 1<<20)
	if err != nil {
		return "", "", err
	}
	for _, rv := range listed {
		byCharge[rv.ChargeID] = true
	}
	var lost []string
	for _, c := range starCharges(fake.StarTransactions()) {
		if !byCharge[c.id] && c.refunds == 0 {
			lost = append(lost, c.id)
		}
	}
	return "", strings.Join(lost, ","), nil
}
