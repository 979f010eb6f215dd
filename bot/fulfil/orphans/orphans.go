// Package orphans is the fulfilment worker's orphan scan: it matches every
// upstream order against ours, and an upstream order nobody claims for
// After (a create whose record Redis lost and that no paid order could
// prove its own, a duplicate, an order placed by hand in the upstream
// account) is reported to admins once, with what it cost. An unfinished
// order that can prove the orphan its own adopts it before it places
// anything (fulfil's place). The scan's records (its mark, when each
// unclaimed order was first seen, the reported ones) are in
// records.Orders; fulfil runs a Pass as one durable job, so one replica
// scans at a time.
package orphans

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"shopbot/bot/notify"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
	"shopbot/state/redisstore/records"
)

// Scan is the orphan scan over the shop's orders and the upstream.
type Scan struct {
	Orders *records.Orders
	Up     *reseller.Client // nil: no upstream, nothing to scan
	Alerts notify.Alerter   // nil: reports are logged only
	Lang   locales.Lang     // the admins' language
	Log    *slog.Logger
	Now    func() time.Time
	// After is how long an upstream order may stay unclaimed before it is
	// reported (and the scan's mark passes it).
	After time.Duration
}

// Pass scans the upstream orders above the mark once.
func (s *Scan) Pass(ctx context.Context) error {
	mark, err := s.Orders.OrphanMark(ctx)
	if err != nil {
		return err
	}
	if mark == 0 {
		// The first scan on this store: what the upstream holds already
		// is history the shop never owned; start at the newest order.
		hint, err := s.Orders.UpstreamHint(ctx)
		if err != nil {
			return err
		}
		if hint == 0 {
			if hint, err = s.Newest(ctx, ""); err != nil {
				return err
			}
		}
		if hint == 0 {
			hint = 1 // nothing upstream yet: everything from the first order on is scanned
		}
		if err := s.Orders.NoteUpstream(ctx, hint); err != nil {
			return err
		}
		return s.Orders.SetOrphanMark(ctx, hint)
	}
	var newest, pending int64
	var claimed []int64
	for u, err := range s.Up.AllOrders(ctx, &reseller.OrdersOptions{Limit: 100}) {
		if err != nil {
			return err
		}
		if newest == 0 {
			newest = u.Number
		}
		if u.Number <= mark {
			break
		}
		if _, err := s.Orders.ByUpstream(ctx, u.Number); err == nil {
			claimed = append(claimed, u.Number)
			continue
		}
		if done, err := s.Orders.IsOrphan(ctx, u.Number); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		since, err := s.Orders.UnclaimedSince(ctx, u.Number, s.Now())
		if err != nil {
			return err
		}
		if s.Now().Sub(since) < s.After {
			pending = u.Number // may still be claimed by a create in flight
			continue
		}
		s.report(ctx, &u, "unclaimed for "+s.After.String())
	}
	if err := s.Orders.ForgetUnclaimed(ctx, claimed...); err != nil {
		return err
	}
	if err := s.Orders.NoteUpstream(ctx, newest); err != nil {
		return err
	}
	to := newest
	if pending != 0 {
		to = pending - 1
	}
	return s.Orders.SetOrphanMark(ctx, to)
}

// report tells admins, once per upstream order, that it belongs to no
// order of ours.
func (s *Scan) report(ctx context.Context, u *reseller.Order, why string) {
	fresh, err := s.Orders.ReportOrphan(ctx, u.Number)
	if err != nil {
		s.Log.Warn("report orphan upstream order", "upstream", u.Number, "err", err)
		return
	}
	_ = s.Orders.ForgetUnclaimed(ctx, u.Number)
	if !fresh {
		return
	}
	s.Log.Error("upstream order belongs to no order", "upstream", u.Number, "type", u.Type, "charged_usd", u.ChargedUSD.Decimal.String(), "why", why)
	if s.Alerts != nil {
		_, _ = s.Alerts.Raise(ctx, "upstream:orphan:"+strconv.FormatInt(u.Number, 10), locales.T(s.Lang, "alert.orphan",
			"number", u.Number, "type", string(u.Type), "cost", locales.Money(s.Lang, u.ChargedUSD.Decimal), "why", locales.Escape(why)))
	}
}

// Newest reads the number of the upstream's newest order of type t (any
// type when empty; 0: none) and records it as the newest number seen.
func (s *Scan) Newest(ctx context.Context, t reseller.OrderType) (int64, error) {
	l, err := s.Up.Orders(ctx, &reseller.OrdersOptions{Limit: 1, Type: t})
	if err != nil {
		return 0, err
	}
	if len(l.Data) == 0 {
		return 0, nil
	}
	n := l.Data[0].Number
	if err := s.Orders.NoteUpstream(ctx, n); err != nil {
		s.Log.Warn("note newest upstream order", "err", err)
	}
	return n, nil
}

// AllClaimed reports whether every upstream order above the scan's mark is
// claimed by an order of ours. Every upstream order at or below the mark
// is claimed or reported, and the mark never passes an unclaimed order
// before After, so while that holds no create of the last After is
// unaccounted for: a Star charge whose quote and order a Redis crash took
// bought nothing, and may be refunded. An unclaimed order the scan first
// saw before since is left out: an order made for a charge paid at since
// cannot be older than it (pass the charge's time less a margin for the
// clocks). known is false when that cannot be told: no upstream, or no
// mark yet.
func (s *Scan) AllClaimed(ctx context.Context, since time.Time) (all, known bool, err error) {
	if s.Up == nil {
		return false, false, nil
	}
	mark, err := s.Orders.OrphanMark(ctx)
	if err != nil || mark == 0 {
		return false, false, err
	}
	for u, err := range s.Up.AllOrders(ctx, &reseller.OrdersOptions{Limit: 100}) {
		if err != nil {
			return false, false, err
		}
		if u.Number <= mark {
			return true, true, nil
		}
		if _, err := s.Orders.ByUpstream(ctx, u.Number); err != nil {
			if !errors.Is(err, state.ErrOrderNotFound) {
				return false, false, err
			}
			seen, ok, err := s.Orders.UnclaimedSeen(ctx, u.Number)
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
