package reseller_test

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"

	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// listQueries records the query of every GET /orders the simulator serves.
func listQueries(sim *resellersim.Sim) func() []url.Values {
	var mu sync.Mutex
	var got []url.Values
	sim.OnRequest(func(r *http.Request, _ []byte) {
		if r.Method == http.MethodGet && r.URL.Path == resellersim.PathPrefix+"/orders" {
			mu.Lock()
			got = append(got, r.URL.Query())
			mu.Unlock()
		}
	})
	return func() []url.Values {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

func TestNewestOrderNumber(t *testing.T) {
	c, sim := simClient(t)
	ctx := t.Context()
	queries := listQueries(sim)

	if n, err := c.NewestOrderNumber(ctx, ""); err != nil || n != 0 {
		t.Fatalf("empty upstream: %d, %v; want 0", n, err)
	}
	gift, err := c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	key, err := c.CreateGameKeyOrder(ctx, &reseller.GameKeyOrderRequest{GameID: simcatalog.DemoGame, KeyID: simcatalog.DemoGameKey, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	if key.Number <= gift.Number {
		t.Fatalf("numbers do not grow: %d then %d", gift.Number, key.Number)
	}
	for _, tc := range []struct {
		typ  reseller.OrderType
		want int64
	}{
		{"", key.Number},
		{reseller.OrderTypeGiftCard, gift.Number},
		{"GAME_KEY", key.Number},
		{reseller.OrderTypeGameTopup, 0},
	} {
		if n, err := c.NewestOrderNumber(ctx, tc.typ); err != nil || n != tc.want {
			t.Errorf("NewestOrderNumber(%q) = %d, %v; want %d", tc.typ, n, err, tc.want)
		}
	}
	// One GET /orders?limit=1 per call, with the type filter in upper case.
	want := []url.Values{
		{"limit": {"1"}},
		{"limit": {"1"}},
		{"limit": {"1"}, "type": {"GIFT_CARD"}},
		{"limit": {"1"}, "type": {"GAME_KEY"}},
		{"limit": {"1"}, "type": {"GAME_TOPUP"}},
	}
	got := queries()
	if len(got) != len(want) {
		t.Fatalf("%d listings, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Encode() != want[i].Encode() {
			t.Errorf("listing %d: %s, want %s", i, got[i].Encode(), want[i].Encode())
		}
	}
	var ve *reseller.ValidationError
	if _, err := c.NewestOrderNumber(ctx, "NOT_A_TYPE"); !errors.As(err, &ve) || ve.Field != "type" {
		t.Errorf("unknown type: err = %v, want a *ValidationError on type", err)
	}
}

func TestOrdersAboveStopsAtTheWatermark(t *testing.T) {
	c, sim := simClient(t)
	ctx := t.Context()
	var numbers []int64 // oldest first
	for range 6 {
		o, err := c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
		if err != nil {
			t.Fatal(err)
		}
		numbers = append(numbers, o.Number)
	}
	queries := listQueries(sim)

	// Watermark = the second order: pages of 2 are [6 5] [4 3] [2 ...]; the
	// iterator yields 6..3 and stops at 2 without asking for a fourth page.
	var got []int64
	for o, err := range c.OrdersAbove(ctx, numbers[1], &reseller.OrdersOptions{Limit: 2, Type: reseller.OrderTypeGiftCard}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Number)
	}
	want := []int64{numbers[5], numbers[4], numbers[3], numbers[2]}
	if !slices.Equal(got, want) {
		t.Fatalf("OrdersAbove = %v, want %v", got, want)
	}
	if n := len(queries()); n != 3 {
		t.Errorf("%d pages fetched, want 3", n)
	}

	// Watermark = the newest order: nothing above it, one page.
	before := len(queries())
	for o, err := range c.OrdersAbove(ctx, numbers[5], nil) {
		t.Fatalf("yielded %d, %v above the newest order", o.Number, err)
	}
	if n := len(queries()) - before; n != 1 {
		t.Errorf("%d pages fetched, want 1", n)
	}

	// Breaking out of AllOrders stops the paging too.
	before = len(queries())
	seen := 0
	for _, err := range c.AllOrders(ctx, &reseller.OrdersOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen++; seen == 2 {
			break
		}
	}
	if n := len(queries()) - before; n != 2 {
		t.Errorf("AllOrders fetched %d pages after a break at the second order, want 2", n)
	}
}
