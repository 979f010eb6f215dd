package upstreamorder_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/bot/upstreamorder"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// simulator starts the upstream simulator and a client of it.
func simulator(t *testing.T) (*resellersim.Sim, *reseller.Client) {
	t.Helper()
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	return sim, client
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCreateEveryLine: a quote of every line becomes a create on its
// line's endpoint, and the upstream order it makes matches the request.
func TestCreateEveryLine(t *testing.T) {
	_, client := simulator(t)
	ctx := context.Background()
	for _, q := range []state.Quote{
		{Line: "giftcards", Category: simcatalog.DemoGiftCategory, Item: simcatalog.DemoGiftCard, Quantity: 2},
		{Line: "keys", Category: simcatalog.DemoGame, Item: simcatalog.DemoGameKey, Quantity: 1},
		{Line: "stars", Item: "stars", Fields: map[string]string{"username": "@Durov"}, Quantity: 100},
		{Line: "premium", Item: "3", Fields: map[string]string{"username": "durov"}, Quantity: 1},
		{Line: "topup", Fields: map[string]string{"store_login": "gaben", "currency": "USD", "amount": "5"}, Quantity: 1},
		{Line: "services", Category: simcatalog.DemoManualServiceNoChat, Item: simcatalog.DemoManualOfferNoChat,
			Fields: map[string]string{"trade_url": "https://steamcommunity.com/tradeoffer/new/?partner=1&token=x"}, Quantity: 1},
		{Line: "gifts", Category: itoa(simcatalog.DemoStoreApp), Item: itoa(simcatalog.DemoStoreSub),
			Fields: map[string]string{"region": "US", "invite_url": "https://s.team/p/abc-def/XYZ"}, Quantity: 1},
		{Line: "games", Category: simcatalog.DemoTopUpCategory, Item: simcatalog.DemoTopUpOffer,
			Fields: map[string]string{"player_id": "5123456789"}, Quantity: 1},
	} {
		t.Run(q.Line, func(t *testing.T) {
			r, err := upstreamorder.Build(&q)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != upstreamorder.TypeOf(q.Line) {
				t.Fatalf("type %s, the line's is %s", r.Type, upstreamorder.TypeOf(q.Line))
			}
			up, err := upstreamorder.Create(ctx, client, r)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if !up.Type.Is(r.Type) {
				t.Fatalf("created a %s order", up.Type)
			}
			if m := r.Match(up); m != upstreamorder.FullMatch {
				t.Fatalf("the created order matches as %d: %s", m, up.Raw)
			}
		})
	}
	if _, err := upstreamorder.Create(ctx, client, &upstreamorder.Request{Type: "nope"}); err == nil {
		t.Fatal("a request of an unknown type was sent")
	}
}

func TestRepriceEveryLine(t *testing.T) {
	sim, client := simulator(t)
	ctx := context.Background()
	app := itoa(simcatalog.DemoStoreApp)
	for _, tc := range []struct {
		q    state.Quote
		item string // the simulator's id for SetPrice
	}{
		{state.Quote{Line: "giftcards", Item: simcatalog.DemoGiftCard, Category: simcatalog.DemoGiftCategory, Quantity: 3}, simcatalog.DemoGiftCard},
		{state.Quote{Line: "keys", Item: simcatalog.DemoGameKey, Category: simcatalog.DemoGame, Quantity: 2}, simcatalog.DemoGameKey},
		{state.Quote{Line: "stars", Item: "stars", Quantity: 500}, "stars"},
		{state.Quote{Line: "premium", Item: "3", Quantity: 1}, "premium-3"},
		{state.Quote{Line: "games", Item: simcatalog.DemoTopUpOffer, Category: simcatalog.DemoTopUpCategory, Quantity: 1}, simcatalog.DemoTopUpOffer},
		{state.Quote{Line: "services", Item: simcatalog.DemoManualOffer, Category: simcatalog.DemoManualService, Quantity: 1}, simcatalog.DemoManualOffer},
		{state.Quote{Line: "gifts", Item: itoa(simcatalog.DemoStoreSub), Category: app, Fields: map[string]string{"region": "TR"}, Quantity: 1}, itoa(simcatalog.DemoStoreSub) + ":TR"},
		{state.Quote{Line: "topup", Item: "USD", Fields: map[string]string{"currency": "USD", "amount": "12.50"}, Quantity: 1}, ""},
	} {
		t.Run(tc.q.Line, func(t *testing.T) {
			first, err := upstreamorder.Reprice(ctx, client, &tc.q)
			if err != nil || !first.UpstreamUSD.IsPositive() {
				t.Fatalf("reprice: %+v %v", first, err)
			}
			if tc.item == "" {
				if !first.UpstreamUSD.Equal(decimal.RequireFromString("12.5")) {
					t.Fatalf("USD top-up priced %s", first.UpstreamUSD)
				}
				return
			}
			if !sim.SetPrice(tc.item, decimal.RequireFromString("0.77")) {
				t.Fatalf("no item %s in the simulator", tc.item)
			}
			again, err := upstreamorder.Reprice(ctx, client, &tc.q)
			want := decimal.RequireFromString("0.77").Mul(decimal.NewFromInt(int64(tc.q.Quantity)))
			if err != nil || !again.UpstreamUSD.Equal(want) {
				t.Fatalf("after a price change: %+v %v, want %s", again, err, want)
			}
		})
	}
	if _, err := upstreamorder.Reprice(ctx, client, &state.Quote{Line: "giftcards", Item: "nope", Category: simcatalog.DemoGiftCategory, Quantity: 1}); !reseller.IsNotFound(err) {
		t.Fatalf("a gone card: %v", err)
	}
	if _, err := upstreamorder.Reprice(ctx, client, &state.Quote{Line: "nope"}); err == nil {
		t.Fatal("a quote of an unknown line was re-priced")
	}
}
