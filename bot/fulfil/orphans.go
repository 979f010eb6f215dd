package fulfil

import (
	"context"
	"errors"
	"strconv"
	"time"

	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// The orphan scan matches every upstream order against ours: an upstream
// order nobody claims for OrphanAfter (a create whose record Redis lost
// and that no paid order could prove its own, a duplicate, an order placed
// by hand in the upstream account) is reported to admins once, with what
// it cost. An unfinished order that can prove the orphan its own adopts it
// before it places anything (see place). The scan is one durable job, so
// one replica runs it at a time.

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
	if err := f.orphanPass(ctx); err != nil {
		f.log.Warn("orphan scan", "err", err)
	}
	return next
}

func (f *Fulfiller) orphanPass(ctx context.Context) error {
	mark, err := f.orders.OrphanMark(ctx)
	if err != nil {
		return err
	}
	if mark == 0 {
		// The first scan on this store: what the upstream holds already
		// is history the shop never owned; start at the newest order.
		hint, err := f.orders.UpstreamHint(ctx)
		if err != nil {
			return err
		}
		if hint == 0 {
			if hint, err = f.newestUpstream(ctx); err != nil {
				return err
			}
		}
		if hint == 0 {
			hint = 1 // nothing upstream yet: everything from the first order on is scanned
		}
		if err := f.orders.NoteUpstream(ctx, hint); err != nil {
			return err
		}
		return f.orders.SetOrphanMark(ctx, hint)
	}
	var newest, pending int64
	var claimed []int64
	for u, err := range f.up.AllOrders(ctx, &reseller.OrdersOptions{Limit: 100}) {
		if err != nil {
			return err
		}
		if newest == 0 {
			newest = u.Number
		}
		if u.Number <= mark {
			break
		}
		if _, err := f.orders.ByUpstream(ctx, u.Number); err == nil {
			claimed = append(claimed, u.Number)
			continue
		}
		if done, err := f.orders.IsOrphan(ctx, u.Number); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		since, err := f.orders.UnclaimedSince(ctx, u.Number, f.now())
		if err != nil {
			return err
		}
		if f.now().Sub(since) < f.cfg.OrphanAfter {
			pending = u.Number // may still be claimed by a create in flight
			continue
		}
		f.reportOrphan(ctx, &u, "unclaimed for "+f.cfg.OrphanAfter.String())
	}
	if err := f.orders.ForgetUnclaimed(ctx, claimed...); err != nil {
		return err
	}
	if err := f.orders.NoteUpstream(ctx, newest); err != nil {
		return err
	}
	to := newest
	if pending != 0 {
		to = pending - 1
	}
	return f.orders.SetOrphanMark(ctx, to)
}

// reportOrphan tells admins, once per upstream order, that it belongs to
// no order of ours.
func (f *Fulfiller) reportOrphan(ctx context.Context, u *reseller.Order, why string) {
	fresh, err := f.orders.ReportOrphan(ctx, u.Number)
	if err != nil {
		f.log.Warn("report orphan upstream order", "upstream", u.Number, "err", err)
		return
	}
	_ = f.orders.ForgetUnclaimed(ctx, u.Number)
	if !fresh {
		return
	}
	f.log.Error("upstream order belongs to no order", "upstream", u.Number, "type", u.Type, "charged_usd", u.ChargedUSD.Decimal.String(), "why", why)
	if f.alerts != nil {
		_, _ = f.alerts.Raise(ctx, "upstream:orphan:"+itoa(u.Number), locales.T(f.lang0, "alert.orphan",
			"number", u.Number, "type", string(u.Type), "cost", locales.Money(f.lang0, u.ChargedUSD.Decimal), "why", locales.Escape(why)))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// newestUpstream reads the number of the upstream's newest order (0: none).
func (f *Fulfiller) newestUpstream(ctx context.Context) (int64, error) {
	return f.newestOfType(ctx, "")
}

// newestOfType reads the number of the upstream's newest order of type t
// (any type when empty; 0: none) and records it.
func (f *Fulfiller) newestOfType(ctx context.Context, t reseller.OrderType) (int64, error) {
	l, err := f.up.Orders(ctx, &reseller.OrdersOptions{Limit: 1, Type: t})
	if err != nil {
		return 0, err
	}
	if len(l.Data) == 0 {
		return 0, nil
	}
	n := l.Data[0].Number
	if err := f.orders.NoteUpstream(ctx, n); err != nil {
		f.log.Warn("note newest upstream order", "err", err)
	}
	return n, nil
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
	_, err = f.newestUpstream(ctx)
	return err
}

// AllClaimed reports whether every upstream order above the orphan scan's
// mark is claimed by an order of ours. Every upstream order at or below the
// mark is claimed or reported, and the mark never passes an unclaimed order
// before OrphanAfter, so while that holds no create of the last OrphanAfter
// is unaccounted for: a Star charge whose quote and order a Redis crash
// took bought nothing, and may be refunded. An unclaimed order the scan
// first saw before since is left out: an order made for a charge paid at
// since cannot be older than it (pass the charge's time less a margin for
// the clocks). known is false when that cannot be told: no upstream, or no
// mark yet.
func (f *Fulfiller) AllClaimed(ctx context.Context, since time.Time) (all, known bool, err error) {
	if f.up == nil {
		return false, false, nil
	}
	mark, err := f.orders.OrphanMark(ctx)
	if err != nil || mark == 0 {
		return false, false, err
	}
	for u, err := range f.up.AllOrders(ctx, &reseller.OrdersOptions{Limit: 100}) {
		if err != nil {
			return false, false, err
		}
		if u.Number <= mark {
			return true, true, nil
		}
		if _, err := f.orders.ByUpstream(ctx, u.Number); err != nil {
			if !errors.Is(err, state.ErrOrderNotFound) {
				return false, false, err
			}
			seen, ok, err := f.orders.UnclaimedSeen(ctx, u.Number)
			if err != nil {
				return false, false, err
			}
			if !ok || !seen.Before(since) {
				return false, true, nil
			}
		}
	}
	return true, true, nil
}

// OrphanAfter is how long an upstream order may stay unclaimed before it
// is reported (and the orphan scan's mark passes it).
func (f *Fulfiller) OrphanAfter() time.Duration { return f.cfg.OrphanAfter }
