package fulfil

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"shopbot/state/redisstore/sched"

	"shopbot/reseller"
	"shopbot/state"
)

// Admin operations on one order, for the chat (/order N) and the console
// alike. Each is a compare-and-set on the order, so a double tap or two
// admins at once act once; each records who did it (state.Actor.Note) in
// the order's history and, once it took effect, in the audit log
// (Deps.Audit), and gets the order's job running. Each
// names the order by its number and its charge's tag (state.Order.Ref; ""
// for any), so an order number Redis handed out again after a loss is never
// acted on as the purchase the admin was shown.

// ErrDeliveredMeanwhile refuses an admin refund of an order the upstream
// completed: the buyer gets the goods instead.
var ErrDeliveredMeanwhile = errors.New("the upstream completed the order; it is being delivered, not refunded")

// ErrHasUpstream refuses placing again an order whose upstream order is known.
var ErrHasUpstream = errors.New("order already has an upstream order")

// ErrOrderReplaced refuses an admin operation on an order number that names
// another purchase now than the one the admin was shown (tag: the charge's
// tag of state.Order.Ref; Redis lost writes and handed the number out again).
var ErrOrderReplaced = errors.New("the order number names another purchase now")

// Resend sends a delivered order's result to the buyer again; a delivery
// the buyer never got is recorded as done.
func (f *Fulfiller) Resend(ctx context.Context, by state.Actor, o *state.Order) error {
	note := by.Note("sent to the buyer again")
	var err error
	if o.DeliveredAt.IsZero() {
		err = f.deliver(ctx, o)
	} else {
		err = f.sendResult(ctx, o)
	}
	if err != nil {
		return err
	}
	if _, err := f.move(ctx, o, []string{state.OrderDelivered}, state.OrderDelivered, nil, note); err != nil {
		f.log.Warn("record admin resend", "order", o.ID, "err", err)
	}
	f.audit(ctx, by, state.AuditResend, o.ID, "")
	return nil
}

// RunNow is an admin's Hurry: the order's job due now, audited.
func (f *Fulfiller) RunNow(ctx context.Context, by state.Actor, id int64) (running bool, err error) {
	running, err = f.Hurry(ctx, id)
	if err == nil {
		f.audit(ctx, by, state.AuditRun, id, "")
	}
	return running, err
}

// audit records an admin's action on order id in the audit log; a failure
// to record is logged, as the action itself is done.
func (f *Fulfiller) audit(ctx context.Context, by state.Actor, action string, id int64, detail string) {
	if f.auditLog == nil {
		return
	}
	e := state.AuditEntry{At: f.now(), Actor: by, Action: action, Target: state.AuditOrder(id), Detail: detail}
	if err := f.auditLog.Record(ctx, e); err != nil {
		f.log.Warn("audit an admin action", "order", id, "action", action, "err", err)
	}
}

// Hurry makes the order's job due now without cutting a worker that runs
// it right now (that worker carries on; it reports running). An order with
// no job gets one, as on start.
func (f *Fulfiller) Hurry(ctx context.Context, id int64) (running bool, err error) {
	res, err := f.sched.Hurry(ctx, OrderJob(id), f.now())
	if err != nil {
		return false, err
	}
	if res == sched.HurryMissing {
		return false, f.sched.Put(ctx, OrderJob(id), f.now())
	}
	return res == sched.HurryRunning, nil
}

// Refund moves the order, from the status the admin confirmed, to
// refunding and gets its job running: the worker refunds exactly once, the
// way the buyer paid. An order that reached the upstream is read there
// first: completed means no refund (ErrDeliveredMeanwhile; the worker
// delivers it). One still in progress is refunded on the admin's word (the
// confirmation warns about it). A refusal because the order moved meanwhile wraps
// state.ErrBadTransition.
func (f *Fulfiller) Refund(ctx context.Context, by state.Actor, id int64, tag, from string) error {
	note := by.Note("refund")
	o, err := f.orders.Get(ctx, id)
	if err != nil {
		return err
	}
	if !o.Is(tag) {
		return ErrOrderReplaced
	}
	if o.Status != from {
		return &state.TransitionError{ID: id, Status: o.Status, To: state.OrderRefunding, Err: state.ErrBadTransition}
	}
	if o.UpstreamNumber != 0 {
		if f.up == nil {
			return errors.New("no upstream client to check the order with")
		}
		up, err := f.up.Order(ctx, o.UpstreamNumber)
		if err != nil {
			return fmt.Errorf("check upstream order %d before refunding: %w", o.UpstreamNumber, err)
		}
		if up.Status.Is(reseller.OrderCompleted) {
			if o.Status == state.OrderPlaced {
				_, _ = f.Hurry(ctx, id) // the worker delivers it now
			}
			return ErrDeliveredMeanwhile
		}
	}
	rev := o.Rev
	_, err = f.orders.Transition(ctx, id, []string{from}, state.OrderRefunding, func(n *state.Order) error {
		if !n.Is(tag) {
			return ErrOrderReplaced
		}
		if n.Rev != rev {
			return &state.TransitionError{ID: id, Status: n.Status, To: state.OrderRefunding, Err: state.ErrBadTransition}
		}
		return nil
	}, note)
	if err != nil {
		return err
	}
	f.log.Info("admin refunds an order", "order", id, "from", from, "admin", by.ID, "via", by.Via)
	f.audit(ctx, by, state.AuditRefund, id, "from "+from)
	f.clearAlert(ctx, ReviewAlert(id))
	if from == state.OrderNeedsReview {
		// No worker runs a needs_review order, so Put cannot cut one.
		return f.sched.Put(ctx, OrderJob(id), f.now())
	}
	_, err = f.Hurry(ctx, id)
	return err
}

// Adopt makes the upstream order number the order's own (needs_review ->
// placed, claiming the number), so the worker tracks it to delivered or
// refunded. It returns state.ErrUpstreamClaimed when another order owns
// the number.
func (f *Fulfiller) Adopt(ctx context.Context, by state.Actor, id int64, tag string, up *reseller.Order) error {
	note := by.Note("adopted upstream " + strconv.FormatInt(up.Number, 10))
	_, err := f.orders.Transition(ctx, id, []string{state.OrderNeedsReview}, state.OrderPlaced, func(x *state.Order) error {
		if !x.Is(tag) {
			return ErrOrderReplaced
		}
		if x.UpstreamNumber != 0 && x.UpstreamNumber != up.Number {
			return ErrHasUpstream
		}
		f.claim(x, up)
		return nil
	}, note)
	if err != nil {
		return err
	}
	f.log.Info("admin adopted an upstream order", "order", id, "upstream", up.Number)
	f.audit(ctx, by, state.AuditAdopt, id, "upstream "+strconv.FormatInt(up.Number, 10))
	f.releaseSlotOf(ctx, id)
	f.clearAlert(ctx, ReviewAlert(id))
	return f.sched.Put(ctx, OrderJob(id), f.now())
}

// PlaceAgain sends a needs_review order back to placing with no attempt in
// flight, on the admin's word that nothing was created upstream: the
// worker then places it afresh.
func (f *Fulfiller) PlaceAgain(ctx context.Context, by state.Actor, id int64, tag string) error {
	note := by.Note("place again (nothing was created upstream)")
	_, err := f.orders.Transition(ctx, id, []string{state.OrderNeedsReview}, state.OrderPlacing, func(x *state.Order) error {
		if !x.Is(tag) {
			return ErrOrderReplaced
		}
		if x.UpstreamNumber != 0 {
			return ErrHasUpstream
		}
		x.AttemptID = ""
		return nil
	}, note)
	if err != nil {
		return err
	}
	f.log.Info("admin places an order again", "order", id)
	f.audit(ctx, by, state.AuditPlaceAgain, id, "")
	f.releaseSlotOf(ctx, id)
	f.clearAlert(ctx, ReviewAlert(id))
	return f.sched.Put(ctx, OrderJob(id), f.now())
}

func (f *Fulfiller) clearAlert(ctx context.Context, key string) {
	if f.alerts != nil {
		_, _ = f.alerts.Clear(ctx, key)
	}
}

// ChargeRefunded settles the order of a Stars charge that Telegram lists as
// refunded while the order is not refunding or refunded: a store that lost
// writes (a restore from a backup) took the refund's record and the order's
// later steps with it. Every refund of a charge with an order goes through
// refunding, so the refund is the shop's own, and a fact: the order goes to
// refunding (the worker's refund finds the charge refunded, records it and
// never places the order again). A delivered order is left as it is. It
// reports whether it moved the order.
func (f *Fulfiller) ChargeRefunded(ctx context.Context, charge string) (bool, error) {
	o, err := f.orders.ByCharge(ctx, charge)
	if errors.Is(err, state.ErrOrderNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if o.PayMethod != state.PayStars || o.Status == state.OrderRefunding || !state.CanMove(o.Status, state.OrderRefunding) {
		return false, nil
	}
	from := o.Status
	if from == state.OrderPlacing && o.AttemptID != "" {
		// A create of the order may be in flight or in doubt: its worker
		// settles it and then refunds instead of placing again (place), or
		// holds an upstream order that went through for an admin (complete).
		if !o.RefundSeen.IsZero() {
			return false, nil
		}
		if _, err := f.move(ctx, o, []string{from}, from, func(n *state.Order) error {
			n.RefundSeen = f.now().UTC()
			return nil
		}, "the charge is refunded at Telegram; the store had lost the refund"); err != nil {
			if errors.Is(err, state.ErrBadTransition) || errors.Is(err, errAttemptMoved) {
				return false, nil
			}
			return false, err
		}
		_, err := f.Hurry(ctx, o.ID)
		return true, err
	}
	if _, err := f.move(ctx, o, []string{from}, state.OrderRefunding, nil, "the charge is refunded at Telegram; the store had lost the refund"); err != nil {
		if errors.Is(err, state.ErrBadTransition) || errors.Is(err, errAttemptMoved) {
			return false, nil // moved meanwhile: the next sweep looks again
		}
		return false, err
	}
	f.log.Warn("order of a charge Telegram lists as refunded put back to refunding", "order", o.ID, "from", from, "charge", charge)
	f.clearAlert(ctx, ReviewAlert(o.ID))
	return true, f.sched.Put(ctx, OrderJob(o.ID), f.now())
}
