package state

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// An update batch whose writes the replica does not confirm is not
// acknowledged: Accept returns ErrNotDurable (Telegram delivers it again),
// although it is stored; the redelivery, once the replica is back, is
// dropped as seen and confirmed.
func TestAcceptNotConfirmedByTheReplicaIsNotAcknowledged(t *testing.T) {
	master := startRedisServer(t)
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", itoa(int64(master.port)))
	ctx := context.Background()
	master.client.Set(ctx, "t:ready", "1", 0)
	waitFor(t, "the replica to receive writes", func() bool {
		s, err := master.client.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(s, "state=online") && replica.client.Exists(ctx, "t:ready").Val() == 1
	})
	q := NewQueue(master.client, "t:")
	q.Durable = NewDurability(master.client, "t:", WithSyncTimeout(300*time.Millisecond))
	ups := []Update{{ID: 1, Chat: 10, Body: []byte(`{}`)}, {ID: 2, Chat: 11, Body: []byte(`{}`)}}
	if n, err := q.Accept(ctx, ups, time.Now()); err != nil || n != 2 {
		t.Fatalf("Accept with the replica up: %d %v", n, err)
	}
	if err := replica.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	more := []Update{{ID: 3, Chat: 10, Body: []byte(`{}`)}}
	if _, err := q.Accept(ctx, more, time.Now()); !errors.Is(err, ErrNotDurable) {
		t.Fatalf("Accept with the replica stopped: %v, want ErrNotDurable", err)
	}
	if err := replica.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Accept(ctx, more, time.Now()); err != nil || n != 0 {
		t.Fatalf("the redelivery: %d new, %v; want 0 new, confirmed", n, err)
	}
	if v := replica.client.LLen(ctx, q.chatKeys(10)[2]).Val(); v != 2 {
		t.Fatalf("the replica has %d updates of chat 10, want 2", v)
	}
}

// A seq that went back (a restore from an older snapshot) hands out an id
// an order already has: CreatePaid takes the next one instead of writing
// over that order.
func TestCreatePaidSkipsAnIDAlreadyTaken(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	s := NewOrders(r.Client, r.Prefix)
	first, _, err := s.CreatePaid(ctx, &Order{ChargeID: "c1", QuoteID: "q1", UserID: 7, Line: "giftcards", PayMethod: PayStars})
	if err != nil {
		t.Fatal(err)
	}
	r.Client.Set(ctx, s.p+"seq", first.ID-1, 0) // seq went back
	second, dup, err := s.CreatePaid(ctx, &Order{ChargeID: "c2", QuoteID: "q2", UserID: 7, Line: "giftcards", PayMethod: PayStars})
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

// Two replicas starting together: the second waits while the first
// migrates (the lock), returns once the first is done without moving
// anything itself, and gives up with an error when its context ends first.
func TestMigrateLayoutWaitsForAnotherReplica(t *testing.T) {
	r := statetest.New(t)
	if statetest.Cluster() {
		t.Skip("no migration on a cluster")
	}
	ctx := context.Background()
	r.Client.Set(ctx, r.Prefix+migrateLock, "1", time.Minute)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := MigrateLayout(short, r.Client, r.Prefix); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with the lock held past the deadline: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		rep, err := MigrateLayout(ctx, r.Client, r.Prefix)
		if err == nil && rep != (MigrateReport{}) {
			err = errors.New("the waiting replica moved keys too")
		}
		done <- err
	}()
	// The first replica finishes.
	r.Client.Set(ctx, r.Prefix+migrateDone, "now", 0)
	r.Client.Del(ctx, r.Prefix+migrateLock)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting replica never returned")
	}
}
