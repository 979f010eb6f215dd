package work_test

import (
	"context"
	"shopbot/state/redisstore/work"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// A replica hears the flood waits published while it listens, and on
// start the ones still running (it started during the wait).
func TestFloodWaitsReachEveryReplica(t *testing.T) {
	r := statetest.New(t)
	f := work.NewFloods(r.Client, r.Prefix)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Now()
	if err := f.Publish(ctx, 42, now.Add(30*time.Second), now); err != nil {
		t.Fatal(err)
	}
	got := make(chan [2]int64, 4)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- f.Listen(ctx, ready, func(chat int64, until time.Time) { got <- [2]int64{chat, until.UnixMilli()} })
	}()
	want := func(chat int64, until time.Time) {
		t.Helper()
		select {
		case g := <-got:
			if g != [2]int64{chat, until.UnixMilli()} {
				t.Fatalf("heard %v, want chat %d until %d", g, chat, until.UnixMilli())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("never heard the wait of chat %d", chat)
		}
	}
	<-ready
	want(42, now.Add(30*time.Second))
	if err := f.Publish(ctx, work.FloodAll, now.Add(5*time.Second), now); err != nil {
		t.Fatal(err)
	}
	want(work.FloodAll, now.Add(5*time.Second))
	if err := f.Publish(ctx, 1, now, now); err != nil { // nothing to wait
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		t.Fatalf("heard %v for a wait already over", g)
	default:
	}
}
