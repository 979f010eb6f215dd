// Package jobs runs the due jobs of a durable schedule (sched.Schedule):
// claim, run a few at once, keep the lease while a job runs, then
// reschedule or finish it. The fulfilment worker and the order chat relay
// are each one Worker.
package jobs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"shopbot/state"
	"shopbot/state/redisstore/sched"
)

// Worker claims the due jobs of one durable schedule and runs them, a
// few at once. Both the fulfilment worker (order jobs) and the order chat
// relay (chat polls) are one.
type Worker struct {
	What  string // what the jobs are, for logs
	Sched *sched.Schedule
	// Kinds are the job kinds (sched.Kind) Step runs: a job of another
	// kind in the schedule (a newer build's, during an upgrade) is never
	// claimed, and stays due for a replica that runs it. Nil claims every
	// kind.
	Kinds    []string
	Now      func() time.Time
	Log      *slog.Logger
	Tick     time.Duration // how often due jobs are claimed
	Lease    time.Duration // a claimed job is ours this long, renewed while it runs
	Timeout  time.Duration // one run's bound
	Parallel int           // jobs run at once
	// step runs one job and says when to run it again: a zero time
	// finishes the job. With leave set the job is left as it is, to come
	// back when its lease runs out, as a dead worker's would (a crash at a
	// failpoint). A job the step does not understand (a name or a record
	// of a newer build's) returns LeaveForNewer.
	Step func(ctx context.Context, j sched.Job) (next time.Time, leave bool)

	wakeOnce sync.Once
	wake     chan struct{} // Kick and a finished job after a full claim
}

// Kick makes the worker claim due jobs now instead of at its next tick
// (a job this process just made due, such as the order handed its kind's
// placement slot). It never blocks.
func (w *Worker) Kick() {
	select {
	case w.wakeChan() <- struct{}{}:
	default:
	}
}

func (w *Worker) wakeChan() chan struct{} {
	w.wakeOnce.Do(func() { w.wake = make(chan struct{}, 1) })
	return w.wake
}

// Run claims and runs due jobs until ctx ends, then waits for the jobs in
// flight.
func (w *Worker) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, w.Parallel)
	wake := w.wakeChan()
	var backlog atomic.Bool
	t := time.NewTicker(w.Tick)
	defer t.Stop()
	for {
		free := w.Parallel - len(sem)
		claimed := w.Now()
		jobs, err := w.Sched.ClaimKnown(ctx, claimed, w.Lease, free, sched.Known{Kinds: w.Kinds, Gen: state.SchemaGen})
		if err != nil && ctx.Err() == nil {
			w.Log.Warn("claim jobs", "jobs", w.What, "err", err)
		}
		// A claim that filled every free place (or had none) may have left
		// due jobs behind: claim again as soon as a job finishes instead
		// of at the next tick, so a backlog of short jobs is not served at
		// Parallel jobs a tick.
		backlog.Store(err == nil && len(jobs) == free)
		for _, j := range jobs {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() {
					<-sem
					wg.Done()
					if backlog.Load() {
						w.Kick()
					}
				}()
				// A job in flight finishes even when ctx ends (a POST must not
				// be cut by our own shutdown, nor a relayed message go
				// unrecorded); its lease is kept alive meanwhile. A lease lost
				// or lapsed ends the job's context: another worker may hold
				// the job now.
				jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.Timeout)
				defer cancel()
				jctx, l, lose := NewLease(jctx, w.Sched, j, w.Lease, claimed, w.Now)
				defer lose()
				stop := w.keepLease(jctx, l)
				defer stop()
				w.finish(jctx, j)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// finish runs the job's step and reschedules or finishes the job.
func (w *Worker) finish(ctx context.Context, j sched.Job) {
	next, leave := w.Step(ctx, j)
	if l := LeaseOf(ctx); leave && l != nil && l.newer.Load() {
		// Due as it was, for a replica of a newer generation.
		if err := w.Sched.LeaveFor(ctx, j, state.SchemaGen+1); err != nil && !errors.Is(err, sched.ErrJobLeaseLost) {
			w.Log.Warn("leave a job for a newer version; its lease runs out instead", "jobs", w.What, "job", j.Name, "err", err)
		} else if err == nil {
			w.Log.Info("job left for a replica of a newer version", "jobs", w.What, "job", j.Name, "gen", state.SchemaGen)
		}
		return
	}
	if leave {
		return
	}
	var err error
	if next.IsZero() {
		err = w.Sched.Done(ctx, j)
	} else {
		err = w.Sched.Reschedule(ctx, j, next)
		if d := next.Sub(w.Now()); err == nil && d < w.Tick {
			// Due before the next tick (an order read again 500 ms after
			// its create): claim it then, not up to a tick late.
			time.AfterFunc(max(d, 0), w.Kick)
		}
	}
	// A step whose lease was lost (its context cancelled) has nothing
	// left to finish: the job is another worker's, or comes back when the
	// lease runs out.
	if err != nil && !errors.Is(err, sched.ErrJobLeaseLost) && !errors.Is(ctx.Err(), context.Canceled) {
		w.Log.Warn("finish job", "jobs", w.What, "job", j.Name, "err", err)
	}
}

// keepLease renews the job's lease every third of it while the job runs,
// so a short lease (a dead worker's job comes back within seconds) never
// expires under a live one; stop ends that. A lease another worker took,
// or one that ran out with every renewal failing (Redis cut off: another
// worker may claim it now), ends the job's context.
func (w *Worker) keepLease(ctx context.Context, l *Lease) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	lapse := time.AfterFunc(l.Until().Sub(w.Now()), func() {
		w.Log.Warn("job lease ran out while running", "jobs", w.What, "job", l.job.Name)
		l.lost()
	})
	go func() {
		defer close(finished)
		t := time.NewTicker(w.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				// A failed renewal (a Redis blip) is tried again at the
				// next tick, until the lease runs out.
				until, err := l.Renew(ctx)
				if errors.Is(err, sched.ErrJobLeaseLost) {
					w.Log.Warn("job lease lost while running", "jobs", w.What, "job", l.job.Name)
					return
				}
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					w.Log.Warn("extend job lease; trying again", "jobs", w.What, "job", l.job.Name, "err", err)
					continue
				}
				lapse.Reset(until.Sub(w.Now()))
			}
		}
	}()
	return func() { close(done); <-finished; lapse.Stop() }
}

// Lease is the lease of a job while its step runs, in the step's context
// (LeaseOf). What the step does outside Redis that another worker must
// never repeat (an order's create upstream) it does only while it holds
// the lease: Renew right before, and Gen as the fencing token on record.
type Lease struct {
	sched *sched.Schedule
	job   sched.Job
	d     time.Duration
	now   func() time.Time
	lost  context.CancelFunc // ends the job's context

	mu    sync.Mutex
	until time.Time
	newer atomic.Bool // the step left the job for a newer build (LeaveForNewer)
}

// LeaveForNewer is what a step returns for a job it does not understand:
// a name of a format this build does not know, or a record a newer build
// wrote (state.ErrRecordTooNew). The job is neither failed nor finished:
// it goes back to the schedule untouched, due as it was, and from then on
// only replicas of a newer schema generation claim it (sched.LeaveFor).
// Outside a Worker's step it leaves the job to its lease.
func LeaveForNewer(ctx context.Context) (next time.Time, leave bool) {
	if l := LeaseOf(ctx); l != nil {
		l.newer.Store(true)
	}
	return time.Time{}, true
}

type leaseKey struct{}

// LeaseOf returns the lease of the job whose step ctx is, or nil outside a
// job's step.
func LeaseOf(ctx context.Context) *Lease {
	l, _ := ctx.Value(leaseKey{}).(*Lease)
	return l
}

// NewLease returns the lease of job j, claimed from s for d at claimed,
// and ctx carrying it, which ends when the lease is found lost. A Worker
// makes one for each job it runs (and renews it); a test that runs a
// step itself makes its own.
func NewLease(ctx context.Context, s *sched.Schedule, j sched.Job, d time.Duration, claimed time.Time, now func() time.Time) (context.Context, *Lease, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	l := &Lease{sched: s, job: j, d: d, now: now, until: claimed.Add(d), lost: cancel}
	return context.WithValue(ctx, leaseKey{}, l), l, cancel
}

// Gen is the lease's generation: higher than that of every earlier claim
// of the job (sched.Job.Gen).
func (l *Lease) Gen() int64 { return l.job.Gen }

// Until is when the lease runs out as last renewed: no other worker can
// claim the job before then.
func (l *Lease) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// Renew extends the lease to a full lease from now, proving it is still
// held, and returns its new end. A lease another worker took fails with
// sched.ErrJobLeaseLost and ends the job's context; any other error
// leaves the lease as it was (it may still run out).
func (l *Lease) Renew(ctx context.Context) (time.Time, error) {
	until := l.now().Add(l.d)
	err := l.sched.Extend(ctx, l.job, until)
	if errors.Is(err, sched.ErrJobLeaseLost) {
		l.lost()
	}
	if err != nil {
		return time.Time{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until = until
	return until, nil
}
