package fulfil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"shopbot/bot/jobs"
	"shopbot/bot/upstreamorder"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// The placement protocol (docs/design.md, "The placement protocol").
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
//  5. Only the current holder of the order's job sends its create: the
//     worker renews its lease right before the POST (jobs.Lease), records
//     the lease's generation on the attempt, and a lost lease cuts what it
//     has in flight. The intent records when the create is over for sure
//     (state.Order.AttemptDeadline); a worker that takes the order over
//     treats it as in flight until then, whenever it found it.
//
// No wall clock of the upstream is ever compared with ours.

// place creates the order upstream, after making sure no earlier create of
// it exists: it holds the kind's slot, lists above the watermark, writes
// the intent (placing, a new attempt, the request, the attempt's
// watermark) and then POSTs.
func (f *Fulfiller) place(ctx context.Context, o *state.Order) (bool, time.Time, error) {
	q, err := upstreamorder.QuoteOf(o)
	if err != nil {
		return f.toRefunding(ctx, o, "bad quote: "+err.Error(), reasonInvalid)
	}
	req, err := upstreamorder.Build(q)
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
	if !o.RefundSeen.IsZero() {
		// Telegram lists the charge as refunded (ChargeRefunded), and no
		// create of the order is in doubt any more: never buy it again.
		return f.toRefunding(ctx, o, "the charge is refunded at Telegram; the store had lost the refund", reasonFailed)
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
// covers the order (journalCovers). Fungible kinds need no proof.
func (f *Fulfiller) journalMode(ctx context.Context, o *state.Order, req *upstreamorder.Request) bool {
	return !req.Fungible() && f.journalComplete(ctx) && f.journalCovers(o)
}

// send writes the intent of a new attempt (placing, the request, the
// attempt's watermark, in the journal too) and POSTs the create.
func (f *Fulfiller) send(ctx context.Context, o *state.Order, req *upstreamorder.Request, raw []byte, kind string, seen *found, above int64, provable bool) (bool, time.Time, error) {
	attempt, prev := newAttemptID(), o.AttemptID
	// The create leaves only while this worker holds the job's lease (the
	// fence below) and before sendBy, and is cut at deadline: a worker that
	// takes the order over (its lease lapsed) reads from the order when
	// the create is over for sure, and places again only after that
	// (nothingFound).
	lease := jobs.LeaseOf(ctx)
	sendBy := f.now().Add(f.cfg.Lease)
	deadline := sendBy.Add(f.cfg.CreateTimeout)
	var fence int64
	if lease != nil {
		fence = lease.Gen()
	}
	o, err := f.move(ctx, o, []string{o.Status}, state.OrderPlacing, func(n *state.Order) error {
		if n.AttemptID != prev {
			return errAttemptMoved // another worker started an attempt meanwhile
		}
		n.AttemptID, n.Request, n.Signature, n.PlacingAt = attempt, raw, req.Signature(), f.now().UTC()
		n.AttemptDeadline, n.AttemptFence = deadline.UTC(), fence
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
	// The fence, right before the POST. Only the job's current holder
	// sends: a worker whose lease another took (its Redis was cut off, or
	// failed over without it) stops here, as the new holder may be placing
	// the order already. And the intent is read back: a Redis that lost it
	// since (a crash, a failover, a restore) has freed the slot for another
	// create of this kind, or will have this order placed again; sending
	// now would buy twice. Only the moment between these reads and the
	// request leaving stays open.
	if lease != nil {
		if _, err := lease.Renew(ctx); err != nil {
			f.log.Warn("job lease not held before the create; not sending", "order", o.ID, "attempt", attempt, "fence", fence, "err", err)
			return false, f.now().Add(f.cfg.PollMin), nil
		}
	}
	if cur, err := f.orders.Get(ctx, o.ID); err != nil || cur.AttemptID != attempt || cur.Status != state.OrderPlacing || !cur.RefundSeen.IsZero() {
		f.log.Warn("placing intent gone before the create; not sending", "order", o.ID, "attempt", attempt, "err", err)
		f.checkCanary(ctx)
		return false, f.now().Add(f.cfg.PollMin), nil
	}
	if !f.now().Before(sendBy) {
		// Too late for the deadline on record: another worker may count
		// this create as over before it would be.
		f.log.Warn("placing intent too old to send; not sending", "order", o.ID, "attempt", attempt)
		return false, f.now().Add(f.cfg.RetryMin), f.unsent(ctx, o, attempt)
	}
	cctx, cancel := context.WithTimeout(ctx, deadline.Sub(f.now()))
	up, err := upstreamorder.Create(cctx, f.up, req)
	cancel()
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
		// Answered: the service itself said it failed (a 5xx with the
		// API's error body), so it has finished with the request. A
		// gateway's own error page says nothing of the service behind it,
		// which may still create the order: its create is over only at
		// the attempt's deadline, like a cut connection's.
		var answer *reseller.Error
		answered := errors.As(err, &answer) && answer.Status >= 500 && answer.Type != ""
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
		// The service's own answer (answered) says it is done with the
		// request: the create is over now. A cut connection, a timeout or
		// a gateway's error page end only our side of it: the service may
		// still be creating, so the create is over at its deadline (or
		// now, if later).
		n.UncertainAt, n.UncertainAnswered = f.now().UTC(), answered
		if answered || n.AttemptDeadline.Before(n.UncertainAt) {
			n.AttemptDeadline = n.UncertainAt
		}
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
		n.AttemptID, n.UncertainAt, n.AttemptDeadline = "", time.Time{}, time.Time{}
		return nil
	}, "attempt "+attempt+" not sent")
	if err != nil {
		return err
	}
	f.journalOutcome(o, attempt, nil)
	f.releaseSlot(ctx, n)
	return nil
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
	_ = f.notifyStatus(ctx, n, state.OrderNeedsReview, locales.T(lang, "order.review", "id", o.ID, "item", locales.Escape(upstreamorder.ItemName(lang, o))))
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
		"item", locales.Escape(upstreamorder.ItemName(lang, n)), "reason", locales.T(lang, buyerReason)))
	return true, time.Time{}, nil
}
