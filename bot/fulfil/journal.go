package fulfil

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"shopbot/bot/upstreamorder"
	"shopbot/reseller"
	"shopbot/state"
)

// The journal (state.Journal) holds every placement attempt of the host:
// an intent before each POST and, after it, what the attempt made (created)
// or that it made nothing (none). When one journal served every replica
// over its whole keep ("complete"), it is the list of every create that may
// exist upstream, which Redis, rolled back or failed over, may not be:
//
//   - an order whose attempt Redis lost gets the attempt back (its create
//     may exist, and only that attempt can claim it);
//   - an unclaimed upstream order that another order's open attempt can
//     explain is not this order's, unless this order has an open attempt
//     too (then nobody can tell, and nobody adopts it);
//   - an order that never had an attempt made nothing upstream.
//
// With a journal that is not complete (replicas on several hosts, or kept
// in memory) the protocol proves from Redis and the upstream alone.

// attempts is a reading of the journal's placement attempts.
type attempts struct {
	open     []state.JournalEntry // intents with no outcome yet, oldest first
	answered map[string]bool      // attempts whose uncertain create the server answered
	// bound is, for an answered attempt, the newest number of its type
	// right after the answer: its create, if any, is not above it.
	bound map[string]int64
	// creator is the charge whose create made each upstream number the
	// journal holds a create of (written before the number was stored).
	creator map[int64]string
}

// madeByAnother reports whether the journal names a charge other than
// charge as the maker of upstream order n: then n is never charge's own,
// whatever Redis lost of its claim (its maker's order puts it back).
func (a attempts) madeByAnother(charge string, n int64) bool {
	c, ok := a.creator[n]
	return ok && c != charge
}

// could reports whether attempt e's create could have taken number n.
func (a attempts) could(e state.JournalEntry, n int64) bool {
	b, bounded := a.bound[e.Attempt]
	return e.Watermark < n && (!bounded || n <= b)
}

// holders returns, for each upstream number the journal's created entries
// name, the charge whose order holds it: the newest entry of an order that
// took it without an attempt of its own (found unclaimed before placing:
// an identical purchase's create; or put back), else the newest create's.
// A create can lose its number to such an order before the create's own
// entry is written (the maker placed again; its entry is not its hold).
func holders(list []state.JournalEntry) map[int64]string {
	made, took := map[int64]string{}, map[int64]string{}
	for _, e := range list {
		if e.Kind != state.JournalCreated || e.Number == 0 {
			continue
		}
		if e.Attempt == "" {
			took[e.Number] = e.Charge
		} else {
			made[e.Number] = e.Charge
		}
	}
	maps.Copy(made, took)
	return made
}

// readAttempts reads the journal's open intents.
func (f *Fulfiller) readAttempts() attempts {
	list, err := f.journal.Recent("")
	if err != nil {
		f.log.Warn("read the journal", "err", err)
	}
	done := map[string]bool{}
	a := attempts{answered: map[string]bool{}, bound: map[string]int64{}, creator: map[int64]string{}}
	for _, e := range list {
		if e.Kind == state.JournalCreated || e.Kind == state.JournalNone {
			done[e.Attempt] = true
		}
	}
	a.creator = holders(list)
	for _, e := range list {
		switch {
		case e.Kind == state.JournalIntent && !done[e.Attempt]:
			a.open = append(a.open, e)
		case e.Kind == state.JournalUncertain && e.Answered:
			a.answered[e.Attempt] = true
			if e.Bounded {
				a.bound[e.Attempt] = e.Number
			}
		}
	}
	return a
}

// blockers returns the open attempts of kind by other charges whose create
// may be in flight or may still appear upstream: every open one but those
// the server answered. A create of the kind waits for them, as it would
// for the placement slot (which a Redis that lost writes may have freed).
func (a attempts) blockers(kind, charge string) []state.JournalEntry {
	var out []state.JournalEntry
	for _, e := range a.open {
		if e.Slot == kind && e.Charge != charge && !a.answered[e.Attempt] {
			out = append(out, e)
		}
	}
	return out
}

// others returns the open attempts of kind by other charges than charge
// whose create could have taken number n.
func (a attempts) others(kind, charge string, n int64) []state.JournalEntry {
	var out []state.JournalEntry
	for _, e := range a.open {
		if e.Slot == kind && e.Charge != charge && a.could(e, n) {
			out = append(out, e)
		}
	}
	return out
}

// mine reports whether charge has an open attempt whose create could have
// taken number n.
func (a attempts) mine(charge string, n int64) bool {
	return slices.ContainsFunc(a.open, func(e state.JournalEntry) bool { return e.Charge == charge && a.could(e, n) })
}

// hasOpen reports whether charge has an open attempt.
func (a attempts) hasOpen(charge string) bool {
	return slices.ContainsFunc(a.open, func(e state.JournalEntry) bool { return e.Charge == charge })
}

// lost returns the newest open attempt of the order's charge that the
// order no longer holds (Redis lost it).
func (a attempts) lost(o *state.Order) (state.JournalEntry, bool) {
	for i := len(a.open) - 1; i >= 0; i-- {
		if e := a.open[i]; e.Charge == o.ChargeID && e.Attempt != o.AttemptID {
			return e, true
		}
	}
	return state.JournalEntry{}, false
}

// journalComplete reports whether one journal, this one, served every
// replica over the journal's keep, so that it holds every attempt made in
// that time. It is read at most once a second.
func (f *Fulfiller) journalComplete(ctx context.Context) bool {
	if !f.journal.Shared() {
		return false
	}
	f.jc.Lock()
	defer f.jc.Unlock()
	if now := f.now(); now.Sub(f.jc.at) > time.Second {
		ids, err := f.orders.JournalsSince(ctx, now.Add(-f.journal.Keep()))
		f.jc.ok = err == nil && len(ids) == 1 && ids[0] == f.journal.ID()
		f.jc.at = now
	}
	return f.jc.ok
}

// journalCovers reports whether the journal provably holds every attempt
// of the order, so that none open in it means none made: it covers the
// whole time since the order was paid, undamaged (state.Journal.Covers).
// That is judged by the payment's own date, not by when Redis made the
// order: a store restored from an older backup makes a lost order again
// long after its payment, when the journal's entries of it may be gone. An
// order without a payment date is covered by nothing.
func (f *Fulfiller) journalCovers(o *state.Order) bool {
	return !o.PaidAt.IsZero() && f.journal.Covers(o.PaidAt)
}

// noteJournal records in Redis that this process uses its journal.
func (f *Fulfiller) noteJournal(ctx context.Context) {
	if err := f.orders.NoteJournal(ctx, f.journal.ID(), f.now()); err != nil {
		f.log.Warn("note the journal in use", "err", err)
	}
}

// journalIntent records the attempt before its POST.
func (f *Fulfiller) journalIntent(o *state.Order, req *upstreamorder.Request) error {
	return f.journal.Append(state.JournalEntry{Kind: state.JournalIntent, Charge: o.ChargeID, Attempt: o.AttemptID, Slot: req.Kind(), Watermark: o.AttemptWatermark})
}

// journalUncertain records that the attempt's outcome is unknown. When the
// server answered, the newest order number of the type now bounds what the
// create may have taken; bounded is false when it could not be read.
func (f *Fulfiller) journalUncertain(ctx context.Context, o *state.Order, t reseller.OrderType, answered bool) (bounded bool) {
	e := state.JournalEntry{Kind: state.JournalUncertain, Charge: o.ChargeID, Attempt: o.AttemptID, Answered: answered}
	if answered {
		if n, err := f.newestOfType(ctx, t); err == nil {
			e.Bounded, e.Number = true, n
		}
	}
	if err := f.journal.Append(e); err != nil {
		f.log.Error("journal an uncertain create", "order", o.ID, "err", err)
		return false
	}
	return e.Bounded
}

// journalOutcome records what attempt made: up (nil: nothing). An order
// that took an upstream order before any attempt of its own (found before
// placing: an identical purchase's create nobody had claimed) records it
// too, without an attempt: after a loss, that upstream order goes back to
// it, not to the purchase that made it and placed again (recover).
func (f *Fulfiller) journalOutcome(o *state.Order, attempt string, up *reseller.Order) {
	if attempt == "" && up == nil {
		return
	}
	e := state.JournalEntry{Kind: state.JournalNone, Charge: o.ChargeID, Attempt: attempt}
	if up != nil {
		e.Kind, e.Number, e.Upstream = state.JournalCreated, up.Number, withoutGoods(up.Raw)
	}
	if err := f.journal.Append(e); err != nil {
		f.log.Error("journal an attempt's outcome", "order", o.ID, "err", err)
	}
}

// restoreAttempt gives the order back the attempt Redis lost (its intent is
// in the journal with no outcome): the order is placing that attempt
// again, uncertain since now, so its create is looked for before any new
// one. It reports whether it did.
func (f *Fulfiller) restoreAttempt(ctx context.Context, o *state.Order, e state.JournalEntry) (bool, error) {
	if o.AttemptID != "" || o.UpstreamNumber != 0 || (o.Status != state.OrderPaid && o.Status != state.OrderPlacing) {
		return false, nil
	}
	req, err := upstreamorder.RequestOf(o)
	if err != nil || req.Kind() != e.Slot {
		return false, nil
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	kind := ""
	if !req.Fungible() {
		kind = e.Slot
	}
	_, err = f.move(ctx, o, []string{o.Status}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != "" {
			return errAttemptMoved
		}
		n.AttemptID, n.AttemptWatermark, n.Request, n.Signature = e.Attempt, e.Watermark, raw, req.Signature()
		n.Slot, n.UncertainAt, n.UncertainAnswered = kind, f.now().UTC(), false
		if n.PlacingAt.IsZero() {
			n.PlacingAt = e.At
		}
		return nil
	}, "attempt "+e.Attempt+" back from the journal")
	if err != nil {
		return false, err
	}
	f.log.Info("placing attempt Redis lost is back from the journal", "order", o.ID, "attempt", e.Attempt)
	return true, nil
}
