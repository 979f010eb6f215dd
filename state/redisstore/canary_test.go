package redisstore_test

import (
	"context"
	"shopbot/state/redisstore"
	"testing"

	"shopbot/state/statetest"
)

func TestCanaryNoticesLostWrites(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	c := redisstore.NewCanary(r.Client, r.Prefix)
	other := redisstore.NewCanary(r.Client, r.Prefix) // another replica
	for range 3 {
		if lost, err := c.Check(ctx); err != nil || lost {
			t.Fatalf("lost %v, err %v on a healthy Redis", lost, err)
		}
		if lost, err := other.Check(ctx); err != nil || lost {
			t.Fatalf("another replica's writes count as lost: %v %v", lost, err)
		}
	}
	rollback := r.Snapshot(t)
	if _, err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
	rollback() // the last check's write is gone
	if lost, err := c.Check(ctx); err != nil || !lost {
		t.Fatalf("lost %v, err %v after a rollback", lost, err)
	}
	if lost, _ := c.Check(ctx); lost {
		t.Fatal("one rollback reported twice")
	}
}
