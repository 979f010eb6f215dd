package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"shopbot/bot/jobs"
	"shopbot/state/redisstore/sched"
	"shopbot/state/statetest"
)

// runWorker starts a worker whose tick never comes within the test: every
// claim it makes is one a Kick or a finished job asked for.
func runWorker(t *testing.T, parallel int, step func(j sched.Job)) (*jobs.Worker, *sched.Schedule) {
	t.Helper()
	r := statetest.New(t)
	s := sched.NewSchedule(r.Client, r.Prefix)
	w := &jobs.Worker{
		What: "test", Sched: s, Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Tick: time.Hour, Lease: time.Minute, Timeout: time.Minute, Parallel: parallel,
		Step: func(_ context.Context, j sched.Job) (time.Time, bool) {
			step(j)
			return time.Time{}, false
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return w, s
}

// A backlog bigger than the worker's places is served as fast as its jobs
// finish, not Parallel jobs a tick (with 8 places and a 500 ms tick, 400
// orders waiting for their kind's slot kept the slot's holder waiting 10 s
// for its turn).
func TestWorkerServesABacklogWithoutWaitingForTheTick(t *testing.T) {
	const n = 40
	ran := make(chan string, n)
	w, s := runWorker(t, 2, func(j sched.Job) { ran <- j.Name })
	for i := range n {
		if err := s.Put(t.Context(), fmt.Sprintf("job:%d", i), time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	w.Kick()
	seen := map[string]bool{}
	timeout := time.After(30 * time.Second) // a failure guard: the tick is an hour away
	for len(seen) < n {
		select {
		case name := <-ran:
			seen[name] = true
		case <-timeout:
			t.Fatalf("ran %d of %d backlogged jobs without a tick", len(seen), n)
		}
	}
}

// A job made due by this process (Hurry of the order handed a slot) runs
// on Kick, not at the next tick.
func TestWorkerKickClaimsAtOnce(t *testing.T) {
	ran := make(chan string, 1)
	w, s := runWorker(t, 2, func(j sched.Job) { ran <- j.Name })
	if err := s.Put(t.Context(), "job:late", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	w.Kick()
	select {
	case name := <-ran:
		if name != "job:late" {
			t.Fatalf("ran %s", name)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a kicked worker did not claim the due job")
	}
}
