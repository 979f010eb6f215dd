package books

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// The books as the admin console (bot/console) reads them: the same
// figures, balance, reconciliation and CSV as /stats, /balance, /reconcile
// and /export, from the same code, as data or plain text.

func (r *Books) tallyOf(t *tally) state.Tally {
	return state.Tally{Orders: t.orders, Delivered: t.delivered, Refunded: t.refunded,
		Revenue: t.revenue(r.opts.StarsUSDRate), Cost: t.cost, Margin: t.margin(), Discounts: t.discountUSD,
		Referrals: decimal.Zero, Topups: decimal.Zero}
}

// Figures counts the orders created, the referral rewards decided and the
// top-ups credited from the UTC day of from to now, as /stats does.
func (r *Books) Figures(ctx context.Context, from, now time.Time) (*state.Figures, error) {
	from = from.UTC()
	from = time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	now = now.UTC()
	dayOf := func(t time.Time) int { return int(t.UTC().Sub(from) / (24 * time.Hour)) }
	n := dayOf(now) + 1
	if n <= 0 {
		return nil, errors.New("figures: from is after now")
	}
	days := make([]tally, n)
	dayLines := make([]map[string]*tally, n)
	lines := map[string]*tally{}
	var total tally
	err := r.scanOrders(ctx, from, state.OrderFilter{}, func(o *state.Order) {
		i := dayOf(o.CreatedAt)
		if o.CreatedAt.Before(from) || i >= n {
			return
		}
		f := r.figuresOf(o)
		total.add(f)
		days[i].add(f)
		if lines[o.Line] == nil {
			lines[o.Line] = &tally{}
		}
		lines[o.Line].add(f)
		if dayLines[i] == nil {
			dayLines[i] = map[string]*tally{}
		}
		if dayLines[i][o.Line] == nil {
			dayLines[i][o.Line] = &tally{}
		}
		dayLines[i][o.Line].add(f)
	})
	if err != nil {
		return nil, err
	}
	out := &state.Figures{From: from, To: now, Lines: map[string]state.Tally{}, Total: r.tallyOf(&total), Days: make([]state.Day, n)}
	for name, t := range lines {
		out.Lines[name] = r.tallyOf(t)
	}
	for i := range days {
		d := state.Day{Date: from.AddDate(0, 0, i), Tally: r.tallyOf(&days[i]), Lines: map[string]state.Tally{}}
		for name, t := range dayLines[i] {
			d.Lines[name] = r.tallyOf(t)
		}
		out.Days[i] = d
	}
	if r.wallets != nil {
		list, err := r.wallets.PaidTopups(ctx, from)
		if err != nil {
			return nil, err
		}
		for _, t := range list {
			if i := dayOf(t.PaidAt); i >= 0 && i < n {
				out.Days[i].Topups = out.Days[i].Topups.Add(t.USD)
				out.Total.Topups = out.Total.Topups.Add(t.USD)
			}
		}
	}
	if r.refs != nil {
		act, err := r.refs.ActivitySince(ctx, from)
		if err != nil {
			return nil, err
		}
		for _, rw := range act.Rewards {
			if i := dayOf(rw.At); i >= 0 && i < n {
				out.Days[i].Referrals = out.Days[i].Referrals.Add(rw.USD)
				out.Total.Referrals = out.Total.Referrals.Add(rw.USD)
			}
		}
	}
	return out, nil
}

// Referrals counts the referral program's activity since from (On false
// when the program is off).
func (r *Books) Referrals(ctx context.Context, from time.Time) (state.ReferralFigures, error) {
	if r.refs == nil {
		return state.ReferralFigures{USD: decimal.Zero}, nil
	}
	act, err := r.refs.ActivitySince(ctx, from)
	if err != nil {
		return state.ReferralFigures{}, err
	}
	f := state.ReferralFigures{On: true, Joined: int64(len(act.Joined)), USD: decimal.Zero}
	for _, rw := range act.Rewards {
		f.Rewards++
		f.USD = f.USD.Add(rw.USD)
	}
	return f, nil
}

// UpstreamBalance is the upstream account's balance in USD, read now.
func (r *Books) UpstreamBalance(ctx context.Context) (decimal.Decimal, error) {
	if r.up == nil {
		return decimal.Zero, errors.New("no upstream configured")
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamWait)
	defer cancel()
	me, err := r.up.Me(ctx)
	if err != nil {
		return decimal.Zero, err
	}
	return me.BalanceUSD.Decimal, nil
}

// BalanceText is /balance's report in lang as plain text.
func (r *Books) BalanceText(ctx context.Context, lang locales.Lang) (string, error) {
	rep, err := r.balance(ctx, &flows.Env{Lang: lang, Now: r.now()}, nil, flows.Event{})
	if err != nil {
		return "", err
	}
	return locales.Plain(rep.Notices[0].Text), nil
}

// ReconcileText is /reconcile's report over window ("24h", "7d"; "" for
// a day) in lang as plain text; refusal is why the window was refused.
func (r *Books) ReconcileText(ctx context.Context, lang locales.Lang, window string) (text, refusal string, err error) {
	env := &flows.Env{Lang: lang, Now: r.now()}
	w, ok := parseWindow(window)
	if !ok {
		return "", locales.Plain(env.T("rep.rec.bad_window", "value", locales.Escape(locales.Clip(window, 40))) + "\n\n" + env.T("rep.rec.usage")), nil
	}
	now := env.Now.UTC()
	rep, err := r.reconcile(ctx, now.Add(-w), now)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString(plain(r.recHeader(lang, rep)))
	for _, it := range rep.items {
		b.WriteString("\n" + plain(itemLine(lang, it)))
	}
	return b.String(), "", nil
}

// ExportCSV is /export's CSV for arg (/export's own arguments: "orders 7d",
// "ledger 2026-11-01 2026-11-30"): its file name and bytes, or the
// refusal of the arguments in lang.
func (r *Books) ExportCSV(ctx context.Context, lang locales.Lang, arg string) (name string, data []byte, refusal string, err error) {
	env := &flows.Env{Lang: lang, Now: r.now()}
	a, problem, value := parseExport(arg, env.Now)
	if problem != "" {
		return "", nil, locales.Plain(env.T(problem, "value", locales.Escape(locales.Clip(value, 40)), "max", exportMaxDays)), nil
	}
	stamp := a.from.Format("20060102") + "-" + a.to.Add(-time.Second).UTC().Format("20060102")
	if a.kind == "orders" {
		data, _, err = r.exportOrders(ctx, env, a)
		name = "orders-" + stamp + ".csv"
	} else {
		data, _, err = r.exportLedger(ctx, env, a)
		name = "ledger-" + stamp + ".csv"
	}
	return name, data, "", err
}

// NewCreditRef draws the ledger ref of one credit by admin (CreditRef),
// for the console's credit form.
func (r *Books) NewCreditRef(admin int64) string { return CreditRef(admin) }

// CreditLimit is the largest single credit (MaxAdminCreditUSD).
func (r *Books) CreditLimit() decimal.Decimal { return MaxAdminCreditUSD }

// ChargeOutcomeText is what /charges says of an outcome of ResolveCharge
// in lang, as plain text: the note of its done step and, once the charge
// is resolved, who resolved it, how and when.
func (r *Books) ChargeOutcomeText(lang locales.Lang, out *state.ChargeOutcome) string {
	env := &flows.Env{Lang: lang, Now: r.now()}
	text := env.T(chargeNote(out), "order", strconv.FormatInt(out.Order, 10))
	if out.Review != nil && out.Review.Resolution != nil && out.Order == 0 {
		text += " " + r.resolutionText(env, out.Review)
	}
	return locales.Plain(text)
}
