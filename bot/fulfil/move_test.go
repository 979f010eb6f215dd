package fulfil

import (
	"context"
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

// A Redis rolled back to before order A was paid gives A's number to the
// next payment, B. A worker still holding A must not write A's attempt,
// request or upstream order into B: its transitions are refused, and B is
// left as it was.
func TestWorkerHoldingAnOrderRedisLostCannotMoveTheOrderThatTookItsNumber(t *testing.T) {
	t.Parallel()
	r := statetest.New(t)
	ctx := context.Background()
	orders := records.NewOrders(r.Client, r.Prefix)
	f := New(Deps{Orders: orders}, Config{})
	paid := func(charge string) *state.Order {
		t.Helper()
		o, _, err := orders.CreatePaid(ctx, &state.Order{
			ChargeID: charge, QuoteID: "q-" + charge, UserID: 7, ChatID: 7, Line: "giftcards",
			PayMethod: state.PayStars, ShopUSD: decimal.NewFromInt(3), Item: []byte(`{}`),
		})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	rollback := r.Snapshot(t)
	a := paid("charge-a")
	rollback()
	b := paid("charge-b")
	if a.ID != b.ID {
		t.Fatalf("B got number %d, not A's %d: the test needs the reuse", b.ID, a.ID)
	}
	_, err := f.move(ctx, a, []string{state.OrderPaid}, state.OrderPlacing, func(n *state.Order) error {
		n.AttemptID, n.Request = "attempt-of-a", []byte(`{"a":1}`)
		return nil
	}, "attempt")
	if !errors.Is(err, state.ErrBadTransition) {
		t.Fatalf("moving A over B: err = %v, want a bad transition", err)
	}
	cur, err := orders.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.ChargeID != "charge-b" || cur.Status != state.OrderPaid || cur.AttemptID != "" || len(cur.Request) != 0 {
		t.Fatalf("B was changed by A's worker: %+v", cur)
	}
	// B's own worker moves it.
	if _, err := f.move(ctx, b, []string{state.OrderPaid}, state.OrderPlacing, nil, "attempt"); err != nil {
		t.Fatalf("B's own move: %v", err)
	}
}
