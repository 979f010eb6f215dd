package fulfil

import (
	"context"
	"errors"

	"shopbot/bot/upstreamorder"
	"shopbot/state"
)

// The placement slots of kinds (place.go, step 1 of the protocol): an
// order takes its kind's slot before it lists the upstream and keeps it
// until its create's outcome is stored; the others wait in line (by
// payment) and are woken when the slot is handed to them.

// holdSlot takes the kind's slot for the order. already says the order held
// it before (so nothing of the kind was created meanwhile by anyone else);
// ok false means another order's create of the kind is in flight and this
// one must wait.
func (f *Fulfiller) holdSlot(ctx context.Context, o *state.Order, kind string) (already, ok bool, err error) {
	for range 3 {
		// The line is by payment: an order placing again after an
		// uncertain create goes before the orders paid after it.
		holder, handed, err := f.orders.AcquireSlot(ctx, kind, o.ID, o.CreatedAt)
		if err != nil {
			return false, false, err
		}
		if handed {
			// The slot was free with orders in line (a hand-over lost to a
			// crash or a Redis rollback): the first of them has it now.
			f.wake(ctx, holder)
		}
		if holder == o.ID {
			return o.Slot == kind && o.AttemptID != "", true, nil
		}
		h, err := f.orders.Get(ctx, holder)
		if err != nil && !errors.Is(err, state.ErrOrderNotFound) {
			return false, false, err
		}
		if err == nil && (h.Status == state.OrderPaid || h.Status == state.OrderPlacing) {
			// A create of this kind is in flight or uncertain, or about to
			// be (the holder lists the upstream before writing its intent).
			// The order waits in line (AcquireSlot queued it): the holder
			// hands the slot over and wakes it when it is done.
			f.log.Debug("placement waits for the slot", "order", o.ID, "kind", kind, "holder", holder, "holder_status", h.Status, "holder_attempt", h.AttemptID)
			return false, false, nil
		}
		// The holder no longer needs it (it was placed, refunded or sent to
		// review, and a crash came before the release): take it over.
		took, err := f.orders.TakeSlot(ctx, kind, holder, o.ID)
		if err != nil {
			return false, false, err
		}
		if took {
			return false, true, nil
		}
	}
	return false, false, nil
}

// claimSlot takes the placement slot the request needs. A fungible request
// (the upstream echoes all of it) needs none: any unclaimed order that
// matches it is the same purchase, and claims are unique, so identical
// purchases resolve one to one however their creates interleave. kind is
// "" then, and already reports whether an attempt is on record.
func (f *Fulfiller) claimSlot(ctx context.Context, o *state.Order, req *upstreamorder.Request) (kind string, already, ok bool, err error) {
	if req.Fungible() {
		return "", o.AttemptID != "", true, nil
	}
	kind = req.Kind()
	already, ok, err = f.holdSlot(ctx, o, kind)
	return kind, already, ok, err
}

// releaseSlot frees the slot the order holds, if any.
func (f *Fulfiller) releaseSlot(ctx context.Context, o *state.Order) {
	if o.Slot != "" {
		f.releaseKind(ctx, o.Slot, o.ID)
	}
}

// releaseKind gives up order id's hold on the slot of kind: the slot goes
// to the order waiting longest, whose job runs now.
func (f *Fulfiller) releaseKind(ctx context.Context, kind string, id int64) {
	next, err := f.orders.ReleaseSlot(ctx, kind, id)
	if err != nil {
		f.log.Warn("release placement slot", "order", id, "err", err)
		return
	}
	if next != 0 {
		f.wake(ctx, next)
	}
}

// wake runs order id's job now: it was handed its kind's slot. A job that
// is running right now runs again as soon as it is done (sched.Schedule
// keeps the wake), so an order that decided to wait in line a moment
// before is not left waiting for its backstop (Config.SlotWait).
func (f *Fulfiller) wake(ctx context.Context, id int64) {
	if _, err := f.sched.Hurry(ctx, OrderJob(id), f.now()); err != nil {
		f.log.Warn("wake the next order of the slot", "order", id, "err", err)
		return
	}
	if k := f.kick.Load(); k != nil {
		(*k)()
	}
}

// releaseSlotOf frees whatever slot order id holds.
func (f *Fulfiller) releaseSlotOf(ctx context.Context, id int64) {
	if o, err := f.orders.Get(ctx, id); err == nil {
		f.releaseSlot(ctx, o)
	}
}
