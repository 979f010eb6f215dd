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

	"shopbot/bot/lines"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// Placement protocol v2 (DESIGN.md "The order lifecycle").
//
// The upstream has no idempotency key, and its order object does not echo
// everything that tells two buyers apart. So:
//
//  1. A create holds its kind's slot (records.Orders.AcquireSlot) from before
//     it reads the watermark until its outcome is stored: at most one
//     create of a kind is in flight or uncertain across all replicas. A
//     kind is the upstream type plus the request fields the order object
//     echoes, so two creates of different kinds never look alike.
//  2. Before every create the worker lists the upstream orders of the type
//     above the order's watermark (the newest number the shop had seen
//     when it was paid). An unclaimed one of the same kind may be an
//     earlier create whose record Redis lost: it is adopted when that is
//     provable, and the order goes to needs_review when it is not. The
//     same listing gives the watermark of the new attempt.
//  3. After an uncertain answer (timeout, cut connection, 5xx) only orders
//     above the attempt's watermark are considered; as the slot was held
//     all along, an unclaimed one of the kind is this order's. The grace
//     before placing again counts from when the uncertain answer arrived.
//  4. A 429, 401 or 403 on create provably created nothing: the attempt is
//     dropped and the slot freed; the worker tries again later.
//
// No wall clock of the upstream is ever compared with ours.

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
func (f *Fulfiller) look(ctx context.Context, o *state.Order, r *lines.Request, above int64) (*found, error) {
	res := &found{}
	// A complete journal tells whose an unclaimed order may be (see
	// journal.go); gift cards and other fungible kinds need not know.
	var att *attempts
	if !r.Fungible() && f.journalComplete(ctx) {
		a := f.readAttempts()
		att = &a
	}
	covered := att != nil && f.now().Sub(o.CreatedAt) < f.journal.Keep()-time.Minute
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
		if m == lines.NoMatch {
			continue
		}
		owner, err := f.orders.ByUpstream(ctx, u.Number)
		switch {
		case err == nil && owner.ID != o.ID:
			continue // another order's
		case err != nil && !errors.Is(err, state.ErrOrderNotFound):
			return nil, err
		}
		if err != nil {
			// Unclaimed. One an order in review names, or one reported as
			// nobody's, is in an admin's hands: left alone, so one lost
			// record cannot send every later order of its kind to review.
			if done, err := f.orders.Accounted(ctx, u.Number); err != nil {
				return nil, err
			} else if done {
				continue
			}
			if att != nil {
				others, mine := att.others(r.Kind(), o.ChargeID, u.Number), att.mine(o.ChargeID, u.Number)
				switch {
				case len(others) > 0 && !mine:
					continue // another order's open attempt made it
				case len(others) == 0 && !mine && covered:
					continue // this order never sent a create that could have made it
				case len(others) > 0 && mine:
					m = lines.PossibleMatch // either may have made it: nobody can tell yet
					if f.unsettled(others) {
						res.waitOthers = true
					}
				}
			}
		}
		if m == lines.FullMatch {
			res.matches = append(res.matches, u)
		} else {
			res.possible = append(res.possible, u)
		}
	}
	slices.Reverse(res.matches)
	slices.Reverse(res.possible)
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
func (f *Fulfiller) claimSlot(ctx context.Context, o *state.Order, req *lines.Request) (kind string, already, ok bool, err error) {
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

// place creates the order upstream, after making sure no earlier create of
// it exists: it holds the kind's slot, lists above the watermark, writes
// the intent (placing, a new attempt, the request, the attempt's
// watermark) and then POSTs.
func (f *Fulfiller) place(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	q, err := lines.QuoteOf(o)
	if err != nil {
		return f.toRefunding(ctx, o, "bad quote: "+err.Error(), reasonInvalid)
	}
	req, err := lines.Build(q)
	if err != nil {
		return f.toRefunding(ctx, o, err.Error(), reasonInvalid)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return false, time.Time{}, err
	}
	if again, err := f.putBackJournaled(ctx, o); err != nil || again {
		return again, f.now().Add(f.cfg.RetryMin), nil
	}
	kind, already, ok, err := f.claimSlot(ctx, o, req)
	if err != nil {
		return false, f.now().Add(f.cfg.RetryMin), nil
	}
	if !ok {
		// Another create of this kind first: the order waits in line and
		// is woken when the slot is handed to it.
		return false, f.now().Add(f.cfg.SlotWait), nil
	}
	if f.journalMode(ctx, o, req) {
		a := f.readAttempts()
		if len(a.blockers(req.Kind(), o.ChargeID)) > 0 {
			// A create of the kind whose slot Redis lost is still open.
			f.log.Debug("placement waits: a journaled create of the kind is open", "order", o.ID, "kind", kind)
			f.releaseSlotIfIdle(ctx, o, kind)
			return false, f.now().Add(f.cfg.PollMin), nil
		}
		if !a.hasOpen(o.ChargeID) {
			// Every earlier attempt of this order is settled (and a create
			// of one is put back already): nothing of it is upstream to
			// look for. The attempt's watermark is the newest number now.
			newest, err := f.newestOfType(ctx, req.Type)
			if err != nil {
				f.log.Warn("read the newest upstream order before a create", "order", o.ID, "err", err)
				f.releaseSlotIfIdle(ctx, o, kind)
				return false, f.now().Add(f.listRetry(o, err)), nil
			}
			return f.send(ctx, o, req, raw, kind, &found{newest: newest}, max(newest, o.Watermark), false)
		}
	}
	// Held all along since the attempt's watermark: whatever is unclaimed of
	// the kind above it is this order's. Otherwise look above the order's
	// own watermark for a create Redis may have lost.
	above, provable := o.Watermark, false
	if already {
		above, provable = o.AttemptWatermark, true
	}
	seen, err := f.look(ctx, o, req, above)
	if err != nil {
		f.log.Warn("list upstream orders before a create", "order", o.ID, "err", err)
		if o.AttemptID == "" {
			// Nothing of this order is in flight: let others of the kind on.
			f.releaseKind(ctx, kind, o.ID)
		}
		return false, f.now().Add(f.listRetry(o, err)), nil
	}
	switch {
	case len(seen.matches) > 0 && len(seen.possible) == 0 && (req.Fungible() || provable && len(seen.matches) == 1):
		return f.adoptFound(ctx, o, req, kind, seen, "found before placing")
	case len(seen.matches)+len(seen.possible) > 0:
		all := append(seen.matches, seen.possible...)
		if f.settling(ctx, all) {
			// Fresh: most likely a create whose record Redis just lost,
			// which the replica that made it puts back (see recover).
			f.log.Debug("placement waits: fresh unclaimed orders of the kind", "order", o.ID, "kind", kind, "upstream", numbers(all))
			f.releaseSlotIfIdle(ctx, o, kind)
			return false, f.now().Add(f.cfg.PollMin), nil
		}
		f.dispute(ctx, all)
		return f.review(ctx, o, "unclaimed upstream orders of the same kind exist ("+numbers(all)+
			"); one may be this order's, which cannot be proven")
	}
	return f.send(ctx, o, req, raw, kind, seen, above, provable)
}

// journalMode reports whether the order's non-fungible create is placed
// on the journal's proof alone (journal.go): the journal is complete and
// covers the order's whole life. Fungible kinds need no proof.
func (f *Fulfiller) journalMode(ctx context.Context, o *state.Order, req *lines.Request) bool {
	return !req.Fungible() && f.journalComplete(ctx) && f.now().Sub(o.CreatedAt) < f.journal.Keep()-time.Minute
}

// send writes the intent of a new attempt (placing, the request, the
// attempt's watermark, in the journal too) and POSTs the create.
func (f *Fulfiller) send(ctx context.Context, o *state.Order, req *lines.Request, raw []byte, kind string, seen *found, above int64, provable bool) (bool, time.Time, error) {
	attempt, prev := newAttemptID(), o.AttemptID
	o, err := f.move(ctx, o, []string{o.Status}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != prev {
			return errAttemptMoved // another worker started an attempt meanwhile
		}
		n.AttemptID, n.Request, n.Signature, n.PlacingAt = attempt, raw, req.Signature(), f.now().UTC()
		n.Slot, n.UncertainAt = kind, time.Time{}
		if !provable || n.AttemptWatermark == 0 {
			n.AttemptWatermark = max(seen.newest, above)
		}
		n.Attempts++
		return nil
	}, "attempt "+attempt)
	if err != nil {
		return false, time.Time{}, err
	}
	if err := f.sync(ctx, o.ID); err != nil {
		// The intent might not survive a crash: POSTing now could leave an
		// upstream order nobody knows of. Drop the attempt and try later.
		f.log.Warn("placing intent not durable; not sending", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.RetryMin), f.unsent(ctx, o, attempt)
	}
	if err := f.journalIntent(o, req); err != nil {
		// Without its intent on record the attempt could not be told
		// from others after a Redis loss: do not send it.
		f.log.Error("journal the placing intent; not sending", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.RetryMin), f.unsent(ctx, o, attempt)
	}
	if err := f.fail(FailpointIntent, o.ID); err != nil {
		return false, time.Time{}, err
	}
	// The fence: read the intent back right before the POST. A Redis that
	// lost it since (a crash, a failover, a restore) has freed the slot for
	// another create of this kind, or will have this order placed again;
	// sending now would buy twice. Only the moment between this read and
	// the request leaving stays open.
	if cur, err := f.orders.Get(ctx, o.ID); err != nil || cur.AttemptID != attempt || cur.Status != state.OrderPlacing {
		f.log.Warn("placing intent gone before the create; not sending", "order", o.ID, "attempt", attempt, "err", err)
		f.checkCanary(ctx)
		return false, f.now().Add(f.cfg.PollMin), nil
	}
	up, err := lines.Create(ctx, f.up, req)
	var rl *reseller.RateLimitError
	var ve *reseller.ValidationError
	var apiErr *reseller.Error
	switch {
	case err == nil:
		if err := f.fail(FailpointCreated, o.ID); err != nil {
			return false, time.Time{}, err
		}
		if err := f.orders.NoteUpstream(ctx, up.Number); err != nil {
			f.log.Warn("note newest upstream order", "err", err)
		}
		if f.alerts != nil {
			_, _ = f.alerts.Clear(ctx, alertUpstreamBalance)
		}
		f.remember(o, up)
		again, next, err := f.adopt(ctx, o, up, "created")
		f.checkCanary(ctx) // after the writes a rollback could lose
		return again, next, err
	case reseller.IsOutcomeUnknown(err):
		f.log.Warn("order create outcome unknown; reconciling", "order", o.ID, "attempt", attempt, "err", err)
		var answer *reseller.Error
		answered := errors.As(err, &answer) && answer.Status >= 500
		bounded := f.journalUncertain(ctx, o, req.Type, answered)
		if err := f.uncertain(ctx, o, "create outcome unknown", answered); err != nil {
			return false, f.now().Add(f.cfg.PollMin), err
		}
		if bounded && f.journalMode(ctx, o, req) {
			// The server finished with the request: whatever it created
			// is in its list now, at or below the bound just read (and so
			// below the watermark of every later create of the kind), and
			// the journal tells it from theirs (reconcileByJournal). The
			// kind need not wait for the grace.
			f.releaseSlot(ctx, o)
		}
		return false, f.now().Add(f.cfg.PollMin), nil
	case errors.As(err, &rl), reseller.IsUnauthorized(err), reseller.IsForbidden(err):
		// Provably not executed: the next try is a plain new attempt,
		// after the wait a 429 asks for (the account's limit; our own
		// backoff floor would only add to it), or RetryMin after a
		// rejected key or a blocked account.
		wait := f.cfg.RetryMin
		if rl != nil {
			wait = max(rl.RetryAfter, f.cfg.PollMin)
		}
		f.log.Warn("order create refused; retrying later", "order", o.ID, "err", err)
		return false, f.now().Add(wait), f.unsent(ctx, o, attempt)
	case errors.As(err, &ve):
		return f.toRefunding(ctx, o, "invalid request: "+ve.Field, reasonInvalid)
	case errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500:
		if strings.Contains(strings.ToLower(apiErr.Message), "balance") {
			if f.alerts != nil {
				_, _ = f.alerts.Raise(ctx, alertUpstreamBalance, locales.T(f.lang0, "alert.order_balance", "id", o.ID))
			}
			return f.toRefunding(ctx, o, "upstream balance too low", reasonUnavailable)
		}
		return f.toRefunding(ctx, o, fmt.Sprintf("upstream %d %s", apiErr.Status, apiErr.Type), reasonInvalid)
	default:
		// Not an order-creating outcome (the request never left): try again.
		f.log.Warn("order create failed before sending; retrying later", "order", o.ID, "err", err)
		return false, f.now().Add(f.cfg.RetryMin), f.unsent(ctx, o, attempt)
	}
}

// listRetry says when to try a placement again after the upstream listing
// before it failed with err: a rate limit is the account's, so its
// Retry-After is the wait (the call did not wait it out while the order
// held its kind's slot); anything else backs off with the attempts.
func (f *Fulfiller) listRetry(o *state.Order, err error) time.Duration {
	var rl *reseller.RateLimitError
	if errors.As(err, &rl) {
		return max(rl.RetryAfter, f.cfg.PollMin)
	}
	return f.retryDelay(o)
}

// retryDelay backs off with the number of attempts so far.
func (f *Fulfiller) retryDelay(o *state.Order) time.Duration {
	d := f.cfg.RetryMin
	for range min(o.Attempts, 10) {
		d *= 2
	}
	return min(d, f.cfg.RetryMax)
}

// alertUpstreamBalance is raised when a create fails for the balance.
const alertUpstreamBalance = "upstream:order-balance"

// uncertain records when the uncertain answer of the attempt arrived: the
// grace before placing again counts from it.
//
// answered says the server answered (a 5xx): it had finished with the
// request, so a create it made is already in its list and a shorter grace
// (Config.AnsweredGrace) is enough; a timeout or a cut connection may leave
// the server still working on it.
func (f *Fulfiller) uncertain(ctx context.Context, o *state.Order, why string, answered bool) error {
	attempt := o.AttemptID
	_, err := f.move(ctx, o, []string{state.OrderPlacing}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.UncertainAt, n.UncertainAnswered = f.now().UTC(), answered
		return nil
	}, why)
	if errors.Is(err, errAttemptMoved) || errors.Is(err, state.ErrBadTransition) {
		return nil
	}
	return err
}

// unsent records that the attempt provably created nothing and frees the
// slot, so the next pass places again instead of reconciling.
func (f *Fulfiller) unsent(ctx context.Context, o *state.Order, attempt string) error {
	n, err := f.move(ctx, o, []string{state.OrderPlacing}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.AttemptID, n.UncertainAt = "", time.Time{}
		return nil
	}, "attempt "+attempt+" not sent")
	if err != nil {
		return err
	}
	f.journalOutcome(o, attempt, nil)
	f.releaseSlot(ctx, n)
	return nil
}

// adoptFound adopts the oldest unclaimed order of the kind and reports any
// others (duplicates of this order's attempts) to admins.
func (f *Fulfiller) adoptFound(ctx context.Context, o *state.Order, req *lines.Request, kind string, seen *found, how string) (bool, time.Time, error) {
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
		rows = OpenChatButton(f.Lang(n), n.ID)
	}
	_ = f.notifyStatusRows(ctx, n, state.OrderPlaced, f.processingText(n, up), rows)
	return true, time.Time{}, nil
}

// claim makes upstream order up the order's own: its number (which the
// store keeps unique: a number another order holds fails the transition
// with state.ErrUpstreamClaimed), status and cost, and when it was claimed.
// Both ways an order adopts an upstream order use it: the worker's (adopt,
// from placing) and an admin's (Adopt, from needs_review). A cost the
// upstream does not show keeps the one on record.
func (f *Fulfiller) claim(n *state.Order, up *reseller.Order) {
	n.UpstreamNumber, n.UpstreamStatus = up.Number, string(up.Status)
	n.ClaimedAt = f.now().UTC()
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
	var req lines.Request
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
// (yet): it waits out the grace, counted from when the uncertain answer
// arrived, and then places the order again.
func (f *Fulfiller) nothingFound(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	if o.UncertainAt.IsZero() {
		// A crash after the intent: the answer never came. The grace
		// counts from now.
		return false, f.now().Add(f.cfg.PollMin), f.uncertain(ctx, o, "attempt found without an answer", false)
	}
	grace := f.cfg.Grace
	if o.UncertainAnswered {
		grace = f.cfg.AnsweredGrace
	}
	if wait := o.UncertainAt.Add(grace).Sub(f.now()); wait > 0 {
		return false, f.now().Add(min(wait, f.cfg.PollMin)), nil
	}
	if f.noneNoted.first(o.AttemptID) {
		// Once per attempt: the order may wait for its kind's slot now.
		f.log.Info("no upstream order after the grace period; placing again", "order", o.ID, "attempt", o.AttemptID)
		f.journalOutcome(o, o.AttemptID, nil)
	}
	return f.place(ctx, o)
}

// reconcileByJournal settles an attempt whose outcome is unknown with the
// journal's proof (journal.go): an unclaimed order of the kind above the
// attempt's watermark that no other open attempt can explain is this
// attempt's; one that another attempt may have made too waits until both
// are past their grace, and then goes to review; with nothing found after
// the grace, the order is placed again.
func (f *Fulfiller) reconcileByJournal(ctx context.Context, o *state.Order, req *lines.Request) (bool, time.Time, error) {
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
// upstream order: younger than the client's timeout and the grace.
func (f *Fulfiller) unsettled(list []state.JournalEntry) bool {
	for _, e := range list {
		if f.now().Sub(e.At) < f.cfg.Grace+20*time.Second {
			return true
		}
	}
	return false
}

// review parks the order for an admin and frees its slot. It refuses an
// order whose attempt moved on meanwhile.
func (f *Fulfiller) review(ctx context.Context, o *state.Order, why string) (bool, time.Time, error) {
	attempt := o.AttemptID
	n, err := f.move(ctx, o, []string{o.Status}, state.OrderNeedsReview, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.Reason = why
		return nil
	}, why)
	if err != nil {
		return false, time.Time{}, err
	}
	f.releaseSlot(ctx, n)
	f.journalOutcome(o, attempt, nil) // in an admin's hands: no longer open
	f.log.Error("order needs review", "order", o.ID, "why", why)
	lang := f.Lang(o)
	_ = f.notifyStatus(ctx, n, state.OrderNeedsReview, locales.T(lang, "order.review", "id", o.ID, "item", locales.Escape(lines.ItemName(lang, o))))
	if f.alerts != nil {
		_, _ = f.alerts.Raise(ctx, ReviewAlert(o.ID),
			locales.T(f.lang0, "alert.order_review", "id", o.ID, "why", locales.Escape(why)))
	}
	return false, time.Time{}, nil
}

// toRefunding moves the order to refunding, frees its slot and tells the
// buyer. It refuses an order whose attempt moved on meanwhile (a stale
// worker's 400 must not refund a newer attempt's success).
func (f *Fulfiller) toRefunding(ctx context.Context, o *state.Order, why, buyerReason string) (bool, time.Time, error) {
	attempt := o.AttemptID
	n, err := f.move(ctx, o, []string{o.Status}, state.OrderRefunding, func(n *state.Order) error {
		if n.AttemptID != attempt {
			return errAttemptMoved
		}
		n.Reason = buyerReason
		return nil
	}, why)
	if err != nil {
		return false, time.Time{}, err
	}
	f.releaseSlot(ctx, n)
	f.journalOutcome(o, attempt, nil)
	f.log.Info("order failed; refunding", "order", o.ID, "why", why)
	lang := f.Lang(n)
	_ = f.notifyStatus(ctx, n, state.OrderRefunding, locales.T(lang, "order.failed", "id", n.ID,
		"item", locales.Escape(lines.ItemName(lang, n)), "reason", locales.T(lang, buyerReason)))
	return true, time.Time{}, nil
}

// Matches reports whether the order's stored request is known (known) and
// whether the upstream order shows nothing that differs from it (same): for
// an admin deciding whether to adopt it.
func Matches(o *state.Order, up *reseller.Order) (known, same bool) {
	req, ok := lines.Stored(o)
	if !ok {
		return false, false
	}
	return true, req.Match(up) != lines.NoMatch
}

// requestFungible reports whether the order's stored request is fungible.
func requestFungible(o *state.Order) bool {
	req, ok := lines.Stored(o)
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
