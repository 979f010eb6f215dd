package records_test

import (
	"errors"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/statetest"
)

func TestQuoteRoundTripAndExpiry(t *testing.T) {
	r := statetest.New(t)
	qs := records.NewQuotes(r.Client, r.Prefix)
	now := time.Now()
	q := &state.Quote{Line: "stars", Item: "stars", Fields: map[string]string{"username": "durov"}, Quantity: 100,
		UpstreamUSD: decimal.RequireFromString("1.50"), ShopUSD: decimal.RequireFromString("1.65"), Stars: 127,
		ChatID: 7, UserID: 7, Created: now, Expires: now.Add(15 * time.Minute)}
	if err := qs.Save(t.Context(), q); err != nil || q.ID == "" {
		t.Fatalf("save: %v id=%q", err, q.ID)
	}
	got, err := qs.Load(t.Context(), q.ID)
	if err != nil || got.Stars != 127 || !got.ShopUSD.Equal(q.ShopUSD) || got.Fields["username"] != "durov" {
		t.Fatalf("load: %+v %v", got, err)
	}
	if got.Expired(now) || !got.Expired(now.Add(15*time.Minute)) {
		t.Fatal("expiry is judged from Expires")
	}
	if _, err := qs.Load(t.Context(), "nope"); !errors.Is(err, state.ErrNoQuote) {
		t.Fatalf("missing quote: %v", err)
	}
}

func TestLimiterAllowsLimitPerWindow(t *testing.T) {
	r := statetest.New(t)
	l := redisstore.NewLimiter(r.Client, r.Prefix, 3, time.Minute)
	for i := range 3 {
		if ok, _, err := l.Allow(t.Context(), "u1"); !ok || err != nil {
			t.Fatalf("action %d refused: %v", i+1, err)
		}
	}
	ok, wait, err := l.Allow(t.Context(), "u1")
	if ok || err != nil || wait <= 0 || wait > time.Minute {
		t.Fatalf("fourth action: ok=%v wait=%v err=%v", ok, wait, err)
	}
	if ok, _, _ := l.Allow(t.Context(), "u2"); !ok {
		t.Fatal("another buyer is limited separately")
	}
	if r.Mini != nil {
		r.Mini.FastForward(time.Minute)
		if ok, _, _ := l.Allow(t.Context(), "u1"); !ok {
			t.Fatal("a new window allows again")
		}
	}
}

// A quote keeps the newest upstream number the store had seen when it was
// saved: the order made from it later looks above that, not above what is
// newest then. A number set before is kept on a save again.
func TestQuoteSavedWithTheUpstreamWatermarkOfItsTime(t *testing.T) {
	r := statetest.New(t)
	qs := records.NewQuotes(r.Client, r.Prefix)
	orders := records.NewOrders(r.Client, r.Prefix)
	now := time.Now()
	fresh := func() *state.Quote {
		return &state.Quote{Line: "giftcards", Item: "apple-us-10", Quantity: 1, UpstreamUSD: decimal.NewFromInt(10),
			ShopUSD: decimal.NewFromInt(11), Stars: 846, ChatID: 7, UserID: 7, Created: now, Expires: now.Add(15 * time.Minute)}
	}
	q := fresh()
	if err := qs.Save(t.Context(), q); err != nil || q.Watermark != 0 {
		t.Fatalf("save on a store that has seen no upstream order: watermark %d, %v", q.Watermark, err)
	}
	if err := orders.NoteUpstream(t.Context(), 1041); err != nil {
		t.Fatal(err)
	}
	q = fresh()
	if err := qs.Save(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	if err := orders.NoteUpstream(t.Context(), 1077); err != nil {
		t.Fatal(err)
	}
	if err := qs.Save(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	got, err := qs.Load(t.Context(), q.ID)
	if err != nil || got.Watermark != 1041 {
		t.Fatalf("watermark %d (%v), want 1041, the newest seen when the quote was first saved", got.Watermark, err)
	}
}
