package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"shopbot/bot/fulfil"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/sched"
)

// starCharge is one incoming Stars payment, from an update or the sweep.
type starCharge struct {
	ID      string
	UserID  int64
	ChatID  int64
	Payload string
	Amount  int64
	At      time.Time // when it was paid
}

// Paid records a successful Stars payment.
func (p *Checkout) Paid(ctx context.Context, m Payment) {
	if m.Currency != "XTR" || m.UserID == 0 {
		p.log.Warn("successful payment not in Stars; ignored", "chat", m.ChatID, "currency", m.Currency)
		return
	}
	c := starCharge{ID: m.ChargeID, UserID: m.UserID, ChatID: m.ChatID, Payload: m.Payload, Amount: m.Total, At: m.At}
	if strings.HasPrefix(c.Payload, topupPrefix) {
		p.paidTopup(ctx, c, m.LanguageCode)
		return
	}
	reviewed, err := p.settle(ctx, c, m.LanguageCode, false)
	if reviewed && err == nil {
		p.alertReviews(ctx, []string{c.ID})
	}
	if errors.Is(err, errSettleLater) {
		p.log.Info("payment settles later", "charge", c.ID, "chat", c.ChatID)
	} else if errors.Is(err, state.ErrRecordTooNew) {
		p.logLeftForNewer(c, err)
	} else if err != nil {
		// The sweep finds the charge again and finishes the job.
		p.log.Error("record payment", "charge", c.ID, "chat", c.ChatID, "err", err)
	}
}

// settle turns a Stars charge into a paid, scheduled order, exactly once:
// a charge that already has an order changes nothing; a charge for a quote
// paid by another charge, or that does not match its quote, is refunded.
// A charge whose quote is gone is refunded only when this store provably
// holds every record of it (it recorded the invoice) and no order was made
// for the quote; otherwise nothing proves it bought nothing, and it is
// listed for admin review instead (reviewed = true). A charge of an
// invoice this build does not know, or whose quote a newer build stored,
// is never refunded here: state.ErrRecordTooNew, and a replica of the
// newer build settles it (its update, or its Stars sweep).
//
// The order looks for an earlier create of itself above the quote's
// watermark (state.Quote.Watermark), however late it is made. repair says
// the sweep found the charge without an order: for a quote without a
// watermark, the order then looks above the orphan scan's mark (everything
// below it is claimed or reported) rather than above the newest number
// seen now.
func (p *Checkout) settle(ctx context.Context, c starCharge, langCode string, repair bool) (reviewed bool, err error) {
	if done, err := p.chargeDone(ctx, c.ID); err != nil || done {
		return false, err
	}
	qid, ok := strings.CutPrefix(c.Payload, payloadPrefix)
	if !ok {
		return false, fmt.Errorf("charge %s: an invoice of a kind this build does not know: %w", c.ID, state.ErrRecordTooNew)
	}
	lang := p.langOf(ctx, qid, langCode)
	amount := locales.Stars(lang, c.Amount)
	q, err := p.Quotes.Load(ctx, qid)
	if errors.Is(err, state.ErrNoQuote) {
		return p.settleQuoteGone(ctx, c, qid, lang)
	}
	if err != nil {
		return false, err
	}
	if c.Amount < q.Stars || q.UserID != c.UserID {
		return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
	}
	if done, err := p.restoreLost(ctx, c); err != nil || done {
		return false, err
	}
	if err := p.commitPromo(ctx, q); errors.Is(err, state.ErrPromoUnavailable) {
		return false, p.refund(ctx, c, lang, "pay.refund_promo", "amount", amount, "code", locales.Escape(q.PromoCode))
	} else if err != nil {
		return false, err
	}
	order := p.newOrder(q, lang, state.PayStars, c.ID, c.Amount, c.At)
	if repair && order.Watermark == 0 {
		// A quote saved without a watermark (by an older build).
		if mark, err := p.Orders.OrphanMark(ctx); err == nil && mark > 0 {
			order.Watermark = mark
		}
	}
	o, dup, err := p.Orders.CreatePaid(ctx, order)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return false, p.refund(ctx, c, lang, "pay.refund_twice", "amount", amount, "order", o.ID)
	}
	if err != nil {
		return false, err
	}
	if dup {
		return false, p.ensureScheduled(ctx, o)
	}
	p.log.Info("order paid", "order", o.ID, "line", o.Line, "quote", q.ID, "charge", c.ID, "method", state.PayStars)
	p.journalPaid(o)
	if err := p.Schedule.Put(ctx, fulfil.OrderJob(o.ID), p.now()); err != nil {
		return false, err
	}
	if _, err := p.tg.Send(ctx, c.ChatID, locales.T(lang, "pay.paid", "amount", amount, "order", o.ID), nil); err != nil {
		p.log.Warn("tell buyer the payment arrived", "order", o.ID, "err", err)
	}
	return false, nil
}

// logLeftForNewer says that charge c was left for a replica of a newer
// build: nothing was credited, ordered or refunded.
func (p *Checkout) logLeftForNewer(c starCharge, err error) {
	p.log.Warn("payment this version cannot settle; left for a replica of a newer version (its update or its Stars sweep settles it)",
		"charge", c.ID, "user", c.UserID, "err", err)
}

// Understands reports whether this build can settle a Stars payment with
// invoice payload: an invoice of a kind it knows, whose record (the quote,
// the wallet top-up) is of a version it reads. It answers for the
// pre-checkout query and the successful payment alike; during an upgrade
// the adapter hands a payment this build does not understand to a replica
// of a newer one. A payment it does not understand is never refunded by
// it (settle, settleTopup).
func (p *Checkout) Understands(ctx context.Context, payload string) (bool, error) {
	if id, ok := strings.CutPrefix(payload, topupPrefix); ok {
		t, err := p.Wallets.Topup(ctx, id)
		if errors.Is(err, state.ErrNoTopup) {
			return true, nil // unknown or gone: refused or refunded as such
		}
		if err != nil {
			return false, err
		}
		return t.V <= state.TopupVersion, nil
	}
	qid, ok := strings.CutPrefix(payload, payloadPrefix)
	if !ok {
		return false, nil
	}
	_, err := p.Quotes.Load(ctx, qid)
	switch {
	case errors.Is(err, state.ErrRecordTooNew):
		return false, nil
	case err != nil && !errors.Is(err, state.ErrNoQuote):
		return false, err
	}
	return true, nil
}

// chargeDone reports whether the Stars charge id is settled already: it
// has an order (which is made sure to be scheduled) or was refunded.
func (p *Checkout) chargeDone(ctx context.Context, id string) (bool, error) {
	if o, err := p.Orders.ByCharge(ctx, id); err == nil {
		return true, p.ensureScheduled(ctx, o)
	} else if !errors.Is(err, state.ErrOrderNotFound) {
		return false, err
	}
	return p.pay.Refunded(ctx, id)
}

// settleQuoteGone settles a charge (with no order) whose quote is not
// stored. Orders are indexed by quote forever, so an order of the quote
// under another charge proves this one bought nothing (refund_twice). With
// no order at all, the refund is safe only when the store recorded the
// invoice: then it has seen this purchase from before the charge, and its
// order index covers it. Without that record (a lost or restored store)
// the order may have been made, and delivered, elsewhere: review.
func (p *Checkout) settleQuoteGone(ctx context.Context, c starCharge, qid string, lang locales.Lang) (bool, error) {
	amount := locales.Stars(lang, c.Amount)
	o, err := p.Orders.ByQuote(ctx, qid)
	if err == nil {
		return false, p.refund(ctx, c, lang, "pay.refund_twice", "amount", amount, "order", o.ID)
	}
	if !errors.Is(err, state.ErrOrderNotFound) {
		return false, err
	}
	if done, err := p.restoreArchived(ctx, c.ID, c.UserID, true); err != nil || done {
		return false, err // delivered before (its archive)
	}
	if rebuilt, err := p.rebuildJournaled(ctx, c); err != nil || rebuilt {
		return false, err
	}
	sent, err := p.invoiceRecorded(ctx, qid)
	if err != nil {
		return false, err
	}
	if !sent {
		epoch, err := p.storeEpoch(ctx)
		if err != nil {
			return false, err
		}
		if c.At.Before(epoch) {
			// Paid before this store existed (an update of an old payment
			// handled after Redis came back empty): its order may have
			// lived, and been delivered, in the store that is gone, and
			// the upstream orders it may have bought are below the orphan
			// scan's new mark, where "all claimed" says nothing.
			p.log.Warn("payment older than the store whose quote is gone; listed for review", "charge", c.ID, "user", c.UserID)
			return true, p.review(ctx, c, state.ReviewBeforeStore, nil)
		}
		// The store existed when the charge was made, yet holds neither
		// the quote nor its invoice: a Redis crash took
		// them, and perhaps an order made for the charge with them. Such
		// an order's upstream create would be unclaimed now; when every
		// upstream order since the orphan scan's mark is claimed, nothing
		// was bought and the refund is safe. Unclaimed ones may still be
		// claimed by orders being repaired: look again soon, and list the
		// charge for review once that has had its time.
		// Only while the charge is young: the orphan scan's mark passes an
		// unclaimed order once it is reported (after OrphanAfter), and
		// then "all claimed" would no longer speak for this charge.
		if wait := p.orphanWait(); p.orphans != nil && p.now().Sub(c.At) < wait {
			// An unclaimed order seen before the charge is not its; the
			// margin covers our clock running behind Telegram's.
			all, known, err := p.orphans.AllClaimed(ctx, c.At.Add(-clockMargin))
			if err != nil {
				return false, err
			}
			if all {
				p.log.Info("payment whose quote a Redis crash took bought nothing; refunding", "charge", c.ID, "user", c.UserID)
				return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
			}
			if known {
				p.log.Info("payment whose quote is gone waits for unclaimed upstream orders to be claimed", "charge", c.ID, "user", c.UserID)
				p.sweepDueIn(ctx, min(wait/10, time.Minute))
				return false, errSettleLater
			}
		}
		p.log.Warn("payment for a quote this store does not hold; listed for review", "charge", c.ID, "user", c.UserID)
		return true, p.review(ctx, c, state.ReviewQuoteGone, nil)
	}
	return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
}

// orphanWait is how young a lost quote's charge must be for "every
// upstream order since is claimed" to speak for it: half the time an
// unclaimed order takes to be reported.
func (p *Checkout) orphanWait() time.Duration {
	if p.orphans == nil {
		return 0
	}
	return p.orphans.OrphanAfter() / 2
}

// clockMargin is how far our clock may run behind Telegram's where the two
// are compared.
const clockMargin = 30 * time.Second

// errSettleLater means a charge cannot be settled yet; the sweep looks at
// it again soon.
var errSettleLater = errors.New("charge settles later")

// newOrder is the paid order for q (the contract with fulfilment), paid at
// paidAt by the payment's own date.
func (p *Checkout) newOrder(q *state.Quote, lang locales.Lang, method, charge string, stars int64, paidAt time.Time) *state.Order {
	item, _ := json.Marshal(q) // a struct of strings, numbers and times always marshals
	o := &state.Order{
		QuoteID: q.ID, ChatID: q.ChatID, UserID: q.UserID, Lang: string(lang), Line: q.Line, Item: item,
		UpstreamUSD: q.UpstreamUSD, ShopUSD: q.ShopUSD, PayMethod: method, ChargeID: charge,
		PromoCode: q.PromoCode, DiscountUSD: q.DiscountUSD, PaidAt: paidAt.UTC(),
		// Its creates come after the quote: the order looks above the
		// newest number seen then, not when it is made (0: then).
		Watermark: q.Watermark,
	}
	if method == state.PayStars {
		o.Stars = stars
	}
	return o
}

// ensureScheduled makes a paid order's fulfilment job due now: it puts
// one on the schedule when there is none (the payment was recorded but the
// process died before scheduling), and makes an existing one due now
// without cutting the lease of a worker running it (sched.Hurry).
func (p *Checkout) ensureScheduled(ctx context.Context, o *state.Order) error {
	if o.Status != state.OrderPaid {
		return nil
	}
	// Due now, whatever time an entry under this job name had: after a
	// Redis rollback the name may be a lost order's, whose job waited for
	// a later poll, which the rebuilt order has no reason to wait for.
	res, err := p.Schedule.Hurry(ctx, fulfil.OrderJob(o.ID), p.now())
	if err != nil || res != sched.HurryMissing {
		return err
	}
	return p.Schedule.Put(ctx, fulfil.OrderJob(o.ID), p.now())
}

// journalPaid writes the new paid order to the journal (state.Journal), so
// that a Redis that loses it together with its quote does not lose what
// the buyer paid for.
func (p *Checkout) journalPaid(o *state.Order) {
	if err := p.journal.Append(state.JournalEntry{Kind: state.JournalPaid, Charge: o.ChargeID, Order: o}); err != nil {
		p.log.Error("journal a paid order", "order", o.ID, "err", err)
	}
}

// restoreLost puts back the order of charge c when the store had it and
// lost it (Redis restored from a backup, a failover that lost writes) and
// the charge's payment comes again (the restored intake queue, Telegram's
// redelivery) before the replica noticed the loss: the order the archive
// shows delivered, else the paid order the journal holds, with its number
// and its upstream order, instead of a new order that would buy it again
// or take it to review. It reports whether it did. The archive is read
// only for a charge the journal names or cannot vouch for (paid before
// what it provably holds): any other charge had no order before.
func (p *Checkout) restoreLost(ctx context.Context, c starCharge) (bool, error) {
	e, journaled, err := p.journal.ByCharge(state.JournalPaid, c.ID)
	if err != nil {
		p.log.Warn("read the journal", "err", err)
	}
	if journaled || !p.journal.Covers(c.At) {
		if done, err := p.restoreArchived(ctx, c.ID, c.UserID, true); err != nil || done {
			return done, err
		}
	}
	if !journaled {
		return false, nil
	}
	return p.rebuildFrom(ctx, c, e)
}

// rebuildJournaled makes the paid order of charge c again from the
// journal, when Redis lost it together with its quote; it reports whether
// it did. The order keeps its own watermark, so its placement reconciles
// with everything created since it was paid (and a journaled create of it
// is put back before any new one).
func (p *Checkout) rebuildJournaled(ctx context.Context, c starCharge) (bool, error) {
	e, ok, err := p.journal.ByCharge(state.JournalPaid, c.ID)
	if err != nil {
		p.log.Warn("read the journal", "err", err)
	}
	if !ok {
		return false, nil
	}
	return p.rebuildFrom(ctx, c, e)
}

// rebuildFrom is rebuildJournaled with the charge's paid entry e read.
func (p *Checkout) rebuildFrom(ctx context.Context, c starCharge, e state.JournalEntry) (bool, error) {
	if e.Order == nil || e.Order.UserID != c.UserID {
		return false, nil
	}
	_, err := p.restorePaid(ctx, e.Order)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return false, nil // the quote is back with another charge's order: settle as usual
	}
	return err == nil, err
}

// restorePaid stores again the journaled paid order o that Redis lost,
// with its promo use, and schedules it: the one rebuild of a paid order,
// Stars (rebuildJournaled) or wallet (rebuildWalletOrder). It reports
// whether the order was new to the store (false: it was back already);
// state.ErrQuoteAlreadyPaid says the quote was paid by another order
// meanwhile, and the caller gives the money back or settles as usual.
func (p *Checkout) restorePaid(ctx context.Context, o *state.Order) (bool, error) {
	p.recommitPromo(ctx, o)
	created, dup, err := p.Orders.CreatePaid(ctx, o)
	if err != nil {
		return false, err
	}
	if !dup {
		p.log.Info("paid order Redis lost rebuilt from the journal", "order", created.ID, "was", o.ID, "method", o.PayMethod, "charge", o.ChargeID)
	}
	return !dup, p.ensureScheduled(ctx, created)
}

// recommitPromo takes again the promo use of a paid order rebuilt from the
// journal: Redis may have lost its consumption with the order. Commit is
// once per quote, so a use gone to another buyer since is not taken twice;
// the order keeps the price its buyer paid.
func (p *Checkout) recommitPromo(ctx context.Context, o *state.Order) {
	if o.PromoCode == "" || p.promos == nil {
		return
	}
	if err := p.promos.Commit(ctx, o.PromoCode, o.QuoteID, o.UserID); err != nil {
		p.log.Warn("consume the promo use of a rebuilt order", "charge", o.ChargeID, "err", err)
	}
}
