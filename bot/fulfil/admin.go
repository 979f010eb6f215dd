package fulfil

import (
	"context"
	"errors"
	"fmt"

	"shopbot/state/redisstore/sched"

	"shopbot/reseller"
	"shopbot/state"
)

// Admin operations on one order. Each is a compare-and-set on the order, so
// a double tap or two admins at once act once; each records the note (who
// did it) in the order's history and gets the order's job running.

// ErrDeliveredMeanwhile refuses an admin refund of an order the upstream
// completed: the buyer gets the goods instead.
var ErrDeliveredMeanwhile = errors.New("the upstream completed the order; it is being delivered, not refunded")

// ErrHasUpstream refuses placing again an order whose upstream order is known.
var ErrHasUpstream = errors.New("order already has an upstream order")

// Resend sends a delivered order's result to the buyer again; a delivery
// the buyer never got is recorded as done.
func (f *Fulfiller) Resend(ctx context.Context, o *state.Order, note string) error {
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
	return nil
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
func (f *Fulfiller) Refund(ctx context.Context, id int64, from, note string) error {
	o, err := f.orders.Get(ctx, id)
	if err != nil {
		return err
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
		if n.Rev != rev {
			return &state.TransitionError{ID: id, Status: n.Status, To: state.OrderRefunding, Err: state.ErrBadTransition}
		}
		return nil
	}, note)
	if err != nil {
		return err
	}
	f.log.Info("admin refunds an order", "order", id, "from", from, "note", note)
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
func (f *Fulfiller) Adopt(ctx context.Context, id int64, up *reseller.Order, note string) error {
	_, err := f.orders.Transition(ctx, id, []string{state.OrderNeedsReview}, state.OrderPlaced, func(x *state.Order) error {
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
	f.releaseSlotOf(ctx, id)
	f.clearAlert(ctx, ReviewAlert(id))
	return f.sched.Put(ctx, OrderJob(id), f.now())
}

// PlaceAgain sends a needs_review order back to placing with no attempt in
// flight, on the admin's word that nothing was created upstream: the
// worker then places it afresh.
func (f *Fulfiller) PlaceAgain(ctx context.Context, id int64, note string) error {
	_, err := f.orders.Transition(ctx, id, []string{state.OrderNeedsReview}, state.OrderPlacing, func(x *state.Order) error {
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
	f.releaseSlotOf(ctx, id)
	f.clearAlert(ctx, ReviewAlert(id))
	return f.sched.Put(ctx, OrderJob(id), f.now())
}

func (f *Fulfiller) clearAlert(ctx context.Context, key string) {
	if f.alerts != nil {
		_, _ = f.alerts.Clear(ctx, key)
	}
}
