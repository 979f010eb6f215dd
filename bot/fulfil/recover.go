package fulfil

import (
	"context"
	"encoding/json"
	"time"

	"shopbot/bot/upstreamorder"
	"shopbot/reseller"
	"shopbot/state"
)

// A Redis that crashes with AOF everysec, fails over to a replica that was
// behind, or is restored from a snapshot loses its last writes: an order's
// upstream number among them. Every create is written to the journal
// (state.Journal: fsynced, outside Redis, shared by the host's replicas)
// before its number is stored, so the number survives the loss even when
// the replica that made the create dies with it. The order is put back:
// right before any new create of it (place), and by every replica for a
// while after its canary (redisstore.Canary) says Redis lost writes, or after it
// starts (it cannot know what happened while it was down). Other orders of
// the kind meanwhile treat a freshly unclaimed upstream order as settling,
// not as a reason for review.

// remember records that order o created upstream order up, before the
// create's Redis writes. The caller bumps the canary right after those: if
// Redis loses them, it loses the bump too, and the next check notices.
func (f *Fulfiller) remember(o *state.Order, up *reseller.Order) {
	e := state.JournalEntry{Kind: state.JournalCreated, Charge: o.ChargeID, Attempt: o.AttemptID, Number: up.Number, Upstream: withoutGoods(up.Raw)}
	if err := f.journal.Append(e); err != nil {
		f.log.Error("journal an upstream create", "order", o.ID, "upstream", up.Number, "err", err)
	}
}

// withoutGoods returns the upstream order object without its codes and
// keys (the journal never holds what a buyer gets).
func withoutGoods(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	delete(m, "codes")
	delete(m, "keys")
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}

// repairFor is how long after a detected loss (or a start) the journaled
// creates are put back again and again: the orders that made them may be
// rebuilt by the Stars sweep only a moment later.
const repairFor = time.Minute

// watchRollback checks the canary every second and puts back lost creates;
// it starts by repairing, as a process that just started cannot know what
// Redis lost while it was down.
//
// The canary's values are also kept in the journal's directory
// (state.Journal.NoteCanary): a process that starts takes the values its
// shop's processes saw last as seen, so a store that lost writes while no
// process ran (restored from a backup with every replica down) is noticed
// at the first check, and its loss recorded (loss.go).
func (f *Fulfiller) watchRollback(ctx context.Context) {
	t := time.NewTicker(f.cfg.CanaryEvery)
	defer t.Stop()
	until := f.now().Add(repairFor)
	seen, err := f.journal.LastCanary()
	if err != nil {
		f.log.Warn("read the canary values the journal kept", "err", err)
	} else {
		f.canary.Remember(seen)
	}
	f.noteJournal(ctx)
	if err == nil && len(seen) == 0 && len(f.journal.Continues()) > 0 {
		// The first process of a store that continues an earlier one (it
		// came back empty while no process ran): everything the earlier
		// store held is lost, which no canary of this store can tell.
		f.log.Warn("the store continues an earlier store that is gone; recording the loss")
		f.loss.Lock()
		f.loss.noticed++
		f.loss.Unlock()
		f.noteLoss(ctx)
	}
	f.checkCanary(ctx)
	f.noteCanary()
	f.recover(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f.noteJournal(ctx)
		if f.lossPending() {
			f.noteLoss(ctx)
		}
		lost := f.checkCanary(ctx)
		f.noteCanary()
		if lost {
			until = f.now().Add(repairFor)
		} else if f.now().Before(until) {
			f.recover(ctx)
		}
	}
}

// noteCanary keeps the canary's values in the journal's directory.
func (f *Fulfiller) noteCanary() {
	if err := f.journal.NoteCanary(f.canary.Seen()); err != nil {
		f.log.Warn("keep the canary values in the journal", "err", err)
	}
}

// checkCanary bumps the canary and, when Redis lost writes since the last
// bump, puts back the lost creates and reports true.
func (f *Fulfiller) checkCanary(ctx context.Context) bool {
	lost, _ := f.canaryLost(ctx)
	return lost
}

// canaryLost is checkCanary that also says when the check itself failed.
func (f *Fulfiller) canaryLost(ctx context.Context) (bool, error) {
	lost, err := f.canary.Check(ctx)
	if err != nil || !lost {
		return false, err
	}
	f.log.Error("redis lost recent writes; putting back the journaled upstream orders")
	f.loss.Lock()
	f.loss.noticed++ // before the mark is recorded: a listing under way looks again (look)
	// Nothing unclaimed is sorted out until the mark is recorded (noteLoss,
	// after OnLoss, which may take a while: it stores again what the
	// archive shows delivered).
	f.loss.pending = true
	f.loss.Unlock()
	f.done.Lock()
	f.done.m = nil // what was back may be lost again
	f.done.Unlock()
	if f.onLoss != nil {
		f.onLoss() // the Stars sweep, first: a lost paid order waits for nothing else
	}
	f.noteLoss(ctx)
	f.recover(ctx)
	return true, nil
}

// recover puts back every journaled create whose order lost it.
func (f *Fulfiller) recover(ctx context.Context) {
	list, err := f.journal.Recent(state.JournalCreated)
	if err != nil {
		f.log.Warn("read the journal", "err", err)
	}
	// Only a charge's newest entry, of an upstream number its order holds
	// (holders), is put back: an order that placed again after an
	// identical purchase took its create holds the later one, and that
	// purchase the earlier (its own entry, written when it took it).
	holder, newest := holders(list), map[string]int64{}
	for _, e := range list {
		newest[e.Charge] = e.Number
	}
	for _, e := range list {
		if newest[e.Charge] != e.Number || holder[e.Number] != e.Charge || f.restored(e.Charge, e.Number) {
			continue
		}
		// By charge: order ids are reused after a rollback, and an order
		// Redis lost entirely is rebuilt by the Stars sweep under a new id.
		o, err := f.orders.ByCharge(ctx, e.Charge)
		if err != nil {
			continue // not rebuilt yet: the next pass looks again
		}
		if ok, _ := f.putBack(ctx, o, e); ok {
			_, _ = f.Hurry(ctx, o.ID)
		}
	}
}

// journaledCreate returns the newest journaled create of the order's
// charge that the order does not hold.
func (f *Fulfiller) journaledCreate(o *state.Order) (state.JournalEntry, bool) {
	e, ok, err := f.journal.ByCharge(state.JournalCreated, o.ChargeID)
	if err != nil {
		f.log.Warn("read the journal", "err", err)
	}
	if !ok || e.Number == o.UpstreamNumber {
		return state.JournalEntry{}, false
	}
	return e, true
}

// putBackJournaled puts back the order's journaled create, if the store
// lost it: reconciling with the journal comes before any create. again
// says the order moved on (run its job again).
func (f *Fulfiller) putBackJournaled(ctx context.Context, o *state.Order) (again bool, err error) {
	att := f.readAttempts()
	// A create an identical purchase took since (its own entry, newer)
	// is not put back.
	if e, ok := f.journaledCreate(o); ok && !att.madeByAnother(o.ChargeID, e.Number) {
		return f.putBack(ctx, o, e)
	}
	if e, ok := att.lost(o); ok {
		return f.restoreAttempt(ctx, o, e)
	}
	return false, nil
}

// putBack gives order o the upstream order its journaled create e made,
// when the store lost it: o is still paid or placing without a number,
// and nobody else claims e's number. It reports whether it did.
func (f *Fulfiller) putBack(ctx context.Context, o *state.Order, e state.JournalEntry) (bool, error) {
	if o.UpstreamNumber == e.Number {
		f.markRestored(e.Charge, e.Number) // safe in the store again
		return false, nil
	}
	if o.UpstreamNumber != 0 || (o.Status != state.OrderPaid && o.Status != state.OrderPlacing) {
		return false, nil // another order under a reused id, or nothing lost
	}
	if owner, err := f.orders.ByUpstream(ctx, e.Number); err == nil && owner.ID != o.ID {
		return false, nil
	}
	var up reseller.Order
	if err := json.Unmarshal(e.Upstream, &up); err != nil || up.Number != e.Number {
		return false, nil
	}
	req, err := upstreamorder.RequestOf(o)
	if err != nil || req.Match(&up) == upstreamorder.NoMatch {
		return false, nil
	}
	kind := o.Slot
	if kind == "" && !req.Fungible() {
		kind = req.Kind()
	}
	if _, _, err := f.adoptFound(ctx, o, req, kind, &found{matches: []reseller.Order{up}}, "put back from the journal"); err != nil {
		f.log.Warn("put back a lost upstream number", "order", o.ID, "upstream", up.Number, "err", err)
		return false, err
	}
	f.log.Info("put back an upstream number Redis lost", "order", o.ID, "upstream", up.Number)
	f.markRestored(e.Charge, e.Number)
	return true, nil
}

// restored reports whether the journaled create of charge is known to be
// back in the store (this process checked since).
func (f *Fulfiller) restored(charge string, number int64) bool {
	f.done.Lock()
	defer f.done.Unlock()
	return f.done.m[charge] == number
}

func (f *Fulfiller) markRestored(charge string, number int64) {
	f.done.Lock()
	defer f.done.Unlock()
	if f.done.m == nil || len(f.done.m) > 100_000 {
		f.done.m = map[string]int64{}
	}
	f.done.m[charge] = number
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
	f.releaseKind(ctx, kind, o.ID)
}
