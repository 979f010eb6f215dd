package checkout_test

import (
	"context"
	"testing"
	"time"

	"shopbot/bot/checkout"
	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
)

// A charge that must be looked at again soon (its quote is gone and
// upstream orders nobody claims may still be claimed) asks for a sweep.
// The process that asked may die before it (a replica killed, restarted
// after a restore): any other process runs the sweep when it is due, not
// at its next periodic sweep ten minutes later.
func TestASweepDueIsRunByAnotherProcessWhenTheOneThatAskedIsGone(t *testing.T) {
	rdb := statetest.New(t)
	ctx := context.Background()
	opts := checkout.Options{Stars: true, SweepEvery: time.Hour, SweepDueCheck: 10 * time.Millisecond}
	c, tg, _ := newCheckoutWith(rdb, nil, opts)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { c.Run(runCtx); close(done) }()
	waitFor(t, func() bool { return tg.starReads() >= 1 }, "the sweep at start")
	// What a process that noted a charge to look at again leaves behind,
	// before it dies.
	payments := work.NewPayments(rdb.Client, rdb.Prefix)
	if err := payments.SweepDueAt(ctx, time.Now().Add(50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	before := tg.starReads()
	waitFor(t, func() bool { return tg.starReads() > before }, "the sweep that was due")
	waitFor(t, func() bool { _, ok, err := payments.SweepDue(ctx); return err == nil && !ok }, "the due met")
	stop()
	<-done
}

// waitFor waits up to 10 s for cond, polling every millisecond.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
