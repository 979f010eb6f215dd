package state_test

import (
	"context"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/statetest"
)

// Waiters of a slot are woken first come first served, each once.
func TestSlotWaitersInOrder(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	o := state.NewOrders(r.Client, r.Prefix)
	now := time.Now()
	for i, id := range []int64{7, 3, 9} {
		if err := o.WaitSlot(ctx, "game_topup:x", id, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.WaitSlot(ctx, "game_topup:x", 7, now.Add(time.Hour)); err != nil { // keeps its place
		t.Fatal(err)
	}
	if err := o.StopWaitingSlot(ctx, "game_topup:x", 3); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		id, ok, err := o.NextSlotWaiter(ctx, "game_topup:x")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, id)
	}
	if len(got) != 2 || got[0] != 7 || got[1] != 9 {
		t.Fatalf("woken %v, want [7 9]", got)
	}
}
