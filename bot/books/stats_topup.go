package books

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// Wallet top-ups in /stats. A top-up is money in, not a sale: the buyer's
// later wallet payment is the sale, and it counts as revenue (wallet
// payments, at their USD price) like any other order. So revenue counts a
// top-up's money once, when it is spent; /stats shows the top-ups on their
// own line: how many, the Stars paid (at STARS_USD_RATE) and the USD
// credited.

// topupTally is one period's credited wallet top-ups.
type topupTally struct {
	n     int64
	stars int64
	usd   decimal.Decimal
}

// tallyTopups counts the credited top-ups of each period (the index
// checkout's wallet top-ups keep, records.Wallets.PaidTopups).
func (r *Books) tallyTopups(ctx context.Context, periods []*period) error {
	if r.wallets == nil || len(periods) == 0 {
		return nil
	}
	from := periods[0].from
	for _, p := range periods {
		if p.from.Before(from) {
			from = p.from
		}
	}
	list, err := r.wallets.PaidTopups(ctx, from)
	if err != nil {
		return err
	}
	for _, t := range list {
		for _, p := range periods {
			if t.PaidAt.Before(p.from) {
				continue
			}
			p.topups.n++
			p.topups.stars += t.Stars
			p.topups.usd = p.topups.usd.Add(t.USD)
		}
	}
	return nil
}

// writeTopups adds a period's top-up line, when it had any.
func (r *Books) writeTopups(b *strings.Builder, env *flows.Env, p *period) {
	t := p.topups
	if t.n == 0 {
		return
	}
	money := func(d decimal.Decimal) string { return locales.Money(env.Lang, d) }
	b.WriteString("\n" + env.N("wtopup.stats", t.n, "stars", locales.Stars(env.Lang, t.stars),
		"stars_usd", money(decimal.NewFromInt(t.stars).Mul(r.opts.StarsUSDRate)), "usd", money(t.usd)))
}

// anyTopups reports whether a period had top-ups (the legend explains them).
func anyTopups(periods []*period) bool {
	for _, p := range periods {
		if p.topups.n > 0 {
			return true
		}
	}
	return false
}
