package checkout

import (
	"context"
	"errors"
	"strings"
	"time"

	"shopbot/locales"
	"shopbot/state"
)

// topupGrace is how long after its top-up expired a payment still counts:
// the pre-checkout said yes before the expiry, the payment follows within
// seconds, and our clock and Telegram's may differ (clockMargin).
const topupGrace = 2 * time.Minute

// topupToldKeep is how long the mark that the buyer heard of a credit is
// kept (as long as refund marks).
const topupToldKeep = 400 * 24 * time.Hour

// topupRules are what a top-up payment must meet now.
func (p *Checkout) topupRules() state.TopupRules {
	return state.TopupRules{WalletOn: p.topupsOn(), MaxBalance: p.opts.Topup.MaxBalanceUSD, Grace: topupGrace}
}

// settleTopup credits a top-up charge to the payer's wallet exactly once
// (records.Wallets.SettleTopup: ledger ref "topup:<charge>"), or refunds it
// when it cannot be credited. The order under a crash: the decision
// (credit, or refund with its reason) is made atomically in the buyer's
// wallet slot and made durable first; the refund, and the message to the
// buyer, follow it. Run again, it finds the same decision: a credited
// charge is never refunded and a refunded one never credited. It reports
// whether it repaired anything (credited or refunded now). A top-up a
// newer build recorded is neither: state.ErrRecordTooNew.
func (p *Checkout) settleTopup(ctx context.Context, c starCharge, langCode string) (bool, error) {
	if done, err := p.pay.Refunded(ctx, c.ID); err != nil {
		return false, err
	} else if done {
		return false, nil
	}
	at := c.At
	if at.IsZero() {
		at = p.now()
	}
	id := strings.TrimPrefix(c.Payload, topupPrefix)
	out, err := p.Wallets.SettleTopup(ctx, state.TopupCharge{ChargeID: c.ID, Payer: c.UserID, TopupID: id, Stars: c.Amount, PaidAt: at}, p.topupRules())
	lang := p.topupLang(out.Topup, langCode)
	if err != nil {
		return false, err
	}
	amount := locales.Stars(lang, c.Amount)
	if out.Credited {
		first, err := p.pay.MarkTopupTold(ctx, c.ID, p.now(), topupToldKeep)
		if err != nil || !first {
			return false, err
		}
		usd, err := p.creditedUSD(ctx, c, out, lang)
		if err != nil {
			return false, err
		}
		p.log.Info("wallet topped up", "charge", c.ID, "user", c.UserID, "topup", id, "stars", c.Amount, "usd", usd, "fresh", out.Fresh)
		if _, err := p.tg.Send(ctx, c.ChatID, locales.T(lang, "wtopup.credited", "usd", usd, "stars", amount,
			"balance", locales.Money(lang, out.Balance)), nil); err != nil {
			p.log.Warn("tell buyer about a wallet top-up", "charge", c.ID, "err", err)
		}
		return true, nil
	}
	p.log.Info("wallet top-up payment cannot be credited; refunding", "charge", c.ID, "user", c.UserID, "topup", id, "reason", out.Refund)
	return true, p.refund(ctx, c, lang, "wtopup.refund_"+out.Refund, "amount", amount,
		"max", locales.Money(lang, p.opts.Topup.MaxBalanceUSD))
}

// creditedUSD is the amount a top-up charge credited, in lang: its
// record's, else its ledger entry's.
func (p *Checkout) creditedUSD(ctx context.Context, c starCharge, out state.TopupOutcome, lang locales.Lang) (string, error) {
	if out.Topup != nil {
		return locales.Money(lang, out.Topup.USD), nil
	}
	amt, _, err := p.Wallets.Moved(ctx, c.UserID, state.TopupRef(c.ID))
	return locales.Money(lang, amt), err
}

// paidTopup handles the successful_payment of a top-up invoice.
func (p *Checkout) paidTopup(ctx context.Context, c starCharge, langCode string) {
	if _, err := p.settleTopup(ctx, c, langCode); errors.Is(err, state.ErrRecordTooNew) {
		p.logLeftForNewer(c, err)
	} else if err != nil {
		// The sweep finds the charge again and finishes the job.
		p.log.Error("record wallet top-up payment", "charge", c.ID, "chat", c.ChatID, "err", err)
	}
}

// sweepTopup settles a top-up charge found by the sweep, like a lost item
// payment: credited once (the same ref as its update would use, so a late
// update changes nothing), or refunded when it cannot be. A charge older
// than the store whose record this store does not hold may have been
// credited, and spent, in a store that is gone: it is listed for review,
// never refunded or credited.
func (p *Checkout) sweepTopup(ctx context.Context, tx StarTransaction, epoch time.Time, listed *reviewAlerts) (bool, error) {
	u := tx.Buyer
	if _, moved, err := p.Wallets.Moved(ctx, u.UserID, state.TopupRef(tx.ID)); err != nil {
		return false, err
	} else if moved {
		told, err := p.pay.TopupTold(ctx, tx.ID)
		if err != nil || told {
			return false, err // credited, indexed and told: done
		}
		if chargeOf(tx).At.Before(epoch) {
			return false, nil // credited in the store this one continues: its wallet was restored with it
		}
	}
	if done, err := p.pay.Refunded(ctx, tx.ID); err != nil {
		return false, err
	} else if done {
		return false, nil
	}
	if was, err := p.reviewed(ctx, tx.ID, listed); err != nil || was {
		return false, err
	}
	c := chargeOf(tx)
	if c.At.Before(epoch) {
		known := false
		if _, err := p.Wallets.Topup(ctx, strings.TrimPrefix(c.Payload, topupPrefix)); err == nil {
			known = true
		} else if !errors.Is(err, state.ErrNoTopup) {
			return false, err
		}
		decided, err := p.Wallets.TopupRefundDecided(ctx, c.UserID, c.ID)
		if err != nil {
			return false, err
		}
		if !known && decided == "" {
			p.log.Warn("sweep: top-up payment older than the store; listed for review", "charge", c.ID, "user", c.UserID)
			return false, p.review(ctx, c, state.ReviewBeforeStore, listed)
		}
	}
	return p.settleTopup(ctx, c, u.LanguageCode)
}
