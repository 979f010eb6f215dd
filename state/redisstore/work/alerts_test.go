package work_test

import (
	"shopbot/state/redisstore/work"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// An alert is raised once until it is cleared, shared by every process
// (two stores over one Redis), and the raise is kept under the key the
// running shops use.
func TestAlertRaisedOnceUntilCleared(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	a, other := work.NewAlerts(r.Client, r.Prefix), work.NewAlerts(r.Client, r.Prefix)
	at := time.Unix(1_780_000_000, 0)
	if ok, err := a.Raise(ctx, "upstream:low-balance", at); err != nil || !ok {
		t.Fatalf("first raise %v (%v)", ok, err)
	}
	if ok, err := a.Raise(ctx, "upstream:low-balance", at.Add(time.Minute)); err != nil || ok {
		t.Fatalf("second raise %v (%v), want not raised again", ok, err)
	}
	if ok, err := other.Raise(ctx, "upstream:low-balance", at); err != nil || ok {
		t.Fatalf("another process raised it again: %v (%v)", ok, err)
	}
	if ok, _ := other.Raised(ctx, "upstream:low-balance"); !ok {
		t.Fatal("a raised alert reads as not raised")
	}
	// The layout: prefix + "alert:" + key, the raise's unix time, a TTL.
	key := r.Prefix + "alert:upstream:low-balance"
	if v, err := r.Client.Get(ctx, key).Int64(); err != nil || v != at.Unix() {
		t.Fatalf("alert key holds %d (%v), want %d", v, err, at.Unix())
	}
	if ttl := r.Client.TTL(ctx, key).Val(); ttl <= 0 || ttl > work.AlertTTL {
		t.Fatalf("alert key TTL %v, want up to %v", ttl, work.AlertTTL)
	}
	// Another alert is independent.
	if ok, _ := a.Raise(ctx, "upstream:blocked", at); !ok {
		t.Fatal("a different alert was not raised")
	}

	if was, err := a.Clear(ctx, "upstream:low-balance"); err != nil || !was {
		t.Fatalf("clear %v (%v), want it was raised", was, err)
	}
	if was, _ := a.Clear(ctx, "upstream:low-balance"); was {
		t.Fatal("clearing again reported it was raised")
	}
	if ok, _ := a.Raised(ctx, "upstream:low-balance"); ok {
		t.Fatal("a cleared alert reads as raised")
	}
	if ok, _ := other.Raise(ctx, "upstream:low-balance", at); !ok {
		t.Fatal("after clearing, the alert was not raised again")
	}
	if ok, _ := a.Raised(ctx, "upstream:blocked"); !ok {
		t.Fatal("clearing one alert cleared another")
	}
}

// A raise nobody clears lapses after AlertTTL, so the condition alerts
// again.
func TestAlertLapses(t *testing.T) {
	r := statetest.New(t)
	if r.Mini == nil {
		t.Skip("needs miniredis's clock (a 30-day TTL)")
	}
	ctx := t.Context()
	a := work.NewAlerts(r.Client, r.Prefix)
	if ok, _ := a.Raise(ctx, "order:7:review", time.Now()); !ok {
		t.Fatal("not raised")
	}
	r.FastForward(work.AlertTTL - time.Minute)
	if ok, _ := a.Raise(ctx, "order:7:review", time.Now()); ok {
		t.Fatal("raised again before the TTL")
	}
	r.FastForward(2 * time.Minute)
	if ok, _ := a.Raise(ctx, "order:7:review", time.Now()); !ok {
		t.Fatal("not raised again after the TTL")
	}
}
