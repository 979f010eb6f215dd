package checkout

import (
	"context"
	"shopbot/state/redisstore/records"
	"time"

	"shopbot/state"
)

// Promo codes and money agree this way (records.Promos keeps each use's
// state per quote):
//
//   - a use is held before any money moves: at the pre-checkout (the last
//     check, so nothing after it refuses the payment) or just before the
//     wallet debit. Two buyers racing for the last use: one holds it, the
//     other's pre-checkout is refused (or their wallet is not debited),
//     so nobody pays the discounted price without a use;
//   - the use is consumed, idempotently by the quote, right before the
//     paid order is created for the charge: a repeated successful_payment,
//     the sweep or a retry consume it once, and a quote has one order;
//   - a hold that is not paid lapses at promoHold after the quote
//     expires (no payment of the quote can start after that), or is
//     released when a wallet debit fails. A payment settled after its
//     hold lapsed consumes a use if one is still free; otherwise its
//     money goes back (Stars refunded, wallet credited back) and the
//     buyer is told why;
//   - a refunded order gives its use back once (fulfilment's OnRefunded,
//     idempotent by the quote).

// promoHold is how long a hold outlives its quote: the time Telegram takes
// from an accepted pre-checkout to the payment.
const promoHold = 5 * time.Minute

// reservePromo holds the quote's promo use, if it has a code.
func (p *Checkout) reservePromo(ctx context.Context, q *state.Quote) error {
	if q.PromoCode == "" {
		return nil
	}
	if p.promos == nil {
		return state.ErrPromoUnknown
	}
	return p.promos.Reserve(ctx, q.PromoCode, q.ID, q.UserID, q.Expires.Add(promoHold))
}

// commitPromo consumes the quote's promo use, if it has a code.
func (p *Checkout) commitPromo(ctx context.Context, q *state.Quote) error {
	if q.PromoCode == "" {
		return nil
	}
	if p.promos == nil {
		return state.ErrPromoUnknown
	}
	return p.promos.Commit(ctx, q.PromoCode, q.ID, q.UserID)
}

// releasePromo drops the quote's hold after a payment that did not happen.
func (p *Checkout) releasePromo(ctx context.Context, q *state.Quote) {
	if q.PromoCode == "" || p.promos == nil {
		return
	}
	if err := p.promos.Release(context.WithoutCancel(ctx), q.PromoCode, q.ID, q.UserID); err != nil {
		p.log.Warn("release promo hold", "quote", q.ID, "err", err) // it lapses on its own
	}
}

// ReturnPromo gives a refunded order's promo use back, once (fulfilment's
// OnRefunded).
func ReturnPromo(ctx context.Context, promos *records.Promos, o *state.Order) error {
	if o.PromoCode == "" || promos == nil {
		return nil
	}
	_, err := promos.Return(ctx, o.PromoCode, o.QuoteID, o.UserID)
	return err
}
