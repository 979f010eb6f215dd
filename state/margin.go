package state

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// PaidUSD is what the order brought in, in USD: its Stars at starsUSDRate
// (STARS_USD_RATE), or the wallet amount. /stats, the CSV export and
// referral rewards count it the same way.
func (o *Order) PaidUSD(starsUSDRate decimal.Decimal) decimal.Decimal {
	if o.PayMethod == PayStars {
		return decimal.NewFromInt(o.Stars).Mul(starsUSDRate)
	}
	return o.ShopUSD
}

// MaxChargeOverQuote bounds a plausible upstream charge for an order: at
// most this many times its quoted cost (UpstreamUSD). The quote is the
// upstream's own price, checked again at the pre-checkout, and the create
// follows within seconds; a price move in between is a few percent, and a
// top-up is charged less than its quote (the upstream's discount). Twice
// the quote is no price move but a fault of the upstream's figure.
const MaxChargeOverQuote = 2

// ChargeFault says why charged cannot be what the upstream took for o
// (negative, or more than MaxChargeOverQuote times its quoted cost), or ""
// when it is plausible. Nothing is computed from an impossible figure:
// the worker sends the order to review (bot/fulfil) and Margin reports no
// margin for one stored before.
func (o *Order) ChargeFault(charged decimal.Decimal) string {
	if charged.IsNegative() {
		return fmt.Sprintf("charged_usd %s is negative", charged.StringFixed(4))
	}
	if limit := o.UpstreamUSD.Mul(decimal.NewFromInt(MaxChargeOverQuote)); o.UpstreamUSD.IsPositive() && charged.GreaterThan(limit) {
		return fmt.Sprintf("charged_usd %s is more than %d times the quoted %s", charged.StringFixed(4), MaxChargeOverQuote, o.UpstreamUSD.StringFixed(4))
	}
	return ""
}

// Margin is a delivered order's margin: what it brought in (PaidUSD) minus
// what the upstream charged for it. ok is false for an order that is not
// delivered (its cost is not final, or it was refunded and earned
// nothing) and for one whose stored charge is impossible (ChargeFault).
func (o *Order) Margin(starsUSDRate decimal.Decimal) (margin decimal.Decimal, ok bool) {
	if o.Status != OrderDelivered || o.ChargeFault(o.ChargedUSD) != "" {
		return decimal.Zero, false
	}
	return o.PaidUSD(starsUSDRate).Sub(o.ChargedUSD), true
}
