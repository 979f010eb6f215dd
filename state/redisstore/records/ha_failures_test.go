package records

import (
	"context"
	"shopbot/state"
	"testing"

	"shopbot/state/statetest"
)

// A seq that went back (a restore from an older snapshot) hands out an id
// an order already has: CreatePaid takes the next one instead of writing
// over that order.
func TestCreatePaidSkipsAnIDAlreadyTaken(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	s := NewOrders(r.Client, r.Prefix)
	first, _, err := s.CreatePaid(ctx, &state.Order{ChargeID: "c1", QuoteID: "q1", UserID: 7, Line: "giftcards", PayMethod: state.PayStars})
	if err != nil {
		t.Fatal(err)
	}
	r.Client.Set(ctx, s.p+"seq", first.ID-1, 0) // seq went back
	second, dup, err := s.CreatePaid(ctx, &state.Order{ChargeID: "c2", QuoteID: "q2", UserID: 7, Line: "giftcards", PayMethod: state.PayStars})
	if err != nil || dup || second.ID == first.ID {
		t.Fatalf("second order %+v dup %v err %v", second, dup, err)
	}
	if o, err := s.Get(ctx, first.ID); err != nil || o.ChargeID != "c1" {
		t.Fatalf("the first order was overwritten: %+v %v", o, err)
	}
	if o, err := s.ByCharge(ctx, "c2"); err != nil || o.ID != second.ID {
		t.Fatalf("charge c2: %+v %v", o, err)
	}
}
