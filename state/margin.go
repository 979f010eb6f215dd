package state

import "github.com/shopspring/decimal"

// PaidUSD is what the order brought in, in USD: its Stars at starsUSDRate
// (STARS_USD_RATE), or the wallet amount. /stats, the CSV export and
// referral rewards count it the same way.
func (o *Order) PaidUSD(starsUSDRate decimal.Decimal) decimal.Decimal {
	if o.PayMethod == PayStars {
		return decimal.NewFromInt(o.Stars).Mul(starsUSDRate)
	}
	return o.ShopUSD
}

// Margin is a delivered order's margin: what it brought in (PaidUSD) minus
// what the upstream charged for it. ok is false for an order that is not
// delivered: its cost is not final (or it was refunded and earned nothing).
func (o *Order) Margin(starsUSDRate decimal.Decimal) (margin decimal.Decimal, ok bool) {
	if o.Status != OrderDelivered {
		return decimal.Zero, false
	}
	return o.PaidUSD(starsUSDRate).Sub(o.ChargedUSD), true
}
