package checkout

import (
	"context"
	"errors"
	"strings"

	"shopbot/locales"
	"shopbot/state"
)

// RefundReviewed refunds a Star charge listed for review that an admin
// decided to give back (books' /charges), through the shop's one Stars
// refund (refund): CHARGE_ALREADY_REFUNDED counts as done, a failure
// alerts the owners, and the buyer is told once, whoever calls it and
// however often (the refund mark). The buyer is told in the language they
// saw the charge's quote in when the store recorded it, else in lang.
//
// It reports whether this call gave the charge back; false with no error
// means the shop had refunded it before (nothing was called). A charge
// that has an order by now is not refunded here: state.ErrChargeHasOrder
// (its order is refunded from /order N).
func (p *Checkout) RefundReviewed(ctx context.Context, rv *state.ChargeReview, lang locales.Lang) (bool, error) {
	if _, err := p.Orders.ByCharge(ctx, rv.ChargeID); err == nil {
		return false, state.ErrChargeHasOrder
	} else if !errors.Is(err, state.ErrOrderNotFound) {
		return false, err
	}
	if done, err := p.pay.Refunded(ctx, rv.ChargeID); err != nil || done {
		return false, err
	}
	if qid, ok := strings.CutPrefix(rv.Payload, payloadPrefix); ok {
		if v, err := p.pay.QuoteLang(ctx, qid); err == nil {
			if l, ok := locales.Parse(v); ok {
				lang = l
			}
		}
	}
	c := starCharge{ID: rv.ChargeID, UserID: rv.UserID, ChatID: rv.UserID, Payload: rv.Payload, Amount: rv.Stars, At: rv.PaidAt}
	if err := p.refund(ctx, c, lang, "chg.buyer_refunded", "amount", locales.Stars(lang, rv.Stars)); err != nil {
		return false, err
	}
	return true, nil
}
