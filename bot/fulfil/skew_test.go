package fulfil_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"shopbot/bot/fulfil"
	"shopbot/state"
)

// During an upgrade an older replica may claim the job of an order a newer
// one wrote. It never places, refunds or rewrites that order: the job goes
// back untouched for a replica of the newer build, which carries on.
func TestAnOrderOfANewerVersionIsLeftForANewerReplica(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	ctx := context.Background()
	o := s.PaidUnscheduled(giftCards(1), state.PayStars)
	key := s.Orders.KeyOf(o.ID)
	doc, err := s.Rdb.Client.HGet(ctx, key, "doc").Result()
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(doc, `"v":1,`, `"v":2,"gift_note":"from the newer build",`, 1)
	if newer == doc {
		t.Fatalf("order document without a version: %s", doc)
	}
	if err := s.Rdb.Client.HSet(ctx, key, "doc", newer).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Sched.Put(ctx, fulfil.OrderJob(o.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Run(s.Worker(nil))
	if !s.Until(func() bool { gen, _ := s.Sched.LeftFor(ctx, fulfil.OrderJob(o.ID)); return gen == state.SchemaGen+1 }) {
		t.Fatal("the order's job was not left for a newer generation")
	}
	if got, _ := s.Rdb.Client.HGet(ctx, key, "doc").Result(); got != newer {
		t.Fatalf("the older build rewrote the order:\n%s", got)
	}
	if n := s.Creates.Load(); n != 0 || s.StarRefunds(o.ChargeID) != 0 {
		t.Fatalf("the older build placed %d creates and %d refunds for an order it cannot read", n, s.StarRefunds(o.ChargeID))
	}
	// A replica that reads the order takes the job from there (here the
	// document goes back to this build's version, as a newer build's
	// would be read by it).
	if err := s.Rdb.Client.HSet(ctx, key, "doc", doc).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Sched.Put(ctx, fulfil.OrderJob(o.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	s.WaitDelivered(o.ID)
}
