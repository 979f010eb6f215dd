package fulfil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state"
)

// Reconciling with the upstream (place.go, steps 2 and 3 of the
// protocol): listing the upstream orders above a watermark and sorting out
// the unclaimed ones of the order's kind (look), settling an attempt whose
// create's outcome is unknown (placing: by the slot's proof, or the
// journal's, reconcileByJournal; nothingFound places again after the
// grace), and adopting what is provably the order's (adopt, claim).

// found is what a listing above a watermark turned up.
type found struct {
	// waitOthers says another order's attempt that may have made one of
	// possible is still in flight or within its grace: wait for it.
	waitOthers bool
	newest     int64            // the newest order number of the type (0: none)
	matches    []reseller.Order // unclaimed, every echoed field equal; oldest first
	possible   []reseller.Order // unclaimed, nothing differs, something missing
}

// look lists the upstream orders of the request's type newest first down
// to above (exclusive) and sorts out the unclaimed ones of its kind. The
// newest number seen is recorded for orders paid later.
func (f *Fulfiller) look(ctx context.Context, o *state.Order, r *upstreamorder.Request, above int64) (*found, error) {
	res := &found{}
	noticed := f.lossesNoticed() // before the mark and the claims are read
	lossMark, lossAt, err := f.lastLoss(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.fail(FailpointListing, o.ID); err != nil {
		return nil, err
	}
	// A complete journal tells whose an unclaimed order may be (see
	// journal.go); gift cards and other fungible kinds need not know.
	made := f.readAttempts() // who made what, as far as this host's journal knows
	var att *attempts
	if !r.Fungible() && f.journalComplete(ctx) {
		att = &made
	}
	covered := att != nil && f.journalCovers(o)
	for u, err := range f.up.AllOrders(ctx, &reseller.OrdersOptions{Limit: 100, Type: r.Type}) {
		if err != nil {
			return nil, err
		}
		if res.newest == 0 {
			res.newest = u.Number
		}
		if u.Number <= above {
			break
		}
		m := r.Match(&u)
		if m == upstreamorder.NoMatch {
			continue
		}
		if !o.RefundSeen.IsZero() && (u.Status.Is(reseller.OrderFailed) || u.Status.Is(reseller.OrderRefund)) {
			// The buyer has the Stars back (Telegram lists the refund) and
			// this upstream order bought nothing: were it this order's
			// create, the order ends refunded all the same. Nothing to hold.
			continue
		}
		owner, err := f.orders.ByUpstream(ctx, u.Number)
		switch {
		case err == nil && owner.ID != o.ID:
			continue // another order's
		case err != nil && !errors.Is(err, state.ErrOrderNotFound):
			return nil, err
		}
		if err != nil && made.madeByAnother(o.ChargeID, u.Number) {
			// Unclaimed, but the journal names another charge's create as
			// its maker: a loss took that order's claim, and that order
			// puts it back (recover). Never this order's.
			continue
		}
		if err != nil {
			// Unclaimed. One an order in review names, or one reported as
			// nobody's, is in an admin's hands, but it may still be this
			// order's own create whose record a Redis loss took: it is
			// never adopted here, and it keeps this order from creating
			// again (a possible match sends it to review). Orders paid
			// since have a watermark above it and never see it.
			if done, err := f.orders.Accounted(ctx, u.Number); err != nil {
				return nil, err
			} else if done {
				res.possible = append(res.possible, u)
				continue
			}
			if u.Number <= lossMark {
				// Made before Redis lost writes; its claim may be what
				// was lost (loss.go).
				if o.PaidAt.After(lossAt.Add(lossClockMargin)) {
					continue // this order was paid after: not its create
				}
				if !f.journalNames(o, u.Number, made) {
					res.possible = append(res.possible, u)
					continue
				}
			}
			if att != nil {
				others, mine := att.others(r.Kind(), o.ChargeID, u.Number), att.mine(o.ChargeID, u.Number)
				switch {
				case len(others) > 0 && !mine:
					continue // another order's open attempt made it
				case len(others) == 0 && !mine && covered:
					continue // this order never sent a create that could have made it
				case len(others) > 0 && mine:
					m = upstreamorder.PossibleMatch // either may have made it: nobody can tell yet
					if f.unsettled(others) {
						res.waitOthers = true
					}
				}
			}
		}
		if m == upstreamorder.FullMatch {
			res.matches = append(res.matches, u)
		} else {
			res.possible = append(res.possible, u)
		}
	}
	slices.Reverse(res.matches)
	slices.Reverse(res.possible)
	if len(res.matches)+len(res.possible) > 0 {
		// The fence of what was read as unclaimed: the claims were read
		// from a store that had lost none of its writes only if the canary
		// still holds the value this process saw last. The loss mark of a
		// restore is recorded only at the first check after it, and the
		// store may have come back on a backup a moment ago: a claim it
		// forgot is no proof that nobody holds the order (its codes may be
		// in a buyer's hands). A loss noticed here is recorded (loss.go)
		// and the order looks again. A loss this process noticed another
		// way since the listing began (its canary watch, another order's
		// fence) counts the same: the claims may have been read after it,
		// and the mark before.
		lost, err := f.canaryLost(ctx)
		if err != nil {
			return nil, fmt.Errorf("check the store for lost writes: %w", err)
		}
		if lost || f.lossesNoticed() != noticed {
			return nil, errLossNoticed
		}
	}
	if err := f.orders.NoteUpstream(ctx, res.newest); err != nil {
		f.log.Warn("note newest upstream order", "err", err)
	}
	return res, nil
}

func numbers(list []reseller.Order) string {
	s := make([]string, len(list))
	for i, u := range list {
		s[i] = strconv.FormatInt(u.Number, 10)
	}
	return strings.Join(s, ", ")
}

// adoptFound adopts the oldest unclaimed order of the kind and reports any
// others (duplicates of this order's attempts) to admins.
func (f *Fulfiller) adoptFound(ctx context.Context, o *state.Order, req *upstreamorder.Request, kind string, seen *found, how string) (bool, time.Time, error) {
	if o.Slot != kind || o.Status == state.OrderPaid || len(o.Request) == 0 {
		// Record the slot and the request on the order (placing), so
		// adopting frees the one and can read the other.
		raw, err := json.Marshal(req)
		if err != nil {
			return false, time.Time{}, err
		}
		attempt := o.AttemptID
		n, err := f.move(ctx, o, []string{o.Status}, state.OrderPlacing, func(n *state.Order) error {
			if n.AttemptID != attempt {
				return errAttemptMoved
			}
			n.Slot = kind
			if len(n.Request) == 0 {
				n.Request, n.Signature = raw, req.Signature()
			}
			return nil
		}, "")
		if err != nil {
			return false, time.Time{}, err
		}
		o = n
	}
	// Further matches (of a fungible kind) may be identical purchases'
	// creates still in flight or uncertain: they stay unclaimed for their
	// creators, and the orphan scan reports what nobody claims in time.
	return f.adopt(ctx, o, &seen.matches[0], how)
}

// adopt stores the upstream order as ours: placing -> placed, claiming its
// number, and frees the slot. A number another order already claimed
// sends this one to review.
func (f *Fulfiller) adopt(ctx context.Context, o *state.Order, up *reseller.Order, how string) (bool, time.Time, error) {
	attempt := o.AttemptID
	n, err := f.move(ctx, o, []string{state.OrderPlacing}, state.OrderPlaced, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		f.claim(n, up)
		return nil
	}, fmt.Sprintf("upstream %d %s", up.Number, how))
	if errors.Is(err, state.ErrUpstreamClaimed) {
		if !requestFungible(o) {
			return f.review(ctx, o, fmt.Sprintf("upstream order %d is claimed by another order", up.Number))
		}
		// An identical purchase took it (any such order serves either).
		if how == "created" {
			// Ours was created and serves that purchase; the one that
			// purchase created (if any) is above our watermark too. Look
			// once more and, finding nothing, place again at once: no
			// create of ours is in doubt.
			f.log.Info("an identical purchase adopted our new upstream order; looking again", "order", o.ID, "upstream", up.Number)
			_, err := f.move(ctx, o, []string{state.OrderPlacing}, state.OrderPlacing, func(n *state.Order) error {
				if n.AttemptID != attempt {
					return errAttemptMoved
				}
				n.UncertainAt = f.now().Add(-f.cfg.Grace).UTC()
				n.AttemptDeadline = n.UncertainAt // answered: the create is over
				return nil
			}, fmt.Sprintf("upstream %d went to an identical purchase", up.Number))
			return true, time.Time{}, err
		}
		return true, time.Time{}, nil // look again
	}
	if err != nil {
		return false, time.Time{}, err
	}
	if how != "created" { // a create's outcome is in the journal already (remember)
		f.journalOutcome(o, attempt, up)
	}
	if err := f.sync(ctx, o.ID); err != nil {
		// Stored but perhaps not durable: a lost number is found again by
		// the next create's listing or the orphan scan.
		f.log.Warn("upstream number not durable yet", "order", o.ID, "err", err)
	}
	f.releaseSlot(ctx, n)
	f.log.Info("order placed", "order", o.ID, "line", o.Line, "upstream", up.Number, "how", how)
	if err := f.fail(FailpointPlaced, o.ID); err != nil {
		return false, time.Time{}, err
	}
	var rows [][]flows.Button
	if f.chats != nil && f.chats.Placed(ctx, n, up) {
		rows = OpenChatButton(f.Lang(n), n)
	}
	if rows != nil || up.DeadlineAt != nil {
		// The order's chat and a service's deadline are told at once; the
		// plain notice waits (processingLate).
		_ = f.notifyStatusRows(ctx, n, state.OrderPlaced, f.processingText(n, up), rows)
	}
	return true, time.Time{}, nil
}

// claim makes upstream order up the order's own: its number (which the
// store keeps unique: a number another order holds fails the transition
// with state.ErrUpstreamClaimed), status and cost, and when it was claimed.
// Both ways an order adopts an upstream order use it: the worker's (adopt,
// from placing) and an admin's (Adopt, from needs_review). A cost the
// upstream does not show, or one that cannot be (state.Order.ChargeFault;
// complete sends such an order to review), keeps the one on record.
func (f *Fulfiller) claim(n *state.Order, up *reseller.Order) {
	n.UpstreamNumber, n.UpstreamStatus = up.Number, string(up.Status)
	n.ClaimedAt = f.now().UTC()
	if n.ChargeFault(up.ChargedUSD.Decimal) != "" {
		return
	}
	if !up.ChargedUSD.IsZero() || n.ChargedUSD.IsZero() {
		n.ChargedUSD = up.ChargedUSD.Decimal
	}
}

// placing handles an attempt whose outcome we do not know (an uncertain
// answer, or a crash after the intent): reconcile, wait, or try again.
func (f *Fulfiller) placing(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	if o.AttemptID == "" {
		return f.place(ctx, o) // the last attempt provably created nothing
	}
	if again, err := f.putBackJournaled(ctx, o); err != nil || again {
		return again, f.now().Add(f.cfg.RetryMin), nil
	}
	var req upstreamorder.Request
	if err := json.Unmarshal(o.Request, &req); err != nil {
		return f.review(ctx, o, "stored request unreadable")
	}
	if f.journalMode(ctx, o, &req) {
		return f.reconcileByJournal(ctx, o, &req)
	}
	kind, already, ok, err := f.claimSlot(ctx, o, &req)
	if err != nil {
		return false, f.now().Add(f.cfg.RetryMin), nil
	}
	if !ok {
		if f.journalComplete(ctx) {
			// The journal tells the two attempts' creates apart (look):
			// wait in line for the slot (woken when it is handed over).
			return false, f.now().Add(f.cfg.SlotWait), nil
		}
		// Another order's create of this kind is uncertain too (this
		// order's slot was lost): their orders cannot be told apart.
		return f.review(ctx, o, "another uncertain create of the same kind is in flight")
	}
	// With the slot held all along, look above the attempt's watermark;
	// else (a record lost by Redis, or an order from before the slots)
	// above the order's own, and only what is fungible is provable.
	provable := already
	above := o.Watermark
	if provable {
		above = o.AttemptWatermark
	}
	seen, err := f.look(ctx, o, &req, above)
	if err != nil {
		f.log.Warn("reconcile order", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.PollMin), nil
	}
	switch {
	case len(seen.matches) > 0 && len(seen.possible) == 0 && (req.Fungible() || provable && len(seen.matches) == 1):
		// Several for a purchase the upstream does not echo in full would
		// mean the slot did not hold (a Redis that lost writes): which is
		// this order's cannot be told.
		return f.adoptFound(ctx, o, &req, kind, seen, "reconciled")
	case len(seen.matches)+len(seen.possible) > 0:
		all := append(seen.matches, seen.possible...)
		if f.settling(ctx, all) {
			return false, f.now().Add(f.cfg.PollMin), nil // its creator may put it back first
		}
		f.dispute(ctx, all)
		return f.review(ctx, o, "upstream orders that may be this order's, unprovable: "+numbers(all))
	}
	return f.nothingFound(ctx, o)
}

// nothingFound handles an uncertain attempt whose create is not upstream
// (yet): it waits out the grace, counted from when the create was over for
// sure (createOver), and then places the order again.
func (f *Fulfiller) nothingFound(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	over, err := f.createOver(ctx, o)
	if err != nil {
		return false, f.now().Add(f.cfg.PollMin), err
	}
	grace := f.cfg.Grace
	if o.UncertainAnswered {
		grace = f.cfg.AnsweredGrace
	}
	if wait := over.Add(grace).Sub(f.now()); wait > 0 {
		return false, f.now().Add(min(wait, f.cfg.PollMin)), nil
	}
	if f.noneNoted.first(o.AttemptID) {
		// Once per attempt: the order may wait for its kind's slot now.
		f.log.Info("no upstream order after the grace period; placing again", "order", o.ID, "attempt", o.AttemptID, "fence", o.AttemptFence)
		f.journalOutcome(o, o.AttemptID, nil)
	}
	return f.place(ctx, o)
}

// createOver returns when the create of the order's attempt was over for
// sure, from the order's record alone: when its answer came
// (UncertainAt), or, with no answer on record (its worker crashed, or lost
// its lease and may still be waiting for it), the attempt's deadline. When
// this worker found the attempt says nothing: a worker cut off from Redis
// may send its create up to the deadline. An attempt with neither on
// record (put back from the journal, or written before deadlines were)
// counts from its start, or gets a deadline from now.
func (f *Fulfiller) createOver(ctx context.Context, o *state.Order) (time.Time, error) {
	over := o.AttemptDeadline
	if over.IsZero() && !o.PlacingAt.IsZero() {
		over = o.PlacingAt.Add(f.cfg.Lease + f.cfg.CreateTimeout)
	}
	if o.UncertainAt.After(over) {
		over = o.UncertainAt
	}
	if !over.IsZero() {
		return over, nil
	}
	over = f.now().Add(f.cfg.Lease + f.cfg.CreateTimeout).UTC()
	attempt := o.AttemptID
	_, err := f.move(ctx, o, []string{state.OrderPlacing}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.AttemptDeadline = over
		return nil
	}, "attempt found without a start or an answer")
	return over, err
}

// reconcileByJournal settles an attempt whose outcome is unknown with the
// journal's proof (journal.go): an unclaimed order of the kind above the
// attempt's watermark that no other open attempt can explain is this
// attempt's; one that another attempt may have made too waits until both
// are past their grace, and then goes to review; with nothing found after
// the grace, the order is placed again.
func (f *Fulfiller) reconcileByJournal(ctx context.Context, o *state.Order, req *upstreamorder.Request) (bool, time.Time, error) {
	seen, err := f.look(ctx, o, req, o.AttemptWatermark)
	if err != nil {
		f.log.Warn("reconcile order", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.PollMin), nil
	}
	switch {
	case len(seen.matches) > 0 && len(seen.possible) == 0:
		// Several would be creates of this order's own attempts (the
		// oldest is kept; the orphan scan reports the rest).
		return f.adoptFound(ctx, o, req, "", seen, "reconciled")
	case len(seen.possible) > 0:
		all := append(seen.matches, seen.possible...)
		if seen.waitOthers || f.settling(ctx, all) {
			return false, f.now().Add(f.cfg.PollMin), nil
		}
		f.dispute(ctx, all)
		return f.review(ctx, o, "upstream orders that this order's or another order's uncertain create may have made: "+numbers(all))
	}
	return f.nothingFound(ctx, o)
}

// unsettled reports whether any of the attempts may still make or show an
// upstream order: younger than the latest deadline of a create (a lease
// and the create's timeout, see send) and the grace.
func (f *Fulfiller) unsettled(list []state.JournalEntry) bool {
	for _, e := range list {
		if f.now().Sub(e.At) < f.cfg.Lease+f.cfg.CreateTimeout+f.cfg.Grace {
			return true
		}
	}
	return false
}

// Matches reports whether the order's stored request is known (known) and
// whether the upstream order shows nothing that differs from it (same): for
// an admin deciding whether to adopt it.
func Matches(o *state.Order, up *reseller.Order) (known, same bool) {
	req, ok := upstreamorder.Stored(o)
	if !ok {
		return false, false
	}
	return true, req.Match(up) != upstreamorder.NoMatch
}

// requestFungible reports whether the order's stored request is fungible.
func requestFungible(o *state.Order) bool {
	req, ok := upstreamorder.Stored(o)
	return ok && req.Fungible()
}

// dispute hands the upstream orders an order in review names to the admin.
func (f *Fulfiller) dispute(ctx context.Context, list []reseller.Order) {
	nums := make([]int64, len(list))
	for i, u := range list {
		nums[i] = u.Number
	}
	if err := f.orders.Dispute(ctx, nums...); err != nil {
		f.log.Warn("record disputed upstream orders", "err", err)
	}
}
