package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"shopbot/bot/jobs"
	"shopbot/state"
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

// leasedStep starts a worker with a short lease running one job whose
// step waits for its context to end: it returns the step's lease once it
// runs, and a channel that gets the context's error when it ends.
func leasedStep(t *testing.T, r *statetest.Redis) (*sched.Schedule, *jobs.Lease, <-chan error) {
	t.Helper()
	s := sched.NewSchedule(r.Client, r.Prefix)
	running := make(chan *jobs.Lease, 1)
	ended := make(chan error, 1)
	w := &jobs.Worker{
		What: "test", Sched: s, Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Tick: time.Hour, Lease: 300 * time.Millisecond, Timeout: time.Minute, Parallel: 1,
		Step: func(ctx context.Context, j sched.Job) (time.Time, bool) {
			running <- jobs.LeaseOf(ctx)
			<-ctx.Done()
			ended <- ctx.Err()
			return time.Time{}, true
		},
	}
	if err := s.Put(t.Context(), "job:1", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	var l *jobs.Lease
	select {
	case l = <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not run")
	}
	if l == nil || l.Gen() < 1 || !l.Until().After(time.Now()) {
		t.Fatalf("the step's lease: %+v", l)
	}
	return s, l, ended
}

func waitEnded(t *testing.T, ended <-chan error) {
	t.Helper()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the step's context ended without an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the step ran on without its lease")
	}
}

// A step whose lease another worker took (here: the job was put again,
// which cancels the lease) has its context ended at the next renewal, so
// what it still has in flight is cut instead of running on beside the
// new holder's.
func TestWorkerEndsTheStepWhoseLeaseAnotherTook(t *testing.T) {
	r := statetest.New(t)
	s, _, ended := leasedStep(t, r)
	if err := s.Put(t.Context(), "job:1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, ended)
}

// A step whose lease cannot be renewed (its Redis cut off) has its
// context ended when the lease runs out: another worker may claim the job
// from then on.
func TestWorkerEndsTheStepWhoseLeaseRanOutWithRedisCutOff(t *testing.T) {
	r := statetest.New(t)
	if r.Mini == nil {
		t.Skip("cuts off miniredis")
	}
	_, l, ended := leasedStep(t, r)
	r.Mini.SetError("connection cut")
	t.Cleanup(func() { r.Mini.SetError("") })
	waitEnded(t, ended)
	if time.Now().Before(l.Until()) {
		t.Fatalf("the step's context ended before its lease ran out (%v)", l.Until())
	}
}

// A worker claims only the kinds it runs, and a job its step does not
// understand goes back untouched for a newer generation: due as it was,
// never failed or finished, never claimed by this generation again.
func TestWorkerLeavesWhatItDoesNotUnderstand(t *testing.T) {
	r := statetest.New(t)
	s := sched.NewSchedule(r.Client, r.Prefix)
	ran := make(chan string, 8)
	left := make(chan string, 8)
	w := &jobs.Worker{
		What: "test", Sched: s, Now: time.Now, Log: slog.New(&noticeHandler{msg: "job left for a replica of a newer version", to: left}),
		Tick: time.Hour, Lease: time.Minute, Timeout: time.Minute, Parallel: 4,
		Kinds: []string{"order"},
		Step: func(ctx context.Context, j sched.Job) (time.Time, bool) {
			ran <- j.Name
			if j.Name == "order:new-format" {
				return jobs.LeaveForNewer(ctx)
			}
			return time.Time{}, false
		},
	}
	due := time.Now().Add(-time.Second).Truncate(time.Millisecond)
	for _, job := range []string{"future:1", "order:new-format", "order:1"} {
		if err := s.Put(t.Context(), job, due); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	defer func() { cancel(); wg.Wait() }()
	timeout := time.After(30 * time.Second) // a failure guard
	select {
	case <-left:
	case <-timeout:
		t.Fatal("the job was not left for a newer version")
	}
	var names []string
	for len(ran) > 0 {
		names = append(names, <-ran)
	}
	if slices.Contains(names, "future:1") || !slices.Contains(names, "order:new-format") {
		t.Fatalf("ran %v: want order:new-format, never future:1", names)
	}
	for _, job := range []string{"future:1", "order:new-format"} {
		if at, ok, _ := s.Due(t.Context(), job); !ok || !at.Equal(due) {
			t.Fatalf("%s: due %v (scheduled %v), want untouched at %v", job, at, ok, due)
		}
	}
	if gen, _ := s.LeftFor(t.Context(), "order:new-format"); gen != state.SchemaGen+1 {
		t.Fatalf("left for generation %d, want %d", gen, state.SchemaGen+1)
	}
	// What the worker's next claim would take: nothing of either.
	again, err := s.ClaimKnown(t.Context(), time.Now(), time.Minute, 10, sched.Known{Kinds: w.Kinds, Gen: state.SchemaGen})
	if err != nil || len(again) != 0 {
		t.Fatalf("this generation would claim %v (%v)", again, err)
	}
}

// noticeHandler sends each log record whose message is msg to the channel.
type noticeHandler struct {
	msg string
	to  chan<- string
}

func (h *noticeHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *noticeHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.to <- r.Message
	}
	return nil
}
func (h *noticeHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *noticeHandler) WithGroup(string) slog.Handler      { return h }

// A job its step reschedules before the next tick (an order read again
// 500 ms after its create) runs at its due time, not up to a tick late.
func TestWorkerRunsAJobDueBeforeTheNextTickOnTime(t *testing.T) {
	r := statetest.New(t)
	s := sched.NewSchedule(r.Client, r.Prefix)
	ran := make(chan int, 2)
	runs := 0
	w := &jobs.Worker{
		What: "test", Sched: s, Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Tick: time.Hour, Lease: time.Minute, Timeout: time.Minute, Parallel: 1,
		Step: func(_ context.Context, j sched.Job) (time.Time, bool) {
			runs++
			ran <- runs
			if runs == 1 {
				return time.Now().Add(50 * time.Millisecond), false
			}
			return time.Time{}, false
		},
	}
	if err := s.Put(t.Context(), "job:soon", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	timeout := time.After(30 * time.Second) // a failure guard: the tick is an hour away
	for want := 1; want <= 2; want++ {
		select {
		case n := <-ran:
			if n != want {
				t.Fatalf("run %d, want %d", n, want)
			}
		case <-timeout:
			t.Fatalf("the job ran %d times; its second run, due 50 ms after the first, waited for the tick", want-1)
		}
	}
}
