package checkout

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/locales"
	"shopbot/state"
)

// Run records the store's epoch, runs the sweep at start and then
// every SweepEvery until ctx ends, and sooner when one is due: asked for by
// SweepSoon, or recorded in Redis by any process (a charge that must be
// looked at again soon, sweepDueIn), which every process looks for every
// SweepDueCheck, so the process that asked may die without the sweep
// being lost. Sweep logs what goes wrong itself.
func (p *Checkout) Run(ctx context.Context) {
	if _, err := p.storeEpoch(ctx); err != nil && ctx.Err() == nil {
		p.log.Warn("record the store epoch", "err", err)
	}
	t := time.NewTicker(p.opts.SweepDueCheck)
	defer t.Stop()
	var next time.Time // the periodic sweep's
	sweep := func() {
		started := p.now()
		n, err := p.Sweep(ctx)
		if n > 0 {
			p.log.Info("payment sweep repaired payments", "count", n)
		}
		if errors.Is(err, ErrSweepBusy) || ctx.Err() != nil {
			return // the due, if any, waits for the sweep under way or the next look
		}
		// A sweep ran (a charge it could not settle is retried by the next
		// periodic one): a due from before it is met.
		if err := p.pay.SweepDone(ctx, started); err != nil {
			p.log.Warn("payment sweep: clear the due", "err", err)
		}
		next = started.Add(p.opts.SweepEvery)
	}
	sweep()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
			sweep()
		case <-t.C:
			now := p.now()
			if !now.Before(next) {
				sweep()
				continue
			}
			if at, ok, err := p.pay.SweepDue(ctx); err != nil {
				if ctx.Err() == nil {
					p.log.Warn("payment sweep: read the due", "err", err)
				}
			} else if ok && !now.Before(at) {
				sweep()
			}
		}
	}
}

// sweepDueIn asks for a sweep in d, of any process (Run): recorded in
// Redis, so it survives this process; kept in memory when Redis refuses.
func (p *Checkout) sweepDueIn(ctx context.Context, d time.Duration) {
	if err := p.pay.SweepDueAt(ctx, p.now().Add(d)); err != nil {
		p.log.Warn("payment sweep: note a sweep due; this process runs it", "err", err)
		time.AfterFunc(d, p.SweepSoon)
	}
}

// SweepSoon makes the sweep loop run now (it is not waited for).
func (p *Checkout) SweepSoon() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// storeEpoch returns when the store was created, recording now when this
// is the first time (see redisstore.StoreEpoch).
func (p *Checkout) storeEpoch(ctx context.Context) (time.Time, error) {
	return p.pay.StoreEpoch(ctx, p.now())
}

// ErrSweepBusy means another process (or the periodic run) is sweeping.
var ErrSweepBusy = errors.New("another payment sweep is running")

// sweepPage is the getStarTransactions page size (Telegram's maximum).
const sweepPage = 100

// sweepLockTTL bounds how long a crashed sweeper keeps others out; a live
// one renews it after every page of transactions.
const sweepLockTTL = 30 * time.Second

// Sweep repairs payments whose update was lost or whose handling was cut
// short, in two parts that both run even when the other fails (each
// failure is logged, and the errors are returned joined):
//   - wallet payments interrupted between the debit and the order are
//     finished (sweepWallet);
//   - the bot's Star transactions (newest first, back SweepWindow) are
//     matched to orders (sweepStars): an incoming invoice payment with
//     payload "q:<id>" and no order becomes a paid order (then fulfilled),
//     or is refunded when that provably bought nothing, or is listed for
//     admin review when it cannot be proven undelivered; one with payload
//     "w:<id>" (a wallet top-up) is credited or refunded (sweepTopup).
//
// It is idempotent and returns how many payments it repaired (orders made
// and refunds; charges listed for review are not counted). Only one
// process sweeps at a time: the others get ErrSweepBusy. The lock is
// renewed and released only by its holder.
func (p *Checkout) Sweep(ctx context.Context) (int, error) {
	lock, err := p.pay.LockSweep(ctx, sweepLockTTL)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("payment sweep: take the lock", "err", err)
		}
		return 0, err
	}
	if lock == nil {
		return 0, ErrSweepBusy
	}
	defer func() {
		if _, err := lock.Release(context.WithoutCancel(ctx)); err != nil {
			p.log.Warn("payment sweep: release the lock", "err", err)
		}
	}()
	n, werr := p.sweepWallet(ctx)
	if m, err := p.sweepWalletJournal(ctx); err != nil {
		werr = errors.Join(werr, err)
	} else {
		n += m
	}
	if werr != nil && ctx.Err() == nil {
		p.log.Warn("payment sweep: wallet payments", "err", werr)
	}
	if !p.opts.Stars && !p.topupsOn() {
		return n, werr
	}
	m, serr := p.sweepStars(ctx, func() {
		if _, err := lock.Extend(ctx, sweepLockTTL); err != nil && ctx.Err() == nil {
			p.log.Warn("payment sweep: renew the lock", "err", err)
		}
	})
	if serr != nil && ctx.Err() == nil {
		p.log.Warn("payment sweep: Star payments", "err", serr)
	}
	return n + m, errors.Join(werr, serr)
}

// sweepStars is the Stars part of Sweep; renew is called after each page.
func (p *Checkout) sweepStars(ctx context.Context, renew func()) (int, error) {
	epoch, err := p.storeEpoch(ctx)
	if err != nil {
		return 0, err
	}
	cutoff := p.now().Add(-p.opts.SweepWindow).Unix()
	refunded := map[string]bool{}
	n := 0
	var firstErr error
	listed := &reviewAlerts{}
	defer func() { p.alertReviews(context.WithoutCancel(ctx), listed.ids) }()
	for offset := 0; offset < 1000*sweepPage; offset += sweepPage {
		page, err := p.tg.StarTransactions(ctx, offset, sweepPage)
		if err != nil {
			return n, errors.Join(firstErr, err)
		}
		renew()
		for _, tx := range page {
			if tx.Refund {
				refunded[tx.ID] = true // a refund carries its charge's id
				if p.orphans != nil {
					if moved, err := p.orphans.ChargeRefunded(ctx, tx.ID); err != nil {
						p.log.Warn("sweep: settle the order of a refunded charge", "charge", tx.ID, "err", err)
					} else if moved {
						n++
					}
				}
				continue
			}
			if tx.Date < cutoff {
				return n, firstErr
			}
			if tx.Buyer == nil || refunded[tx.ID] {
				continue
			}
			sweep := p.sweepCharge
			switch {
			case strings.HasPrefix(tx.Buyer.Payload, topupPrefix):
				sweep = p.sweepTopup // a wallet top-up (wallettopup_settle.go)
			case !strings.HasPrefix(tx.Buyer.Payload, payloadPrefix):
				continue
			}
			repaired, err := sweep(ctx, tx, epoch, listed)
			if errors.Is(err, state.ErrRecordTooNew) {
				// A newer build's: its own sweep settles it.
				p.log.Info("sweep: payment of a newer version left for it", "charge", tx.ID, "err", err)
				continue
			}
			if err != nil {
				if ctx.Err() != nil {
					return n, err
				}
				p.log.Warn("sweep: settle payment", "charge", tx.ID, "err", err)
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if repaired {
				n++
			}
		}
		if len(page) < sweepPage {
			break
		}
	}
	return n, firstErr
}

// sweepCharge settles one incoming Stars payment from the transaction list
// and reports whether it repaired anything (made an order or refunded).
// A charge that has an order, a refund or a review entry is done. Of the
// others, only a charge provably made while this store existed is settled
// (an order, or a refund when that provably bought nothing): its date is
// not before the store's epoch, or the store holds the invoice it paid
// (recorded after the epoch). Anything older may have been delivered from
// a store that is gone: it is listed for admin review, never refunded.
//
// A charge listed for review (now or before) is added to listed, whose
// admins' alerts the sweep sends at its end.
func (p *Checkout) sweepCharge(ctx context.Context, tx StarTransaction, epoch time.Time, listed *reviewAlerts) (bool, error) {
	if done, err := p.chargeDone(ctx, tx.ID); err != nil || done {
		return false, err
	}
	if was, err := p.reviewed(ctx, tx.ID, listed); err != nil || was {
		return false, err
	}
	c := chargeOf(tx)
	after := !c.At.Before(epoch)
	if !after {
		qid, _ := strings.CutPrefix(c.Payload, payloadPrefix)
		sent, err := p.invoiceRecorded(ctx, qid)
		if err != nil {
			return false, err
		}
		after = sent
	}
	if !after {
		// The store this one continues may have delivered it (its
		// archive), or its journal may hold the paid order (the store
		// came back empty while it was under way).
		if done, err := p.restoreArchived(ctx, c.ID, c.UserID, false); err != nil || done {
			return false, err
		}
		if rebuilt, err := p.rebuildJournaled(ctx, c); err != nil || rebuilt {
			return rebuilt, err
		}
		p.log.Warn("sweep: payment older than the store; listed for review", "charge", c.ID, "user", c.UserID)
		return false, p.review(ctx, c, state.ReviewBeforeStore, listed)
	}
	p.log.Info("sweep: payment without an order", "charge", c.ID, "user", c.UserID)
	reviewed, err := p.settle(ctx, c, tx.Buyer.LanguageCode, true)
	if errors.Is(err, errSettleLater) {
		return false, nil
	}
	if reviewed {
		listed.add(c.ID)
	}
	return err == nil && !reviewed, err
}

// review lists a Star charge for admin review (once) and adds it to
// listed, whose admins' alerts the caller sends (alertReviews).
func (p *Checkout) review(ctx context.Context, c starCharge, reason string, listed *reviewAlerts) error {
	if _, err := p.Reviews.Add(ctx, state.ChargeReview{
		ChargeID: c.ID, UserID: c.UserID, Stars: c.Amount, Payload: c.Payload, PaidAt: c.At.UTC(), Reason: reason,
	}); err != nil {
		return err
	}
	listed.add(c.ID)
	return nil
}

// reviewAlerts are the charges one caller listed for review; their alerts
// go out together (alertReviews), since after a store loss one sweep may
// list hundreds and an admin's chat takes about one message a second.
type reviewAlerts struct{ ids []string }

// add adds a charge (nothing on a nil list: the caller alerts itself).
func (l *reviewAlerts) add(id string) {
	if l != nil {
		l.ids = append(l.ids, id)
	}
}

// reviewAlertItems is how many charges one review alert names.
const reviewAlertItems = 20

// reviewReasons are the locale keys of the review reasons.
var reviewReasons = map[string]string{
	state.ReviewBeforeStore: "alert.review_before_store",
	state.ReviewQuoteGone:   "alert.review_quote_gone",
}

// chargeOf is the incoming Stars charge of a transaction from the list.
func chargeOf(tx StarTransaction) starCharge {
	u := tx.Buyer
	return starCharge{ID: tx.ID, UserID: u.UserID, ChatID: u.UserID, Payload: u.Payload, Amount: tx.Amount, At: time.Unix(tx.Date, 0)}
}

// reviewed reports whether the charge id is listed for admin review
// already; it adds it to listed, so admins hear of it if they have not.
func (p *Checkout) reviewed(ctx context.Context, id string, listed *reviewAlerts) (bool, error) {
	if _, err := p.Reviews.Get(ctx, id); errors.Is(err, state.ErrNoChargeReview) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	listed.add(id)
	return true, nil
}

// alertReviews tells admins about the listed charges they have not heard
// of: one message per reviewAlertItems charges (one charge alone gets the
// single alert). Each charge's alert key is raised before the message and
// its review marked alerted after it, so a crash between the two sends
// nothing twice (the key) and a charge whose key was raised is not told
// again. Errors are logged: the next sweep finds the charge again.
func (p *Checkout) alertReviews(ctx context.Context, ids []string) {
	var fresh []*state.ChargeReview
	for _, id := range ids {
		if done, err := p.Reviews.Alerted(ctx, id); err != nil || done {
			if err != nil {
				p.log.Warn("alert a charge review: read its mark", "charge", id, "err", err)
			}
			continue
		}
		rv, err := p.Reviews.Get(ctx, id)
		if err != nil {
			p.log.Warn("alert a charge review: read it", "charge", id, "err", err)
			continue
		}
		isNew, err := p.alerts.Mark(ctx, "charge-review:"+id)
		if err != nil {
			p.log.Warn("alert a charge review: raise its key", "charge", id, "err", err)
			continue
		}
		if !isNew {
			p.markAlerted(ctx, id) // told before a crash took the mark
			continue
		}
		fresh = append(fresh, rv)
	}
	lang := p.engine.DefaultLang
	for part := range slices.Chunk(fresh, reviewAlertItems) {
		p.log.Warn("admin alert: Stars payments listed for review", "count", len(part))
		if len(part) == 1 {
			p.alerts.Tell(ctx, reviewText(lang, part[0]))
		} else {
			lines := make([]string, len(part))
			for i, rv := range part {
				lines[i] = locales.T(lang, "alert.charge_reviews_item", "charge", locales.Escape(rv.ChargeID),
					"amount", locales.Stars(lang, rv.Stars), "user", strconv.FormatInt(rv.UserID, 10),
					"date", locales.DateTime(lang, rv.PaidAt), "why", locales.T(lang, reviewWhy(rv)))
			}
			p.alerts.Tell(ctx, locales.N(lang, "alert.charge_reviews", int64(len(part)))+"\n"+strings.Join(lines, "\n"))
		}
		for _, rv := range part {
			p.markAlerted(ctx, rv.ChargeID)
		}
	}
}

// markAlerted records that admins heard of a charge review.
func (p *Checkout) markAlerted(ctx context.Context, id string) {
	if err := p.Reviews.MarkAlerted(ctx, id); err != nil {
		p.log.Warn("alert a charge review: mark it alerted", "charge", id, "err", err)
	}
}

// reviewWhy is the locale key of a review's reason.
func reviewWhy(rv *state.ChargeReview) string {
	if why := reviewReasons[rv.Reason]; why != "" {
		return why
	}
	return "alert.review_quote_gone"
}

// reviewText is the alert about one charge listed for review.
func reviewText(lang locales.Lang, rv *state.ChargeReview) string {
	return locales.T(lang, "alert.charge_review", "charge", locales.Escape(rv.ChargeID), "amount", locales.Stars(lang, rv.Stars),
		"user", strconv.FormatInt(rv.UserID, 10), "date", locales.DateTime(lang, rv.PaidAt), "why", locales.T(lang, reviewWhy(rv)))
}

// sweepWallet finishes wallet payments left between the debit and the
// order for more than a minute: the order is created, or the money
// credited back when the quote is gone or was paid otherwise.
func (p *Checkout) sweepWallet(ctx context.Context) (int, error) {
	pending, err := p.pay.WalletPendingUntil(ctx, p.now().Add(-time.Minute), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range pending {
		user, qid := m.UserID, m.QuoteID
		_, moved, err := p.Wallets.Moved(ctx, user, WalletRef(qid))
		if err != nil {
			return n, err
		}
		if !moved {
			_ = p.pay.DropWalletPending(ctx, m)
			continue
		}
		lang := p.langOf(ctx, qid, "")
		q, err := p.Quotes.Load(ctx, qid)
		if errors.Is(err, state.ErrNoQuote) {
			if o, err := p.Orders.ByCharge(ctx, WalletRef(qid)); err == nil {
				_ = p.ensureScheduled(ctx, o)
				_ = p.pay.DropWalletPending(ctx, m)
				continue
			}
			amt, _, _ := p.Wallets.Moved(ctx, user, WalletRef(qid))
			if err := p.refundDebit(ctx, user, amt.Neg(), WalletRef(qid)); err != nil {
				return n, err
			}
			_ = p.pay.DropWalletPending(ctx, m)
			n++
			continue
		}
		if err != nil {
			return n, err
		}
		o, err := p.settleWallet(ctx, q, lang, m.At)
		if errors.Is(err, state.ErrQuoteAlreadyPaid) {
			n++
			continue
		}
		if errors.Is(err, state.ErrPromoUnavailable) {
			_, _ = p.tg.Send(ctx, q.ChatID, locales.T(lang, "pay.promo_gone", "code", q.PromoCode), nil)
			n++
			continue
		}
		if err != nil {
			return n, err
		}
		if o.CreatedAt.After(p.now().Add(-time.Minute)) { // created just now: the buyer never heard
			bal, _ := p.Wallets.Balance(ctx, q.UserID)
			_, _ = p.tg.Send(ctx, q.ChatID, locales.T(lang, "pay.paid_wallet", "amount", locales.Money(lang, q.ShopUSD), "order", o.ID, "balance", locales.Money(lang, bal)), nil)
		}
		n++
	}
	return n, nil
}
