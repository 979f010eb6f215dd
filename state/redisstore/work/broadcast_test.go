package work_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
)

// A scheduled broadcast is released once however many processes try at
// once; cancelled, it is never released; a running one hands out each
// listed recipient once, then none.
func TestBroadcastReleasedOnceAndRecipientsTakenOnce(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	b := work.NewBroadcasts(r.Client, r.Prefix)
	at := time.Now().Add(time.Hour)
	id, err := b.Create(ctx, &work.BroadcastJob{AdminChat: 1, Text: "x", At: at, Audience: "lang:ru"})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := b.Active(ctx); len(ids) != 0 {
		t.Fatalf("a scheduled job is active: %v", ids)
	}
	if ids, _ := b.Scheduled(ctx); !slices.Equal(ids, []string{id}) {
		t.Fatalf("scheduled %v", ids)
	}
	var released atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			other := work.NewBroadcasts(r.Client, r.Prefix)
			if ok, err := other.Release(ctx, id); err == nil && ok {
				released.Add(1)
			}
		})
	}
	wg.Wait()
	if released.Load() != 1 {
		t.Fatalf("released %d times", released.Load())
	}
	if ids, _ := b.Active(ctx); !slices.Equal(ids, []string{id}) {
		t.Fatalf("active after release %v", ids)
	}
	if err := b.AddRecipients(ctx, id, []int64{11, 12}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddRecipients(ctx, id, []int64{13}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetListed(ctx, id, 3); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		buyer, ok, err := b.TakeRecipient(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, buyer)
	}
	if j, _ := b.Get(ctx, id); !slices.Equal(got, []int64{11, 12, 13}) || !j.Listed || j.Total != 3 || !j.At.Equal(at.Truncate(time.Second)) || j.Audience != "lang:ru" {
		t.Fatalf("took %v; job %+v", got, j)
	}
	if _, err := b.Finish(ctx, id, work.BroadcastDone); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.TakeRecipient(ctx, id); !errors.Is(err, work.ErrBroadcastStopped) {
		t.Fatalf("take from a finished job: %v", err)
	}

	later, _ := b.Create(ctx, &work.BroadcastJob{AdminChat: 1, Text: "y", At: at})
	if did, err := b.Finish(ctx, later, work.BroadcastDone); err != nil || did {
		t.Fatalf("a scheduled job finished as done: %v %v", did, err)
	}
	if did, err := b.Finish(ctx, later, work.BroadcastCancelled); err != nil || !did {
		t.Fatalf("cancel: %v %v", did, err)
	}
	if ok, err := b.Release(ctx, later); err != nil || ok {
		t.Fatalf("a cancelled job was released: %v %v", ok, err)
	}
	if ids, _ := b.Scheduled(ctx); len(ids) != 0 {
		t.Fatalf("scheduled after the cancel: %v", ids)
	}
}

// Opens count distinct buyers, only of a broadcast that exists.
func TestBroadcastOpensCountDistinctBuyers(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	b := work.NewBroadcasts(r.Client, r.Prefix)
	id, _ := b.Create(ctx, &work.BroadcastJob{AdminChat: 1, Text: "x"})
	for _, u := range []int64{5, 6, 5, 7, 5} {
		if ok, err := b.Opened(ctx, id, u); err != nil || !ok {
			t.Fatalf("open by %d: %v %v", u, ok, err)
		}
	}
	if ok, _ := b.Opened(ctx, "404", 5); ok {
		t.Fatal("an open of no broadcast counted")
	}
	if j, _ := b.Get(ctx, id); j.Opens != 3 {
		t.Fatalf("opens %d, want 3", j.Opens)
	}
	if _, err := b.Get(ctx, "404"); !errors.Is(err, work.ErrBroadcastNotFound) {
		t.Fatalf("get of no broadcast: %v", err)
	}
}

// A job of a build before audiences (in the set "active", listing no
// recipients) is still carried: Active lists it, Finish and Close take it
// out.
func TestBroadcastOfAnOlderBuildIsStillActive(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	key := r.Prefix + "{broadcast}:"
	if err := r.Client.HSet(ctx, key+"7", "admin", 1, "text", "old", "status", "running", "pos", 3, "total", 10).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Client.SAdd(ctx, key+"active", "7").Err(); err != nil {
		t.Fatal(err)
	}
	b := work.NewBroadcasts(r.Client, r.Prefix)
	if ids, _ := b.Active(ctx); !slices.Equal(ids, []string{"7"}) {
		t.Fatalf("active %v", ids)
	}
	if j, _ := b.Get(ctx, "7"); j.Listed || j.Audience != "" || j.Pos != 3 {
		t.Fatalf("older job %+v", j)
	}
	if did, _ := b.Finish(ctx, "7", work.BroadcastCancelled); !did {
		t.Fatal("the older job did not stop")
	}
	if ids, _ := b.Active(ctx); len(ids) != 0 {
		t.Fatalf("active after stop %v", ids)
	}
}
