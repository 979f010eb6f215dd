package work_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
)

// A link is used once however many processes try at once; the use is
// remembered until the link expires, and a released use can be taken
// again.
func TestLinkUsedOnce(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	now := time.Unix(1_780_000_000, 0)
	var firsts atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		l := work.NewLinks(r.Client, r.Prefix) // each a replica
		wg.Go(func() {
			ok, err := l.Use(ctx, "sig-1", now, now.Add(5*time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Fatalf("%d first uses of one link, want 1", n)
	}
	key := r.Prefix + "link:sig-1"
	if ttl := r.Client.TTL(ctx, key).Val(); ttl <= 4*time.Minute || ttl > 5*time.Minute {
		t.Fatalf("the used link's key lives %v, want until the link expires (5m)", ttl)
	}
	l := work.NewLinks(r.Client, r.Prefix)
	if ok, _ := l.Use(ctx, "sig-2", now, now.Add(time.Minute)); !ok {
		t.Fatal("another link reads as used")
	}
	if err := l.Release(ctx, "sig-1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.Use(ctx, "sig-1", now, now.Add(time.Minute)); !ok {
		t.Fatal("a released link cannot be used")
	}
}
