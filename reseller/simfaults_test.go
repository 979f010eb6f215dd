package reseller_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/simcatalog"
)

// The simulator's faults as the client sees them: what the placement
// protocol in bot/fulfil and its tests build on.

// faultClient is a client against a simulator configured by cfg; its waits
// are recorded and never slept.
type faultClient struct {
	c   *reseller.Client
	sim *resellersim.Sim

	mu     sync.Mutex
	sleeps []time.Duration
}

func newFaultClient(t *testing.T, cfg resellersim.Config) *faultClient {
	t.Helper()
	fc := &faultClient{}
	cfg.APIKey = "sim-key"
	fc.sim = resellersim.New(cfg)
	srv := httptest.NewServer(fc.sim)
	t.Cleanup(srv.Close)
	c, err := reseller.New(srv.URL+"/api/v1", "sim-key", reseller.WithSleep(func(ctx context.Context, d time.Duration) error {
		fc.mu.Lock()
		fc.sleeps = append(fc.sleeps, d)
		fc.mu.Unlock()
		return ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	fc.c = c
	return fc
}

func (fc *faultClient) sleepLog() []time.Duration {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return slices.Clone(fc.sleeps)
}

func pubg(player string) *reseller.TopUpOrderRequest {
	return &reseller.TopUpOrderRequest{CategoryID: simcatalog.DemoTopUpCategory, OfferID: simcatalog.DemoTopUpOffer,
		Fields: map[string]string{"player_id": player}}
}

// above lists the orders of typ above watermark, newest first.
func above(t *testing.T, c *reseller.Client, watermark int64, typ reseller.OrderType) []reseller.Order {
	t.Helper()
	var out []reseller.Order
	for o, err := range c.OrdersAbove(t.Context(), watermark, &reseller.OrdersOptions{Type: typ}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// A sequence placement must survive: a 429 with Retry-After 25s (nothing created) comes
// back at once, then a create that creates the order but answers 502 is
// outcome-unknown; the watermark taken before finds exactly that order.
func TestSimScripted429Then502ThatCreated(t *testing.T) {
	fc := newFaultClient(t, resellersim.Config{})
	ctx := t.Context()
	watermark, err := fc.c.NewestOrderNumber(ctx, reseller.OrderTypeGameTopup)
	if err != nil {
		t.Fatal(err)
	}
	fc.sim.ScriptCreates(faults.RateLimited(25*time.Second), faults.CreatedThenFail(http.StatusBadGateway))

	_, err = fc.c.CreateTopUpOrder(ctx, pubg("111"))
	var rl *reseller.RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 25*time.Second || reseller.IsOutcomeUnknown(err) {
		t.Fatalf("first create: %v, want a *RateLimitError with RetryAfter 25s", err)
	}
	if len(fc.sleepLog()) != 0 || len(fc.sim.Orders()) != 0 || fc.sim.CreateCount() != 1 {
		t.Fatalf("sleeps %v, upstream orders %d, creates %d", fc.sleepLog(), len(fc.sim.Orders()), fc.sim.CreateCount())
	}

	_, err = fc.c.CreateTopUpOrder(ctx, pubg("111"))
	if !reseller.IsOutcomeUnknown(err) || reseller.IsRateLimited(err) {
		t.Fatalf("second create: %v, want outcome unknown", err)
	}
	if fc.sim.CreateCount() != 2 {
		t.Fatalf("creates %d: the 502 was retried", fc.sim.CreateCount())
	}
	got := above(t, fc.c, watermark, reseller.OrderTypeGameTopup)
	if len(got) != 1 || int(got[0].Number) != fc.sim.Orders()[0].Number {
		t.Fatalf("orders above the watermark: %+v", got)
	}
	// The order object shows nothing of the in-game top-up request.
	for _, f := range []string{"category_id", "offer_id", "fields", "player_id"} {
		if raw, ok := got[0].RawField(f); ok {
			t.Errorf("the order object echoes %s=%s", f, raw)
		}
	}
}

// Ambiguous creates that did and did not create the order look the same to
// the client: each is outcome-unknown.
func TestSimAmbiguousCreates(t *testing.T) {
	for _, tc := range []struct {
		step          faults.CreateStep
		created, hang bool
	}{
		{step: faults.CreatedThenCut(), created: true},
		{step: faults.CreatedThenFail(http.StatusBadGateway), created: true},
		{step: faults.CreatedThenFail(http.StatusGatewayTimeout), created: true},
		{step: faults.CreatedThenHang(), created: true, hang: true},
		{step: faults.CutBeforeCreate()},
		{step: faults.RefusedWith(http.StatusBadGateway)},
		{step: faults.HangBeforeCreate(), hang: true},
	} {
		t.Run(tc.step.String(), func(t *testing.T) {
			fc := newFaultClient(t, resellersim.Config{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			arrived := make(chan struct{}, 1)
			fc.sim.OnRequest(func(*http.Request, []byte) { arrived <- struct{}{} })
			created := make(chan struct{}, 1)
			fc.sim.OnOrderCreated(func(resellersim.OrderSnapshot) { created <- struct{}{} })
			fc.sim.ScriptCreates(tc.step)
			done := make(chan error, 1)
			go func() {
				_, err := fc.c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
				done <- err
			}()
			<-arrived
			if tc.created {
				<-created
			}
			if tc.hang {
				// No answer comes: the caller gives up (a timeout in production)
				// once the simulator has the request and, if it creates, the order.
				cancel()
			}
			err := <-done
			if !reseller.IsOutcomeUnknown(err) {
				t.Fatalf("err = %v, want outcome unknown", err)
			}
			if n := len(fc.sim.Orders()); (n == 1) != tc.created || n > 1 {
				t.Fatalf("%d upstream orders, created %v", n, tc.created)
			}
			if fc.sim.CreateCount() != 1 {
				t.Fatalf("creates %d: an ambiguous create was retried", fc.sim.CreateCount())
			}
		})
	}
}

// A look-alike from another client of the account: same game and offer,
// another player. Nothing in the listing tells the two apart.
func TestSimLookAlikeTopUpIsIndistinguishable(t *testing.T) {
	fc := newFaultClient(t, resellersim.Config{})
	ctx := t.Context()
	watermark, err := fc.c.NewestOrderNumber(ctx, reseller.OrderTypeGameTopup)
	if err != nil {
		t.Fatal(err)
	}
	fc.sim.ScriptCreates(faults.CreatedThenCut())
	if _, err := fc.c.CreateTopUpOrder(ctx, pubg("111")); !reseller.IsOutcomeUnknown(err) {
		t.Fatalf("err = %v", err)
	}
	other, err := fc.sim.PlaceOtherClientOrder("/top-ups/order", pubg("222"))
	if err != nil {
		t.Fatal(err)
	}
	got := above(t, fc.c, watermark, reseller.OrderTypeGameTopup)
	if len(got) != 2 || int(got[0].Number) != other.Number {
		t.Fatalf("orders above the watermark: %+v", got)
	}
	a, b := got[0], got[1]
	if a.Type != b.Type || !a.ChargedUSD.Equal(b.ChargedUSD.Decimal) || a.Status != b.Status {
		t.Fatalf("look-alikes differ: %+v vs %+v", a, b)
	}
	// Only the simulator's store knows whose is whose.
	mine := fc.sim.Orders()[0]
	if mine.Fields["player_id"] != "111" || other.Fields["player_id"] != "222" {
		t.Fatalf("store: %v, %v", mine.Fields, other.Fields)
	}
}

// An upstream clock ten minutes behind: created_at and status_history are
// ten minutes before the shop's clock.
func TestSimClockOffsetSeenByTheClient(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fc := newFaultClient(t, resellersim.Config{Now: func() time.Time { return now }, ClockOffset: -10 * time.Minute})
	ctx := t.Context()
	o, err := fc.c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := now.Add(-10 * time.Minute)
	if !o.CreatedAt.Equal(want) {
		t.Fatalf("created_at %v, want %v", o.CreatedAt, want)
	}
	got, err := fc.c.Order(ctx, o.Number)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.StatusHistory) == 0 {
		t.Fatal("no status history")
	}
	for _, h := range got.StatusHistory {
		if !h.At.Equal(want) {
			t.Errorf("history %s at %v, want %v", h.Status, h.At, want)
		}
	}
}
