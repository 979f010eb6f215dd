package state

import (
	"time"

	"github.com/shopspring/decimal"
)

// The books' figures as a report hands them over (bot/books.Books.Figures,
// for the admin console's charts): counted by the books, named here so the
// console needs no more of the books than these.

// Tally is one day's, one line's or a window's figures, counted as /stats
// counts them (bot/books: the tally of /stats): revenue of orders not refunded, cost and margin
// of delivered ones, promo discounts; besides, the referral rewards decided
// and the wallet top-ups credited in the same time (money in, not revenue).
type Tally struct {
	Orders, Delivered, Refunded int64
	Revenue, Cost, Margin       decimal.Decimal
	Discounts                   decimal.Decimal
	Referrals                   decimal.Decimal // referral rewards credited
	Topups                      decimal.Decimal // wallet top-ups credited (USD)
}

// Figures are the books of a window of whole UTC days, per day and per
// product line.
type Figures struct {
	From, To time.Time // [From, To)
	Days     []Day     // every day of the window, oldest first
	Lines    map[string]Tally
	Total    Tally
}

// Day is one UTC day's figures.
type Day struct {
	Date time.Time
	Tally
	Lines map[string]Tally
}

// ReferralFigures are the referral program's totals since a time: buyers
// who joined through a link, rewards and their USD.
type ReferralFigures struct {
	On              bool
	Joined, Rewards int64
	USD             decimal.Decimal
}
