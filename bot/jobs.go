package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"shopbot/state"
)

// jobWorker claims the due jobs of one durable schedule and runs them, a
// few at once. Both the fulfilment worker (order jobs) and the order chat
// relay (chat polls) are one.
type jobWorker struct {
	what     string // what the jobs are, for logs
	sched    *state.Schedule
	now      func() time.Time
	log      *slog.Logger
	tick     time.Duration // how often due jobs are claimed
	lease    time.Duration // a claimed job is ours this long, renewed while it runs
	timeout  time.Duration // one run's bound
	parallel int           // jobs run at once
	// step runs one job and says when to run it again: a zero time
	// finishes the job. With leave set the job is left as it is, to come
	// back when its lease runs out, as a dead worker's would (a crash at a
	// failpoint, or a job that is not this worker's).
	step func(ctx context.Context, j state.Job) (next time.Time, leave bool)
}

// run claims and runs due jobs until ctx ends, then waits for the jobs in
// flight.
func (w *jobWorker) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, w.parallel)
	t := time.NewTicker(w.tick)
	defer t.Stop()
	for {
		jobs, err := w.sched.Claim(ctx, w.now(), w.lease, w.parallel-len(sem))
		if err != nil && ctx.Err() == nil {
			w.log.Warn("claim jobs", "jobs", w.what, "err", err)
		}
		for _, j := range jobs {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				// A job in flight finishes even when ctx ends (a POST must not
				// be cut by our own shutdown, nor a relayed message go
				// unrecorded); its lease is kept alive meanwhile.
				jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
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
		}
	}
}

// finish runs the job's step and reschedules or finishes the job.
func (w *jobWorker) finish(ctx context.Context, j state.Job) {
	next, leave := w.step(ctx, j)
	if leave {
		return
	}
	var err error
	if next.IsZero() {
		err = w.sched.Done(ctx, j)
	} else {
		err = w.sched.Reschedule(ctx, j, next)
	}
	if err != nil && !errors.Is(err, state.ErrJobLeaseLost) {
		w.log.Warn("finish job", "jobs", w.what, "job", j.Name, "err", err)
	}
}

// keepLease extends the job's lease while it runs; stop ends that.
func (w *jobWorker) keepLease(ctx context.Context, j state.Job) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(w.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := w.sched.Extend(ctx, j, w.now().Add(w.lease)); err != nil {
					w.log.Warn("extend job lease", "jobs", w.what, "job", j.Name, "err", err)
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
