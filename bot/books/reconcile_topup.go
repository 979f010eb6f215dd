package books

import (
	"context"
	"strings"

	"shopbot/locales"
	"shopbot/state"
)

// Wallet top-ups in the reconciliation: a Star payment for a top-up
// invoice ("w:<top-up id>", checkout's wallet top-ups) has no order; it is
// explained when the payer's wallet holds its credit (ledger ref
// state.TopupRef) or it was refunded, never both.

// topupPayload starts the payload of a wallet top-up invoice.
const topupPayload = "w:"

// isTopup reports whether a Star payment paid a wallet top-up.
func isTopup(tx StarTx) bool { return strings.HasPrefix(tx.Payload, topupPayload) }

// topupCredited reports whether the top-up payment tx was credited.
func (r *Books) topupCredited(ctx context.Context, tx StarTx) (bool, error) {
	if r.wallets == nil {
		return false, nil
	}
	_, ok, err := r.wallets.Moved(ctx, tx.User, state.TopupRef(tx.ID))
	return ok, err
}

// recTopupRefund checks a Star refund of a top-up payment: the payment
// must not also be credited. charge is the refunded payment (found among
// the ones read).
func (r *Books) recTopupRefund(ctx context.Context, rep *recReport, charge StarTx) error {
	if r.wallets == nil {
		return nil
	}
	amt, ok, err := r.wallets.Moved(ctx, charge.User, state.TopupRef(charge.ID))
	if err != nil || !ok {
		return err
	}
	rep.add("topup-both:"+charge.ID, "wtopup.rec_both", "charge", locales.Escape(charge.ID), "stars", charge.Amount,
		"user", charge.User, "usd", amt)
	return nil
}
