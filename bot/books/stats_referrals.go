package books

import (
	"context"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// referralTally is one /stats period's referral figures: buyers
// attributed in it, and the rewards above zero decided in it (a reward is
// decided when its order is delivered, and credited right then).
type referralTally struct {
	on      bool // referrals are on: the line shows when anything happened
	joined  int64
	rewards int64
	usd     decimal.Decimal
}

// referralTotals counts the referral program's activity into each period
// (nothing when referrals are off).
func (r *Books) referralTotals(ctx context.Context, periods []*period) error {
	if r.refs == nil {
		return nil
	}
	act, err := r.refs.ActivitySince(ctx, periods[len(periods)-1].from)
	if err != nil {
		return err
	}
	for _, p := range periods {
		p.refs = referralTally{on: true, usd: decimal.Zero}
		for _, at := range act.Joined {
			if !at.Before(p.from) {
				p.refs.joined++
			}
		}
		for _, rw := range act.Rewards {
			if !rw.At.Before(p.from) {
				p.refs.rewards++
				p.refs.usd = p.refs.usd.Add(rw.USD)
			}
		}
	}
	return nil
}

// line is the period's referral line of /stats ("" when there is nothing
// to show).
func (t referralTally) line(env *flows.Env) string {
	if !t.on || t.joined == 0 && t.rewards == 0 {
		return ""
	}
	return "\n" + env.N("rep.stats.referrals", t.joined, "usd", locales.Money(env.Lang, t.usd), "orders", locales.Number(env.Lang, t.rewards))
}
