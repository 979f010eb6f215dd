package fulfil

import (
	"context"
	"time"

	"shopbot/reseller"
)

// The orphan scan (package orphans) runs as one durable job, so one
// replica runs it at a time; this file schedules it and reads the
// upstream's newest order for the placement's watermarks.

// orphanJob is the schedule job of the orphan scan.
const orphanJob = "orders:orphan-scan"

// startOrphanScan makes sure the scan has a job.
func (f *Fulfiller) startOrphanScan(ctx context.Context) error {
	if f.up == nil {
		return nil
	}
	_, ok, err := f.sched.Due(ctx, orphanJob)
	if err != nil || ok {
		return err
	}
	return f.sched.Put(ctx, orphanJob, f.now())
}

// scanOrphans runs one pass and says when to run the next.
func (f *Fulfiller) scanOrphans(ctx context.Context) time.Time {
	next := f.now().Add(f.cfg.OrphanEvery)
	if f.up == nil {
		return next
	}
	if err := f.orphans.Pass(ctx); err != nil {
		f.log.Warn("orphan scan", "err", err)
	}
	return next
}

// newestOfType reads the number of the upstream's newest order of type t
// (any type when empty; 0: none) and records it.
func (f *Fulfiller) newestOfType(ctx context.Context, t reseller.OrderType) (int64, error) {
	return f.orphans.Newest(ctx, t)
}

// learnWatermark makes sure the store knows an upstream order number, so
// every order paid from now on has a watermark to look above.
func (f *Fulfiller) learnWatermark(ctx context.Context) error {
	if f.up == nil {
		return nil
	}
	hint, err := f.orders.UpstreamHint(ctx)
	if err != nil || hint > 0 {
		return err
	}
	_, err = f.newestOfType(ctx, "")
	return err
}

// AllClaimed reports whether every upstream order above the orphan scan's
// mark is claimed by an order of ours (orphans.Scan.AllClaimed).
func (f *Fulfiller) AllClaimed(ctx context.Context, since time.Time) (all, known bool, err error) {
	return f.orphans.AllClaimed(ctx, since)
}

// OrphanAfter is how long an upstream order may stay unclaimed before it
// is reported (and the orphan scan's mark passes it).
func (f *Fulfiller) OrphanAfter() time.Duration { return f.cfg.OrphanAfter }
