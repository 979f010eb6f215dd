package fulfil

import (
	"context"
	"sync"
	"time"

	"shopbot/reseller"
	"shopbot/state"
)

// A Redis that crashes with AOF everysec, or fails over to a replica that
// was behind, loses its last second of writes: an order's upstream number
// among them. The replica that created the upstream order still knows it,
// so each replica remembers the creates it made in the last minutes, and
// when its canary (state.Canary) says Redis lost writes, it puts back every
// one the store no longer holds. Other orders of the kind meanwhile treat a
// freshly unclaimed upstream order as settling, not as a reason for review.

// recentFor is how long a create is remembered.
const recentFor = 3 * time.Minute

type recentCreate struct {
	charge string // the order's identity: ids are reused after a rollback
	up     reseller.Order
	at     time.Time
}

type recentCreates struct {
	mu   sync.Mutex
	list []recentCreate
}

// remember records that order o created upstream order up. The caller
// bumps the canary right after the create's writes: if Redis loses them, it
// loses the bump too, and the next check notices.
func (f *Fulfiller) remember(o *state.Order, up *reseller.Order) {
	f.recent.mu.Lock()
	defer f.recent.mu.Unlock()
	now := f.now()
	keep := f.recent.list[:0]
	for _, r := range f.recent.list {
		if now.Sub(r.at) < recentFor {
			keep = append(keep, r)
		}
	}
	f.recent.list = append(keep, recentCreate{charge: o.ChargeID, up: *up, at: now})
}

// repairFor is how long after a detected loss the remembered creates are
// put back again and again: the orders that made them may be rebuilt by
// the Stars sweep only a moment later.
const repairFor = time.Minute

// watchRollback checks the canary every second and puts back lost creates.
func (f *Fulfiller) watchRollback(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var until time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if f.checkCanary(ctx) {
			until = f.now().Add(repairFor)
		} else if f.now().Before(until) {
			f.recover(ctx)
		}
	}
}

// checkCanary bumps the canary and, when Redis lost writes since the last
// bump, puts back the lost creates and reports true.
func (f *Fulfiller) checkCanary(ctx context.Context) bool {
	lost, err := f.canary.Check(ctx)
	if err != nil || !lost {
		return false
	}
	f.log.Error("redis lost recent writes; putting back the upstream orders this process created")
	if f.onLoss != nil {
		f.onLoss()
	}
	f.recover(ctx)
	return true
}

// recover puts back every remembered create whose order lost it.
func (f *Fulfiller) recover(ctx context.Context) {
	f.recent.mu.Lock()
	list := append([]recentCreate(nil), f.recent.list...)
	f.recent.mu.Unlock()
	for _, r := range list {
		// By charge: order ids are reused after a rollback, and an order
		// Redis lost entirely is rebuilt by the Stars sweep under a new id.
		o, err := f.orders.ByCharge(ctx, r.charge)
		if err != nil {
			continue // not rebuilt yet: the next pass looks again
		}
		if o.UpstreamNumber == r.up.Number {
			f.forget(r.charge) // safe in the store again
			continue
		}
		if o.UpstreamNumber != 0 || (o.Status != state.OrderPaid && o.Status != state.OrderPlacing) {
			continue // another order under a reused id, or nothing lost
		}
		if owner, err := f.orders.ByUpstream(ctx, r.up.Number); err == nil && owner.ID != o.ID {
			continue
		}
		q, err := QuoteOf(o)
		if err != nil {
			continue
		}
		req, err := buildRequest(q)
		if err != nil {
			continue
		}
		up := r.up
		if req.match(&up) == noMatch {
			continue
		}
		if _, _, err := f.adoptFound(ctx, o, req, o.Slot, &found{matches: []reseller.Order{up}}, "put back after Redis lost it"); err != nil {
			f.log.Warn("put back a lost upstream number", "order", o.ID, "upstream", up.Number, "err", err)
			continue
		}
		f.log.Info("put back an upstream number Redis lost", "order", o.ID, "upstream", up.Number)
		_, _ = f.Hurry(ctx, o.ID)
	}
}

// settling reports whether any of the unclaimed upstream orders was first
// seen unclaimed less than settleFor ago.
func (f *Fulfiller) settling(ctx context.Context, list []reseller.Order) bool {
	for _, u := range list {
		since, err := f.orders.UnclaimedSince(ctx, u.Number, f.now())
		if err != nil || f.now().Sub(since) < f.cfg.Settle {
			return true
		}
	}
	return false
}

// releaseSlotIfIdle frees the kind's slot when the order has nothing in
// flight.
func (f *Fulfiller) releaseSlotIfIdle(ctx context.Context, o *state.Order, kind string) {
	if o.AttemptID != "" || kind == "" {
		return
	}
	if err := f.orders.ReleaseSlot(ctx, kind, o.ID); err != nil {
		f.log.Warn("release placement slot", "order", o.ID, "err", err)
		return
	}
	f.wakeSlotWaiter(ctx, kind)
}

// forget drops the remembered create of charge.
func (f *Fulfiller) forget(charge string) {
	f.recent.mu.Lock()
	defer f.recent.mu.Unlock()
	keep := f.recent.list[:0]
	for _, r := range f.recent.list {
		if r.charge != charge {
			keep = append(keep, r)
		}
	}
	f.recent.list = keep
}
