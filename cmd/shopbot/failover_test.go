//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
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
	"shopbot/state/statetest"
)

// TestFailoverPurchases runs replicas of the real shopbot binary on a
// Sentinel setup (TEST_REDIS_SENTINEL_URL) or a Redis Cluster
// (TEST_REDIS_CLUSTER_URL) while 100 buyers buy gift cards and top-ups,
// and fails the master over once a third of the purchases are paid:
// SENTINEL FAILOVER, or CLUSTER FAILOVER on the replica of the master that
// holds the order store. The replicas are not told: their clients find the
// new master. Then it checks the chaos run's invariants (every paid charge
// delivered or refunded exactly once, every upstream order claimed by
// exactly its own purchase, nothing stuck, the balance, every buyer's own
// codes) and that no buyer was left waiting on an update the shop had
// acknowledged. FAILOVER_PURCHASES sets the purchases (default 150); the
// test is skipped without one of the two URLs. It uses the deployment's
// shopbot:v1: keys, which it removes before and after.
func TestFailoverPurchases(t *testing.T) {
	target, ok := statetest.Endpoint()
	if !ok || target.Mode == statetest.ModeSingle {
		t.Skip("needs TEST_REDIS_SENTINEL_URL or TEST_REDIS_CLUSTER_URL (.ci/redis-ha.sh)")
	}
	purchases := 150
	if v := os.Getenv("FAILOVER_PURCHASES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("FAILOVER_PURCHASES=%q is not a positive number", v)
		}
		purchases = n
	}
	const buyers, replicas = 100, 2
	seed := rand.Uint64() % 1_000_000
	t.Logf("failover: %s, %d purchases, %d buyers, %d replicas, seed %d", target.Mode, purchases, buyers, replicas, seed)

	rdb := statetest.Connect(t, target)
	defer rdb.Close()
	clean := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		statetest.DeletePrefix(ctx, rdb, redisstore.DefaultPrefix)
	}
	clean()
	defer clean()

	bin := buildShopbot(t, t.TempDir())
	logDir := t.TempDir()
	startBalance := decimal.NewFromInt(1_000_000)
	sim := resellersim.New(resellersim.Config{APIKey: "failover-upstream-key", Seed: int64(seed), Balance: startBalance})
	for _, id := range []string{"apple-us-10", "apple-us-2"} {
		if !sim.SetStock(id, 1_000_000) {
			t.Fatalf("the simulator has no gift card %s", id)
		}
	}
	slow := resellersim.Behavior{Mode: resellersim.Complete, ProcessingAfter: 300 * time.Millisecond, CompleteAfter: time.Second}
	sim.SetBehavior(resellersim.LineGiftCard, slow)
	sim.SetBehavior(resellersim.LineGameTopup, slow)
	upstream := httptest.NewServer(sim)
	defer upstream.Close()

	const token = "100200:FAILOVER-fake-bot-api-token-not-real"
	var violations violationLog
	fake, err := botapitest.New(botapitest.WithToken(token),
		botapitest.WithBotUser(types.User{FirstName: "Failover Shop", Username: "failover_shop_bot"}),
		botapitest.OnViolation(violations.add))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()

	redisVar := map[string]string{statetest.ModeSentinel: "REDIS_SENTINEL_URL", statetest.ModeCluster: "REDIS_CLUSTER_URL"}[target.Mode]
	secret := randomHex(16)
	const webhookPath = "/telegram/webhook"
	env := []string{
		"TELEGRAM_TOKEN=" + token,
		"TELEGRAM_API_URL=" + fake.URL(),
		"RESELLER_BASE_URL=" + upstream.URL + "/api/v1",
		"RESELLER_API_KEY=failover-upstream-key",
		redisVar + "=" + target.URL,
		"PAYMENT_METHODS=stars",
		"WEBHOOK_URL=https://shop.failover.invalid" + webhookPath,
		"WEBHOOK_SECRET=" + secret,
		"LOG_LEVEL=info",
		"TZ=UTC",
	}
	cl := newCluster(t, bin, logDir, replicas, env, "")
	defer cl.stopGracefully()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 60*time.Second)
	if err := cl.startAll(startCtx); err != nil {
		startCancel()
		t.Fatal(err)
	}
	startCancel()

	feedCtx, stopFeed := context.WithCancel(ctx)
	feed := newWebhookFeed(fake, cl.ports(), webhookPath, secret, 0)
	feedDone := make(chan struct{})
	go func() { feed.run(feedCtx); close(feedDone) }()
	defer func() { stopFeed(); <-feedDone }()

	sh := newShoppers(fake, purchases, t.Logf, os.Getenv("CHAOS_DEBUG") != "")
	var wg sync.WaitGroup
	failoverErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for sh.paid.Load() < int64(purchases/3) {
			if !sleepCtx(ctx, 50*time.Millisecond) { // poll the buyers' progress
				failoverErr <- ctx.Err()
				return
			}
		}
		what, err := failOver(ctx, target, rdb)
		if err == nil {
			t.Logf("failover at %d paid: %s", sh.paid.Load(), what)
		}
		failoverErr <- err
	}()
	loadStart := time.Now()
	loadCtx, loadCancel := context.WithTimeout(ctx, 5*time.Minute)
	sh.run(loadCtx, buyers, 7_000_000_001, seed)
	loadTimedOut := loadCtx.Err() != nil
	loadCancel()
	wg.Wait()
	if err := <-failoverErr; err != nil {
		t.Fatalf("failover: %v", err)
	}
	loadTime := time.Since(loadStart)
	if loadTimedOut {
		t.Errorf("the buyers paid only %d of %d times within 5 minutes", sh.paid.Load(), purchases)
	}

	orders := records.NewOrders(rdb, redisstore.DefaultPrefix)
	queue := intake.NewQueue(rdb, redisstore.DefaultPrefix)
	settleStart := time.Now()
	settled, why := settle(ctx, 3*time.Minute, fake, queue, orders, records.NewChargeReviews(rdb, redisstore.DefaultPrefix), false)
	if !settled {
		t.Errorf("not settled after 3m: %s", why)
	}
	settleTime := time.Since(settleStart)
	cl.stopGracefully()
	stopFeed()
	<-feedDone

	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	w, err := gather(rctx, fake, sim, orders, records.NewChargeReviews(rdb, redisstore.DefaultPrefix), sh, time.Time{})
	if err != nil {
		t.Fatalf("read the outcome: %v", err)
	}
	kills, crashes := cl.counts()
	rep := checkChaos(w, startBalance, time.Minute)
	rep.run = runFigures{
		seed: seed, replicas: replicas, buyers: buyers, load: loadTime, settle: settleTime, settled: settled,
		kills: kills, crashes: crashes, deliveries: feed.delivered.Load(), failedDeliveries: feed.failures.Load(),
		attempts: sh.attempts.Load(), abandoned: sh.abandoned.Load(), declined: sh.declined.Load(),
		noInvoice: sh.noInvoice.Load(), payTimeouts: sh.payErrors.Load(), stuckAt: sh.stuckAtCopy(),
		declines: sh.declinesCopy(), violations: violations.count(),
	}
	t.Log("failover: figures\n" + rep.String())
	if n := violations.count(); n > 0 {
		t.Errorf("%d Bot API schema violations by the bot, first: %v", n, violations.first())
	}
	if crashes > 0 {
		t.Errorf("%d replicas exited on their own during the failover (logs in %s)", crashes, logDir)
	}
	// An update the shop acknowledged and then lost leaves its buyer
	// waiting for a screen that never comes.
	if n := sh.abandoned.Load(); n > 0 {
		t.Errorf("%d purchases abandoned: a screen never came (%v)", n, sh.stuckAtCopy())
	}
	for _, f := range rep.failures() {
		t.Error(f)
	}
}

// failOver fails over the master of the order store: through the sentinel
// (SENTINEL FAILOVER), or on a cluster by CLUSTER FAILOVER on that
// master's replica. It returns once the new master answers as one.
func failOver(ctx context.Context, target statetest.Target, rdb redis.UniversalClient) (string, error) {
	role := func(addr string) (string, bool) {
		c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second})
		defer c.Close()
		r, err := c.Do(ctx, "ROLE").Slice()
		if err != nil || len(r) == 0 {
			return "", false
		}
		name, _ := r[0].(string)
		if name == "slave" && len(r) >= 4 {
			st, _ := r[3].(string)
			return name, st == "connected"
		}
		return name, name == "master"
	}
	until := func(what string, cond func() bool) error {
		for deadline := time.Now().Add(30 * time.Second); !cond(); {
			if time.Now().After(deadline) {
				return fmt.Errorf("timed out waiting for %s", what)
			}
			if !sleepCtx(ctx, 50*time.Millisecond) { // poll
				return ctx.Err()
			}
		}
		return nil
	}
	if target.Mode == statetest.ModeSentinel {
		o, err := redisstore.ParseSentinelURL(target.URL)
		if err != nil {
			return "", err
		}
		sc := redis.NewSentinelClient(&redis.Options{Addr: o.SentinelAddrs[0]})
		defer sc.Close()
		master := func() string {
			a, err := sc.GetMasterAddrByName(ctx, o.MasterName).Result()
			if err != nil || len(a) != 2 {
				return ""
			}
			return a[0] + ":" + a[1]
		}
		before := master()
		if err := sc.Failover(ctx, o.MasterName).Err(); err != nil {
			return "", fmt.Errorf("SENTINEL FAILOVER: %w", err)
		}
		var after string
		err = until("a new master", func() bool {
			after = master()
			r, _ := role(after)
			return after != before && after != "" && r == "master"
		})
		return "sentinel master " + before + " -> " + after, err
	}
	cc := rdb.(*redis.ClusterClient)
	key := records.NewOrders(rdb, redisstore.DefaultPrefix).KeyOf(1)
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return "", err
	}
	master := m.Options().Addr
	shards, err := cc.ClusterShards(ctx).Result()
	if err != nil {
		return "", err
	}
	var replica string
	for _, sh := range shards {
		var isOurs bool
		var rep string
		for _, n := range sh.Nodes {
			addr := n.IP + ":" + strconv.Itoa(int(n.Port))
			if n.Role == "master" && addr == master {
				isOurs = true
			}
			if n.Role != "master" && n.Health == "online" {
				rep = addr
			}
		}
		if isOurs {
			replica = rep
		}
	}
	if replica == "" {
		return "", fmt.Errorf("master %s of the order store has no online replica", master)
	}
	if err := until("the replica's link", func() bool { r, up := role(replica); return r == "slave" && up }); err != nil {
		return "", err
	}
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	if err := rc.ClusterFailover(ctx).Err(); err != nil {
		return "", fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica, err)
	}
	err = until("the replica to take over", func() bool { r, _ := role(replica); return r == "master" })
	return fmt.Sprintf("cluster: the order store's master %s -> %s (%s)", master, replica, strings.TrimPrefix(key, redisstore.DefaultPrefix)), err
}
