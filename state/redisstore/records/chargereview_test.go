package records_test

import (
	"errors"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/statetest"
)

func TestStoreEpochIsSetOnce(t *testing.T) {
	r := statetest.New(t)
	first := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
	got, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix, first)
	if err != nil || !got.Equal(first) {
		t.Fatalf("first call: %v %v, want %v", got, err, first)
	}
	again, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix, time.Now())
	if err != nil || !again.Equal(first) {
		t.Fatalf("second call: %v %v, want the first time %v", again, err, first)
	}
	if ttl := r.Client.TTL(t.Context(), r.Prefix+redisstore.StoreEpochKey).Val(); ttl != -1 {
		t.Fatalf("the epoch expires (ttl %v)", ttl)
	}
	// Another store (prefix) has its own epoch.
	other, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix+"other:", time.Now())
	if err != nil || other.Equal(first) {
		t.Fatalf("another prefix: %v %v", other, err)
	}
}

func TestChargeReviewListsAChargeOnce(t *testing.T) {
	r := statetest.New(t)
	rv := records.NewChargeReviews(r.Client, r.Prefix)
	ctx := t.Context()
	paid := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	c := state.ChargeReview{ChargeID: "stx1", UserID: 7, Stars: 120, Payload: "q:abc", PaidAt: paid, Reason: state.ReviewBeforeStore}
	if added, err := rv.Add(ctx, c); err != nil || !added {
		t.Fatalf("first add: %v %v", added, err)
	}
	c.Reason = state.ReviewQuoteGone
	if added, err := rv.Add(ctx, c); err != nil || added {
		t.Fatalf("second add: %v %v", added, err)
	}
	if n, err := rv.Len(ctx); err != nil || n != 1 {
		t.Fatalf("len %d %v", n, err)
	}
	got, err := rv.Get(ctx, "stx1")
	if err != nil || got.Reason != state.ReviewBeforeStore || got.Stars != 120 || !got.PaidAt.Equal(paid) || got.ListedAt.IsZero() {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := rv.Get(ctx, "nope"); !errors.Is(err, state.ErrNoChargeReview) {
		t.Fatalf("get unknown: %v", err)
	}
	if _, err := rv.Add(ctx, state.ChargeReview{ChargeID: "stx2", Reason: state.ReviewQuoteGone}); err != nil {
		t.Fatal(err)
	}
	list, err := rv.List(ctx, 0, 10)
	if err != nil || len(list) != 2 || list[0].ChargeID != "stx1" || list[1].ChargeID != "stx2" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if ok, err := rv.Alerted(ctx, "stx1"); err != nil || ok {
		t.Fatalf("alerted before: %v %v", ok, err)
	}
	if err := rv.MarkAlerted(ctx, "stx1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := rv.Alerted(ctx, "stx1"); err != nil || !ok {
		t.Fatalf("alerted after: %v %v", ok, err)
	}
}
