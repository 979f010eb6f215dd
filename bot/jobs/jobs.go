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

	"shopbot/state/redisstore/sched"
)

// Worker claims the due jobs of one durable schedule and runs them, a
// few at once. Both the fulfilment worker (order jobs) and the order chat
// relay (chat polls) are one.
type Worker struct {
	What     string // what the jobs are, for logs
	Sched    *sched.Schedule
	Now      func() time.Time
	Log      *slog.Logger
	Tick     time.Duration // how often due jobs are claimed
	Lease    time.Duration // a claimed job is ours this long, renewed while it runs
	Timeout  time.Duration // one run's bound
	Parallel int           // jobs run at once
	// step runs one job and says when to run it again: a zero time
	// finishes the job. With leave set the job is left as it is, to come
	// back when its lease runs out, as a dead worker's would (a crash at a
	// failpoint, or a job that is not this worker's).
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
		jobs, err := w.Sched.Claim(ctx, w.Now(), w.Lease, free)
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
				// unrecorded); its lease is kept alive meanwhile.
				jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.Timeout)
				defer cancel()
				stop := w.keepLease(jctx, j)
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
	if leave {
		return
	}
	var err error
	if next.IsZero() {
		err = w.Sched.Done(ctx, j)
	} else {
		err = w.Sched.Reschedule(ctx, j, next)
	}
	if err != nil && !errors.Is(err, sched.ErrJobLeaseLost) {
		w.Log.Warn("finish job", "jobs", w.What, "job", j.Name, "err", err)
	}
}

// keepLease extends the job's lease every third of it while the job
// runs, so a short lease (a dead worker's job comes back within seconds)
// never expires under a live one; stop ends that.
func (w *Worker) keepLease(ctx context.Context, j sched.Job) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(w.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				// A failed extension (a Redis blip) is tried again at the
				// next tick; only a lease another worker took ends it.
				err := w.Sched.Extend(ctx, j, w.Now().Add(w.Lease))
				if errors.Is(err, sched.ErrJobLeaseLost) {
					w.Log.Warn("job lease lost while running", "jobs", w.What, "job", j.Name)
					return
				}
				if err != nil {
					w.Log.Warn("extend job lease; trying again", "jobs", w.What, "job", j.Name, "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
