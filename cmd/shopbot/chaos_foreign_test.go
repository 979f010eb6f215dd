//go:build linux

package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/reseller/resellersim"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"
)

// runForeignShop runs another shop before the chaos run: the same bot
// token and the same journal directory, but a Redis database and an
// upstream account of its own, as a staging copy of the shop with the
// production token would, or the same shop before it moved to a new Redis
// and a new upstream key. Its buyers make n purchases (with the same chat
// ids, charge ids and upstream order numbers the chaos run's fakes will
// hand out again), then it stops. Its journal stays in journalDir: the
// chaos run's replicas must never apply it to their own store.
func runForeignShop(t *testing.T, bin, logDir, redisURL string, db int, token, journalDir string, n int) {
	t.Helper()
	cr := openChaosRedis(t, redisURL, db)
	sim := resellersim.New(resellersim.Config{APIKey: "foreign-upstream-key", Seed: 99, Balance: decimal.NewFromInt(1_000_000)})
	for _, id := range []string{"apple-us-10", "apple-us-2"} {
		sim.SetStock(id, 1_000_000)
	}
	upstream := httptest.NewServer(sim)
	defer upstream.Close()
	fake, err := botapitest.New(botapitest.WithToken(token),
		botapitest.WithBotUser(types.User{FirstName: "Chaos Shop (staging)", Username: "chaos_shop_bot"}))
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
		"RESELLER_API_KEY=foreign-upstream-key",
		"REDIS_URL=" + cr.url,
		"PAYMENT_METHODS=stars",
		"WEBHOOK_URL=https://staging.chaos.invalid" + webhookPath,
		"WEBHOOK_SECRET=" + secret,
		"JOURNAL_DIR=" + journalDir,
		"TZ=UTC",
	}
	cl := newCluster(t, bin, logDir, 1, env, "foreign-")
	defer cl.stopGracefully()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := cl.startAll(ctx); err != nil {
		t.Fatalf("chaos: the foreign shop: %v", err)
	}
	feedCtx, stopFeed := context.WithCancel(ctx)
	feed := newWebhookFeed(fake, cl.ports(), webhookPath, secret, 0)
	feedDone := make(chan struct{})
	go func() { feed.run(feedCtx); close(feedDone) }()
	defer func() { stopFeed(); <-feedDone }()
	sh := newShoppers(fake, n, func(string, ...any) {}, false)
	sh.run(ctx, min(n, 10), 6_000_000_001, 1)
	orders := records.NewOrders(cr.rdb, redisstore.DefaultPrefix)
	if ok, why := settle(ctx, 2*time.Minute, fake, intake.NewQueue(cr.rdb, redisstore.DefaultPrefix), orders, records.NewChargeReviews(cr.rdb, redisstore.DefaultPrefix), false); !ok {
		t.Fatalf("chaos: the foreign shop did not settle: %s", why)
	}
	all, err := orders.List(ctx, 0, 1<<30, state.OrderFilter{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chaos: a foreign shop (same token, same journal directory %s, its own Redis database %d and upstream account) made %d paid purchases, %d orders, %d upstream orders",
		journalDir, db, sh.paid.Load(), len(all), len(sim.Orders()))
	if sh.paid.Load() < int64(n) {
		t.Fatalf("chaos: the foreign shop's buyers paid %d of %d times", sh.paid.Load(), n)
	}
}
