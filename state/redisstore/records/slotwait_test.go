package records_test

import (
	"context"
	"shopbot/state/redisstore/records"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// A busy slot queues its callers first come first served, and the holder
// hands it over in that order: an order arriving later never takes the
// slot from one that waited, whatever the order of their polls.
func TestSlotIsHandedOverFirstComeFirstServed(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	o := records.NewOrders(r.Client, r.Prefix)
	const kind = "game_topup:x"
	now := time.Now()
	acquire := func(id int64, at time.Duration) int64 {
		t.Helper()
		h, handed, err := o.AcquireSlot(ctx, kind, id, now.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		if handed {
			t.Fatalf("order %d: a busy or free slot without waiters was handed over", id)
		}
		return h
	}
	release := func(id int64) int64 {
		t.Helper()
		next, err := o.ReleaseSlot(ctx, kind, id)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	if h := acquire(1, 0); h != 1 {
		t.Fatalf("free slot: holder %d, want 1", h)
	}
	for i, id := range []int64{7, 3, 9} {
		if h := acquire(id, time.Duration(i+1)*time.Second); h != 1 {
			t.Fatalf("order %d: holder %d, want 1", id, h)
		}
	}
	if h := acquire(7, time.Hour); h != 1 { // polls again: keeps its place
		t.Fatalf("holder %d, want 1", h)
	}
	if err := o.LeaveSlotQueue(ctx, kind, 3); err != nil {
		t.Fatal(err)
	}
	if next := release(1); next != 7 {
		t.Fatalf("handed to %d, want 7 (first in line)", next)
	}
	if h := acquire(9, 2*time.Hour); h != 7 {
		t.Fatalf("a later waiter took the slot from the order it was handed to: holder %d", h)
	}
	if h := acquire(7, 2*time.Hour); h != 7 {
		t.Fatalf("the order handed the slot does not hold it: holder %d", h)
	}
	if next := release(9); next != 0 {
		t.Fatalf("a waiter released a slot it does not hold: handed to %d", next)
	}
	if next := release(7); next != 9 {
		t.Fatalf("handed to %d, want 9", next)
	}
	if next := release(9); next != 0 {
		t.Fatalf("handed to %d, want nobody", next)
	}
	if h := acquire(5, 3*time.Hour); h != 5 {
		t.Fatalf("free slot after the queue: holder %d, want 5", h)
	}
}

// A slot found free while orders wait (a hand-over that never happened)
// goes to the first waiter, not to the caller.
func TestFreeSlotWithWaitersGoesToTheFirstWaiter(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	o := records.NewOrders(r.Client, r.Prefix)
	const kind = "game_topup:y"
	now := time.Now()
	if _, _, err := o.AcquireSlot(ctx, kind, 1, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.AcquireSlot(ctx, kind, 2, now); err != nil {
		t.Fatal(err)
	}
	// The slot record is gone without a hand-over (Redis lost it).
	if err := r.Client.Del(ctx, r.Prefix+"{orders}:slot:"+kind).Err(); err != nil {
		t.Fatal(err)
	}
	h, handed, err := o.AcquireSlot(ctx, kind, 3, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if h != 2 || !handed {
		t.Fatalf("holder %d (handed %v), want the first waiter 2, handed over to be woken", h, handed)
	}
}

// The loss mark keeps the newest of each: a later loss (or a replica that
// noticed the same loss later) never moves the mark or its time back.
func TestLossMarkOnlyGrows(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	o := records.NewOrders(r.Client, r.Prefix)
	if mark, at, err := o.Loss(ctx); err != nil || mark != 0 || !at.IsZero() {
		t.Fatalf("no loss yet: %d %v %v", mark, at, err)
	}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, l := range []struct {
		mark int64
		at   time.Time
	}{{1005, t0}, {1003, t0.Add(time.Second)}, {1009, t0.Add(-time.Second)}} {
		if err := o.NoteLoss(ctx, l.mark, l.at); err != nil {
			t.Fatal(err)
		}
	}
	mark, at, err := o.Loss(ctx)
	if err != nil || mark != 1009 || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("loss = %d at %v (%v), want 1009 at %v", mark, at, err, t0.Add(time.Second))
	}
}
