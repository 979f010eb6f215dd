package records_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state/redisstore/records"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/statetest"
)

func newOrders(t *testing.T) (*statetest.Redis, *records.Orders) {
	t.Helper()
	r := statetest.New(t)
	return r, records.NewOrders(r.Client, r.Prefix)
}

func paidOrder(user int64, quote, charge string) *state.Order {
	return &state.Order{
		QuoteID: quote, ChatID: user, UserID: user, Lang: "en", Line: "giftcards",
		Item:        json.RawMessage(`{"product":"steam-20"}`),
		Request:     json.RawMessage(`{"product_id":7,"quantity":1}`),
		Signature:   "giftcard|steam-20|1",
		UpstreamUSD: decimal.RequireFromString("19.5000"),
		ShopUSD:     decimal.RequireFromString("21.47"),
		Stars:       1100, PayMethod: state.PayStars, ChargeID: charge,
	}
}

func mustCreatePaid(t *testing.T, s *records.Orders, o *state.Order) *state.Order {
	t.Helper()
	got, dup, err := s.CreatePaid(t.Context(), o)
	if err != nil || dup {
		t.Fatalf("CreatePaid: dup=%v err=%v", dup, err)
	}
	return got
}

func TestOrderCreatePaidStoresAndIndexes(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	o := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	if o.ID != 1 || o.Status != state.OrderPaid || o.Rev != 1 || len(o.History) != 1 {
		t.Fatalf("created %+v", o)
	}
	o2 := mustCreatePaid(t, s, paidOrder(42, "q2", "ch2"))
	if o2.ID != 2 {
		t.Fatalf("second id %d", o2.ID)
	}
	for name, get := range map[string]func() (*state.Order, error){
		"Get":      func() (*state.Order, error) { return s.Get(ctx, 1) },
		"ByCharge": func() (*state.Order, error) { return s.ByCharge(ctx, "ch1") },
		"ByQuote":  func() (*state.Order, error) { return s.ByQuote(ctx, "q1") },
	} {
		got, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.ID != 1 || got.ChargeID != "ch1" || !got.ShopUSD.Equal(decimal.RequireFromString("21.47")) ||
			string(got.Item) != `{"product":"steam-20"}` {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if _, err := s.Get(ctx, 99); !errors.Is(err, state.ErrOrderNotFound) {
		t.Errorf("Get(99) = %v, want ErrOrderNotFound", err)
	}
	if _, err := s.ByUpstream(ctx, 5000); !errors.Is(err, state.ErrOrderNotFound) {
		t.Errorf("ByUpstream(5000) = %v, want ErrOrderNotFound", err)
	}
}

func TestDuplicateSuccessfulPaymentIsANoOp(t *testing.T) {
	_, s := newOrders(t)
	first := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	again, dup, err := s.CreatePaid(t.Context(), paidOrder(42, "q1", "ch1"))
	if err != nil || !dup || again.ID != first.ID || again.Rev != 1 {
		t.Fatalf("second CreatePaid: %+v dup=%v err=%v", again, dup, err)
	}
	ids, _ := s.Unfinished(t.Context())
	if len(ids) != 1 {
		t.Fatalf("unfinished %v, want one order", ids)
	}
}

func TestSecondChargeForAPaidQuoteIsRefused(t *testing.T) {
	_, s := newOrders(t)
	first := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	got, dup, err := s.CreatePaid(t.Context(), paidOrder(42, "q1", "ch2"))
	if !errors.Is(err, state.ErrQuoteAlreadyPaid) || dup || got == nil || got.ID != first.ID || got.ChargeID != "ch1" {
		t.Fatalf("second charge: %+v dup=%v err=%v", got, dup, err)
	}
	if _, err := s.ByCharge(t.Context(), "ch2"); !errors.Is(err, state.ErrOrderNotFound) {
		t.Fatalf("the refused charge was indexed: %v", err)
	}
}

func TestOrderLifecycleHappyPath(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	o := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	o, err := s.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, func(o *state.Order) error {
		o.AttemptID, o.Attempts, o.PlacingAt = "a1", 1, time.Now()
		return nil
	}, "attempt a1")
	if err != nil || o.Status != state.OrderPlacing || o.Rev != 2 || o.AttemptID != "a1" {
		t.Fatalf("placing: %+v %v", o, err)
	}
	o, err = s.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderPlacing, func(o *state.Order) error {
		o.AttemptID, o.Attempts = "a2", 2
		return nil
	}, "retry after grace period")
	if err != nil || o.Attempts != 2 {
		t.Fatalf("second attempt: %+v %v", o, err)
	}
	o, err = s.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderPlaced, func(o *state.Order) error {
		o.UpstreamNumber, o.UpstreamStatus = 1006, "processing"
		return nil
	}, "")
	if err != nil || o.UpstreamNumber != 1006 {
		t.Fatalf("placed: %+v %v", o, err)
	}
	if got, err := s.ByUpstream(ctx, 1006); err != nil || got.ID != o.ID {
		t.Fatalf("ByUpstream: %+v %v", got, err)
	}
	o, err = s.Transition(ctx, o.ID, []string{state.OrderPlaced}, state.OrderDelivered, func(o *state.Order) error {
		o.Codes, o.ChargedUSD = []string{"AAAA-BBBB"}, decimal.RequireFromString("19.5")
		return nil
	}, "")
	if err != nil || o.Status != state.OrderDelivered {
		t.Fatalf("delivered: %+v %v", o, err)
	}
	got, _ := s.Get(ctx, o.ID)
	var steps []string
	for _, h := range got.History {
		steps = append(steps, h.From+">"+h.To)
	}
	want := "[quoted>paid paid>placing placing>placing placing>placed placed>delivered]"
	if fmt.Sprint(steps) != want || got.Rev != 5 || got.Codes[0] != "AAAA-BBBB" {
		t.Fatalf("history %v rev %d, want %s rev 5", steps, got.Rev, want)
	}
	if ids, _ := s.Unfinished(ctx); len(ids) != 0 {
		t.Fatalf("delivered order still unfinished: %v", ids)
	}
	// Terminal: a delivered order may only record buyer notifications.
	if _, err := s.Transition(ctx, o.ID, []string{state.OrderDelivered}, state.OrderDelivered, func(o *state.Order) error {
		o.DeliveredAt, o.NotifiedStatus = time.Now(), state.OrderDelivered
		return nil
	}, ""); err != nil {
		t.Fatalf("delivered bookkeeping: %v", err)
	}
}

func TestIllegalTransitionIsRefused(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	o := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	cases := []struct {
		name string
		from []string
		to   string
		want error
	}{
		{"paid straight to delivered", []string{state.OrderPaid}, state.OrderDelivered, state.ErrIllegalTransition},
		{"paid to refunded without refunding", []string{state.OrderPaid}, state.OrderRefunded, state.ErrIllegalTransition},
		{"out of delivered", []string{state.OrderDelivered}, state.OrderRefunding, state.ErrIllegalTransition},
		{"out of refunded", []string{state.OrderRefunded}, state.OrderPlacing, state.ErrIllegalTransition},
		{"back to paid", []string{state.OrderPlacing}, state.OrderPaid, state.ErrIllegalTransition},
		{"no from", nil, state.OrderPlacing, state.ErrIllegalTransition},
		{"unknown status", []string{state.OrderPaid}, "shipped", state.ErrIllegalTransition},
		{"not in the expected status", []string{state.OrderPlacing}, state.OrderPlaced, state.ErrBadTransition},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Transition(ctx, o.ID, c.from, c.to, nil, "")
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			var te *state.TransitionError
			if !errors.As(err, &te) {
				t.Fatalf("err %T is not a *TransitionError", err)
			}
		})
	}
	if got, _ := s.Get(ctx, o.ID); got.Status != state.OrderPaid || got.Rev != 1 {
		t.Fatalf("refused transitions changed the order: %+v", got)
	}
	if _, err := s.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, func(o *state.Order) error {
		o.ChargeID = "other"
		return nil
	}, ""); err == nil {
		t.Fatal("mutate changed the charge id and was saved")
	}
	if _, err := s.Transition(ctx, 404, []string{state.OrderPaid}, state.OrderPlacing, nil, ""); !errors.Is(err, state.ErrOrderNotFound) {
		t.Fatalf("missing order: %v", err)
	}
}

func TestConcurrentTransitionsExactlyOneWins(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	for round := range 10 {
		o := mustCreatePaid(t, s, paidOrder(42, fmt.Sprint("q", round), fmt.Sprint("ch", round)))
		const n = 2
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = s.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, func(o *state.Order) error {
					o.AttemptID = fmt.Sprint("worker", i)
					return nil
				}, "")
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, state.ErrBadTransition):
				t.Fatalf("loser got %v, want ErrBadTransition", err)
			}
		}
		got, _ := s.Get(ctx, o.ID)
		if wins != 1 || got.Rev != 2 || len(got.History) != 2 {
			t.Fatalf("round %d: %d winners, rev %d, history %d", round, wins, got.Rev, len(got.History))
		}
	}
}

func TestConcurrentFieldUpdatesAreAllKept(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	o := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	if _, err := s.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, nil, ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := s.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderPlacing, func(o *state.Order) error {
				o.Attempts++
				return nil
			}, ""); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, _ := s.Get(ctx, o.ID); got.Attempts != 4 || got.Rev != 6 {
		t.Fatalf("attempts %d rev %d, want 4 and 6: a revision race lost an update", got.Attempts, got.Rev)
	}
}

func TestUpstreamNumberClaimedOnce(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	a := mustCreatePaid(t, s, paidOrder(1, "q1", "ch1"))
	b := mustCreatePaid(t, s, paidOrder(2, "q2", "ch2"))
	if _, err := s.Transition(ctx, a.ID, []string{state.OrderPaid}, state.OrderPlacing, nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, b.ID, []string{state.OrderPaid}, state.OrderPlacing, nil, ""); err != nil {
		t.Fatal(err)
	}
	placeFrom := func(id int64) error {
		_, err := s.Transition(ctx, id, []string{state.OrderPlacing}, state.OrderPlaced, func(o *state.Order) error {
			o.UpstreamNumber = 777
			return nil
		}, "adopted")
		return err
	}
	if err := placeFrom(a.ID); err != nil {
		t.Fatal(err)
	}
	if err := placeFrom(b.ID); !errors.Is(err, state.ErrUpstreamClaimed) {
		t.Fatalf("second adoption: %v, want ErrUpstreamClaimed", err)
	}
	if got, _ := s.Get(ctx, b.ID); got.Status != state.OrderPlacing {
		t.Fatalf("refused adoption moved the order to %s", got.Status)
	}
}

func TestUnfinishedOrdersSurviveARestart(t *testing.T) {
	r, s := newOrders(t)
	ctx := t.Context()
	var ids []int64
	for i := range 5 {
		ids = append(ids, mustCreatePaid(t, s, paidOrder(42, fmt.Sprint("q", i), fmt.Sprint("ch", i))).ID)
	}
	// 1 placing, 2 delivered, 3 refunded, 4 needs review, 5 still paid.
	mv := func(id int64, steps ...string) {
		t.Helper()
		cur := state.OrderPaid
		for _, to := range steps {
			if _, err := s.Transition(ctx, id, []string{cur}, to, nil, ""); err != nil {
				t.Fatalf("order %d %s -> %s: %v", id, cur, to, err)
			}
			cur = to
		}
	}
	mv(ids[0], state.OrderPlacing)
	mv(ids[1], state.OrderPlacing, state.OrderPlaced, state.OrderDelivered)
	mv(ids[2], state.OrderRefunding, state.OrderRefunded)
	mv(ids[3], state.OrderPlacing, state.OrderNeedsReview)

	restarted := records.NewOrders(r.Client, r.Prefix) // a new process on the same Redis
	got, err := restarted.Unfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]int64{ids[0], ids[3], ids[4]}) {
		t.Fatalf("unfinished after restart %v, want %v", got, []int64{ids[0], ids[3], ids[4]})
	}
	o, err := restarted.Get(ctx, ids[0])
	if err != nil || o.Status != state.OrderPlacing {
		t.Fatalf("resumed order: %+v %v", o, err)
	}
}

func TestOrderListings(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	for i := range 6 {
		o := paidOrder(int64(1+i%2), fmt.Sprint("q", i), fmt.Sprint("ch", i))
		if i%3 == 0 {
			o.Line = "topups"
		}
		mustCreatePaid(t, s, o)
	}
	if _, err := s.Transition(ctx, 5, []string{state.OrderPaid}, state.OrderRefunding, nil, ""); err != nil {
		t.Fatal(err)
	}
	ids := func(os []*state.Order) []int64 {
		var out []int64
		for _, o := range os {
			out = append(out, o.ID)
		}
		return out
	}
	list := func(offset, count int, f state.OrderFilter) string {
		t.Helper()
		got, err := s.List(ctx, offset, count, f)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ids(got))
	}
	byUser := func(user int64, offset, count int) string {
		t.Helper()
		got, err := s.ListByUser(ctx, user, offset, count)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ids(got))
	}
	// Users: 1 has orders 1,3,5; 2 has 2,4,6. Lines: topups are 1 and 4.
	for _, c := range []struct{ got, want string }{
		{byUser(1, 0, 2), "[5 3]"},
		{byUser(1, 2, 2), "[1]"},
		{byUser(2, 0, 10), "[6 4 2]"},
		{byUser(3, 0, 10), "[]"},
		{list(0, 4, state.OrderFilter{}), "[6 5 4 3]"},
		{list(4, 4, state.OrderFilter{}), "[2 1]"},
		{list(0, 10, state.OrderFilter{Status: state.OrderPaid}), "[6 4 3 2 1]"},
		{list(0, 10, state.OrderFilter{Status: state.OrderRefunding}), "[5]"},
		{list(0, 10, state.OrderFilter{Line: "topups"}), "[4 1]"},
		{list(1, 10, state.OrderFilter{Line: "topups"}), "[1]"},
		{list(0, 1, state.OrderFilter{Line: "giftcards", Status: state.OrderPaid}), "[6]"},
		{list(1, 2, state.OrderFilter{Line: "giftcards"}), "[5 3]"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	if n, _ := s.CountByUser(ctx, 2); n != 3 {
		t.Errorf("CountByUser(2) = %d", n)
	}
}

func TestDeliveredOrdersShrinkAfterRetention(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	a := mustCreatePaid(t, s, paidOrder(1, "q1", "ch1"))
	b := mustCreatePaid(t, s, paidOrder(1, "q2", "ch2"))
	for _, to := range []string{state.OrderPlacing, state.OrderPlaced, state.OrderDelivered} {
		o, _ := s.Get(ctx, a.ID)
		if _, err := s.Transition(ctx, a.ID, []string{o.Status}, to, func(o *state.Order) error {
			o.Codes = []string{"CODE-1"}
			return nil
		}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Shrink(ctx, b.ID); !errors.Is(err, state.ErrBadTransition) {
		t.Fatalf("shrinking a paid order: %v", err)
	}
	now = now.Add(89 * 24 * time.Hour)
	if n, err := s.ExpireDelivered(ctx, s.Retention); err != nil || n != 0 {
		t.Fatalf("before retention: shrank %d, %v", n, err)
	}
	now = now.Add(2 * 24 * time.Hour)
	if n, err := s.ExpireDelivered(ctx, s.Retention); err != nil || n != 1 {
		t.Fatalf("after retention: shrank %d, %v", n, err)
	}
	got, _ := s.Get(ctx, a.ID)
	if !got.Shrunk || got.Codes != nil || got.Request != nil || got.Status != state.OrderDelivered ||
		got.ChargeID != "ch1" || string(got.Item) == "" {
		t.Fatalf("shrunk order %+v", got)
	}
	if n, err := s.ExpireDelivered(ctx, s.Retention); err != nil || n != 0 {
		t.Fatalf("second sweep: shrank %d, %v", n, err)
	}
	if again, err := s.Shrink(ctx, a.ID); err != nil || again.Rev != got.Rev {
		t.Fatalf("shrinking twice: %+v %v", again, err)
	}
}

func TestCreatePaidValidates(t *testing.T) {
	_, s := newOrders(t)
	for name, o := range map[string]*state.Order{
		"no charge": paidOrder(1, "q", ""),
		"no user":   paidOrder(0, "q", "ch"),
		"no method": func() *state.Order { o := paidOrder(1, "q", "ch"); o.PayMethod = ""; return o }(),
	} {
		if _, _, err := s.CreatePaid(t.Context(), o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
