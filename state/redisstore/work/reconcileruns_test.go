package work_test

import (
	"shopbot/state/redisstore/work"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// Each reconciliation run replaces the last one's time and count of
// unexplained items and adds to the runs, under the key the running shops
// use.
func TestReconcileRunsRecordTheLastRun(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	s := work.NewReconcileRuns(r.Client, r.Prefix)
	if run, err := s.Last(ctx); err != nil || run != (work.ReconcileRun{}) {
		t.Fatalf("before any run: %+v (%v)", run, err)
	}
	t0 := time.Unix(1_780_000_000, 0)
	if err := s.Record(ctx, t0, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, t0.Add(24*time.Hour), 1); err != nil {
		t.Fatal(err)
	}
	run, err := s.Last(ctx)
	if err != nil || !run.At.Equal(t0.Add(24*time.Hour)) || run.Unexplained != 1 || run.Runs != 2 {
		t.Fatalf("last run %+v (%v), want a day later, 1 unexplained, 2 runs", run, err)
	}
	h := r.Client.HGetAll(ctx, r.Prefix+"books:reconcile").Val()
	if h["at"] != "1780086400" || h["unexplained"] != "1" || h["runs"] != "2" {
		t.Fatalf("run hash %v", h)
	}
}
