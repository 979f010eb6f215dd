package checkout_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"shopbot/state"
)

// Replicas of an older build run beside a newer one during an upgrade. A
// payment the older one does not understand (an invoice of a kind it does
// not know, a top-up or quote a newer build recorded) is never refunded,
// credited or turned into an order by it, neither from its update nor by
// its sweep; its pre-checkout is declined (no money moves). A replica that
// reads it settles it.
func TestPaymentsOfANewerVersionAreNeverRefundedByAnOlderOne(t *testing.T) {
	s := newTopupShop(t, nil)
	s.startedSweep()
	ctx := context.Background()
	newer := strconv.Itoa(state.TopupVersion + 1)

	// A wallet top-up a newer build recorded.
	tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
	key := s.Rdb.Prefix + "{wallet:" + itoa(chat) + "}:topup:" + tp.ID
	if err := s.Rdb.Client.HSet(ctx, key, "v", newer).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, why := s.preCheckout(chat, "w:"+tp.ID, 770); ok || why == "" {
		t.Fatalf("pre-checkout of a newer top-up answered ok=%v %q", ok, why)
	}
	topupCharge := s.Fake.PushSuccessfulPayment(chat, "w:"+tp.ID, 770, "")
	// An invoice of a kind this build does not know.
	otherCharge := s.Fake.PushSuccessfulPayment(chat, "g:a-gift-of-a-newer-build", 500, "")
	// A quote a newer build stored.
	q := &state.Quote{Line: "giftcards", Item: "apple-us-10", ItemName: "Apple 10", Quantity: 1, UpstreamUSD: usd("10"), ShopUSD: usd("11"),
		Stars: 850, ChatID: chat, UserID: chat, Created: time.Now(), Expires: time.Now().Add(time.Hour)}
	if err := s.pay.Quotes.Save(ctx, q); err != nil {
		t.Fatal(err)
	}
	doc, _ := s.Rdb.Client.Get(ctx, s.Rdb.Prefix+"quote:"+q.ID).Result()
	if err := s.Rdb.Client.Set(ctx, s.Rdb.Prefix+"quote:"+q.ID, strings.Replace(doc, `"v":1,`, `"v":2,`, 1), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	quoteCharge := s.Fake.PushSuccessfulPayment(chat, "q:"+q.ID, 850, "")
	s.Idle(s.b)
	for range 2 {
		if n := s.sweep(); n != 0 {
			t.Fatalf("the sweep settled %d payments of a newer version", n)
		}
	}
	for _, c := range []string{topupCharge, otherCharge, quoteCharge} {
		if s.Fake.Refunded(c) {
			t.Fatalf("charge %s refunded by a build that does not understand it", c)
		}
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 0 {
		t.Fatalf("%d refund calls", n)
	}
	if !s.balance(chat).IsZero() || s.topupCredits(chat) != 0 {
		t.Fatalf("a newer top-up credited by an older build: balance %s", s.balance(chat))
	}
	if d, _ := s.pay.Wallets.TopupRefundDecided(ctx, chat, topupCharge); d != "" {
		t.Fatalf("a refund decided for a newer top-up: %s", d)
	}
	if _, err := s.pay.Orders.ByCharge(ctx, quoteCharge); err == nil {
		t.Fatal("an order made from a newer quote")
	}
	for payload, want := range map[string]bool{"w:" + tp.ID: false, "q:" + q.ID: false, "g:x": false, "q:gone": true, "w:" + itoa(chat) + "-gone": true} {
		if got, err := s.pay.Understands(ctx, payload); err != nil || got != want {
			t.Fatalf("Understands(%s) = %v, %v; want %v", payload, got, err, want)
		}
	}

	// A build that reads the top-up settles it: its sweep credits it once.
	if err := s.Rdb.Client.HSet(ctx, key, "v", strconv.Itoa(state.TopupVersion)).Err(); err != nil {
		t.Fatal(err)
	}
	// The test's sweep settles it, unless the bot's own sweep (kicked by
	// the payments it left) came first: either way, once.
	s.sweep()
	s.waitBalance(chat, "10")
	s.sweep()
	if n := s.topupCredits(chat); n != 1 || !s.balance(chat).Equal(usd("10")) {
		t.Fatalf("the top-up credited %d times, balance %s", n, s.balance(chat))
	}
	if s.Fake.Refunded(topupCharge) {
		t.Fatal("refunded")
	}
}
