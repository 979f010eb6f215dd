package books

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// Telegram's affiliate program for bots, in the books. Two sides show in
// the bot's Star transactions:
//   - the shop's own program: affiliates promote the bot, and a payment by
//     a buyer one of them brought carries the commission the affiliate
//     took from it (StarTx.Affiliate; the transaction's amount is what the
//     bot kept). Its refund gives the commission back (a negative one);
//   - the bot as an affiliate of another bot's program: the commissions it
//     earns arrive as incoming transactions from that program
//     (StarTx.Program).
// Neither is an unexplained item of /reconcile: both are counted in its
// header, and /stats shows them per period. Commissions are in Stars with
// their fraction (nanostars); /stats converts them at STARS_USD_RATE.

// affiliateTally is the affiliate program's part of a window.
type affiliateTally struct {
	paid     decimal.Decimal // commissions affiliates took (net of those given back)
	payments int64           // payments that carried a commission
	earned   decimal.Decimal // commissions the bot earned from other bots' programs
	earnings int64
}

// add counts a transaction's commission, if it carries one.
func (t *affiliateTally) add(tx StarTx) {
	switch {
	case tx.Program:
		t.earned = t.earned.Add(tx.Stars())
		t.earnings++
	case !tx.Affiliate.IsZero():
		t.paid = t.paid.Add(tx.Affiliate)
		if !tx.Refund {
			t.payments++
		}
	}
}

func (t *affiliateTally) any() bool {
	return t.payments > 0 || t.earnings > 0 || !t.paid.IsZero()
}

// starsAmount shows a number of Stars with its fraction (at most two
// places): "12.5 ⭐".
func starsAmount(lang locales.Lang, d decimal.Decimal) string {
	s := locales.Decimal(lang, d, 2)
	if strings.ContainsAny(s, ".,") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".,")
	}
	return s + " ⭐"
}

// recLine is the reconciliation header's line of the window's
// commissions.
func (t *affiliateTally) recLine(lang locales.Lang) string {
	return locales.T(lang, "aff.rec", "paid", starsAmount(lang, t.paid), "payments", locales.Number(lang, t.payments),
		"earned", starsAmount(lang, t.earned), "earnings", locales.Number(lang, t.earnings))
}

// statsLine is /stats' line of a period's commissions ("" when there were
// none).
func (t *affiliateTally) statsLine(env *flows.Env, rate decimal.Decimal) string {
	if !t.any() {
		return ""
	}
	lang := env.Lang
	return "\n" + env.T("aff.stats", "paid", starsAmount(lang, t.paid), "paid_usd", locales.Money(lang, t.paid.Mul(rate)),
		"payments", locales.Number(lang, t.payments), "earned", starsAmount(lang, t.earned),
		"earned_usd", locales.Money(lang, t.earned.Mul(rate)), "net", locales.SignedMoney(lang, t.earned.Sub(t.paid).Mul(rate)))
}

// affiliateTotals reads the Star transactions back to the oldest period's
// start and counts the commissions into each period. Telegram's list not
// being readable is not an error of /stats: it reports false and the
// periods show a line saying so.
func (r *Books) affiliateTotals(ctx context.Context, periods []*period) bool {
	if r.stars == nil {
		return true
	}
	for _, p := range periods {
		p.aff = affiliateTally{paid: decimal.Zero, earned: decimal.Zero}
	}
	oldest := periods[len(periods)-1].from
	for offset := 0; offset < recMaxPages*recPage; offset += recPage {
		page, err := r.stars.StarTransactions(ctx, offset, recPage)
		if err != nil {
			r.log.Warn("stats: read the Star transactions for the affiliate commissions", "err", err)
			return false
		}
		for _, tx := range page {
			if tx.Date.Before(oldest) {
				return true
			}
			for _, p := range periods {
				if !tx.Date.Before(p.from) {
					p.aff.add(tx)
				}
			}
		}
		if len(page) < recPage {
			return true
		}
	}
	return true
}
