package books

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// /stats: orders, revenue, cost, margin and refund rate for today, the
// last 7 and the last 30 UTC days; the figures /export's rows come from.

// The /stats scan.
const (
	statsBatch = 200
	// statsSkew is how far past the 30-day window the /stats scan still
	// looks: order ids follow creation time, but replicas' clocks may
	// differ a little, so the scan stops only at an order clearly older.
	statsSkew = time.Hour
)

// paidUSD is what an order brought in, in USD: its Stars at
// STARS_USD_RATE, or the wallet amount.
func (r *Books) paidUSD(o *state.Order) decimal.Decimal {
	return o.PaidUSD(r.opts.StarsUSDRate)
}

// tally is one period's (or one line's) figures. What counts:
//   - orders: every paid order created in the period, whatever its status;
//   - revenue: what buyers paid for orders that were not refunded (status
//     refunded, or refunding: the refund is decided, only its payout may be
//     pending). Stars payments count at STARS_USD_RATE, wallet payments at
//     their USD price;
//   - cost: the upstream's charged_usd of delivered orders (an order still
//     in progress has no final cost yet; a refunded one cost nothing; an
//     impossible one, state.Order.ChargeFault, is unknown);
//   - margin: the revenue of delivered orders minus their cost, so orders
//     in progress do not inflate it (a delivered order of unknown cost
//     counts in neither);
//   - refund rate: refunded (or refunding) orders over finished ones
//     (delivered + refunded).
type tally struct {
	orders, delivered, refunded int64
	stars                       int64           // Stars paid for orders not refunded
	wallet                      decimal.Decimal // wallet USD paid for orders not refunded
	deliveredRevenue            decimal.Decimal
	cost                        decimal.Decimal
	// Promo codes: orders not refunded that used one, and what they took
	// off. Revenue and margin already count the discounted prices;
	// promoMargin is the margin of the delivered ones alone, so the admin
	// sees what the discounted orders still earned.
	discounts   int64
	discountUSD decimal.Decimal
	promoMargin decimal.Decimal
}

// figures are one order's part in the /stats figures (see tally): the
// /stats totals and the CSV export's rows both come from here.
type figures struct {
	refunded  bool            // refunded or refunding: counted, brings nothing
	delivered bool            // its cost and margin are final
	costKnown bool            // delivered with a plausible cost (state.Order.Margin)
	stars     int64           // Stars that count as revenue
	wallet    decimal.Decimal // wallet USD that counts as revenue
	revenue   decimal.Decimal // stars at STARS_USD_RATE plus wallet
	cost      decimal.Decimal // delivered: what the upstream charged
	margin    decimal.Decimal // delivered: revenue minus cost
	discount  decimal.Decimal // the promo code's discount (not refunded orders)
}

// figuresOf returns o's part in the figures.
func (r *Books) figuresOf(o *state.Order) figures {
	f := figures{wallet: decimal.Zero, revenue: decimal.Zero, cost: decimal.Zero, margin: decimal.Zero, discount: decimal.Zero}
	if o.Status == state.OrderRefunded || o.Status == state.OrderRefunding {
		f.refunded = true
		return f
	}
	if o.PayMethod == state.PayStars {
		f.stars = o.Stars
	} else {
		f.wallet = o.ShopUSD
	}
	f.revenue = r.paidUSD(o)
	f.discount = o.DiscountUSD
	if o.Status == state.OrderDelivered {
		f.delivered = true
		// Revenue minus cost, as referral rewards count it; an impossible
		// stored cost (state.Order.ChargeFault) counts in neither.
		if m, ok := o.Margin(r.opts.StarsUSDRate); ok {
			f.costKnown, f.cost, f.margin = true, o.ChargedUSD, m
		}
	}
	return f
}

// add counts an order with figures f.
func (t *tally) add(f figures) {
	t.orders++
	if f.refunded {
		t.refunded++
		return
	}
	if f.discount.IsPositive() {
		t.discounts++
		t.discountUSD = t.discountUSD.Add(f.discount)
	}
	t.stars += f.stars
	t.wallet = t.wallet.Add(f.wallet)
	if f.delivered {
		t.delivered++
	}
	if f.costKnown {
		t.deliveredRevenue = t.deliveredRevenue.Add(f.revenue)
		t.cost = t.cost.Add(f.cost)
		if f.discount.IsPositive() {
			t.promoMargin = t.promoMargin.Add(f.margin)
		}
	}
}

func (t *tally) revenue(rate decimal.Decimal) decimal.Decimal {
	return decimal.NewFromInt(t.stars).Mul(rate).Add(t.wallet)
}

func (t *tally) margin() decimal.Decimal { return t.deliveredRevenue.Sub(t.cost) }

func (t *tally) finished() int64 { return t.delivered + t.refunded }

// period is one /stats window: from midnight UTC `days` days back
// (today included) to now.
type period struct {
	key    string
	from   time.Time
	all    tally
	lines  map[string]*tally
	topups topupTally // wallet top-ups credited (stats_topup.go): money in, not revenue
	refs   referralTally
	aff    affiliateTally // Telegram's affiliate program (affiliate.go)
}

// stats reports orders, revenue, cost, margin and refund rate for today,
// the last 7 and the last 30 UTC days, overall and per product line.
func (r *Books) stats(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
	now := ev.Now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	periods := []*period{
		{key: "today", from: today},
		{key: "week", from: today.AddDate(0, 0, -6)},
		{key: "month", from: today.AddDate(0, 0, -29)},
	}
	err := r.scanOrders(ctx, periods[2].from, state.OrderFilter{}, func(o *state.Order) {
		f := r.figuresOf(o)
		for _, p := range periods {
			if o.CreatedAt.Before(p.from) {
				continue
			}
			p.all.add(f)
			if p.lines == nil {
				p.lines = map[string]*tally{}
			}
			if p.lines[o.Line] == nil {
				p.lines[o.Line] = &tally{}
			}
			p.lines[o.Line].add(f)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := r.tallyTopups(ctx, periods); err != nil {
		return nil, err
	}
	if err := r.referralTotals(ctx, periods); err != nil {
		return nil, err
	}
	affOK := r.affiliateTotals(ctx, periods)
	text := r.statsText(env, now, periods, true)
	if locales.UTF16Len(text) > flows.MaxTextLen {
		text = r.statsText(env, now, periods, false)
	}
	if !affOK {
		text += "\n" + env.T("aff.stats_unavailable")
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
}

// scanOrders calls fn with every order matching filter, newest first, down
// to those created at from: order ids follow creation time, so the scan
// stops at an order clearly older (statsSkew: replicas' clocks may differ
// a little). fn also sees the few orders just older than from; it checks
// CreatedAt itself.
func (r *Books) scanOrders(ctx context.Context, from time.Time, filter state.OrderFilter, fn func(o *state.Order)) error {
	for offset := 0; ; offset += statsBatch {
		batch, err := r.orders.List(ctx, offset, statsBatch, filter)
		if err != nil {
			return err
		}
		for _, o := range batch {
			if o.CreatedAt.Before(from.Add(-statsSkew)) {
				return nil
			}
			fn(o)
		}
		if len(batch) < statsBatch {
			return nil
		}
	}
}

func percent(part, whole decimal.Decimal) decimal.Decimal {
	return part.Mul(decimal.NewFromInt(100)).Div(whole)
}

func (r *Books) statsText(env *flows.Env, now time.Time, periods []*period, perLine bool) string {
	lang, rate := env.Lang, r.opts.StarsUSDRate
	money := func(d decimal.Decimal) string { return locales.Money(lang, d) }
	var b strings.Builder
	b.WriteString(env.T("rep.stats.title", "now", locales.DateTime(lang, now), "rate", rate))
	for _, p := range periods {
		b.WriteString("\n\n")
		b.WriteString(env.T("rep.stats."+p.key, "from", locales.Date(lang, p.from), "to", locales.Date(lang, now)))
		t := &p.all
		if t.orders == 0 {
			b.WriteString("\n" + env.T("rep.stats.none"))
			r.writeTopups(&b, env, p)
			b.WriteString(p.refs.line(env))
			b.WriteString(p.aff.statsLine(env, rate))
			continue
		}
		b.WriteString("\n" + env.N("rep.stats.orders", t.orders, "delivered", locales.Number(lang, t.delivered),
			"progress", locales.Number(lang, t.orders-t.delivered-t.refunded), "refunded", locales.Number(lang, t.refunded)))
		b.WriteString("\n" + env.T("rep.stats.revenue", "total", money(t.revenue(rate)), "stars", locales.Stars(lang, t.stars),
			"stars_usd", money(decimal.NewFromInt(t.stars).Mul(rate)), "wallet", money(t.wallet)))
		margin := env.T("rep.stats.margin", "margin", money(t.margin()))
		if t.deliveredRevenue.IsPositive() {
			margin = env.T("rep.stats.margin_pct", "margin", money(t.margin()), "pct", locales.Decimal(lang, percent(t.margin(), t.deliveredRevenue), 1))
		}
		b.WriteString("\n" + env.T("rep.stats.cost", "cost", money(t.cost), "margin", margin))
		if t.discounts > 0 {
			b.WriteString("\n" + env.N("rep.stats.discounts", t.discounts, "usd", money(t.discountUSD), "margin", money(t.promoMargin)))
		}
		if t.finished() == 0 {
			b.WriteString("\n" + env.T("rep.stats.refunds_none"))
		} else {
			b.WriteString("\n" + env.N("rep.stats.refunds", t.finished(), "pct", locales.Decimal(lang, percent(decimal.NewFromInt(t.refunded), decimal.NewFromInt(t.finished())), 1),
				"refunded", locales.Number(lang, t.refunded)))
		}
		r.writeTopups(&b, env, p)
		b.WriteString(p.refs.line(env))
		b.WriteString(p.aff.statsLine(env, rate))
		if !perLine {
			continue
		}
		for _, l := range flows.Lines {
			lt := p.lines[l.Name]
			if lt == nil {
				continue
			}
			b.WriteString("\n" + env.N("rep.stats.line", lt.orders, "line", env.T(l.Label), "revenue", money(lt.revenue(rate)),
				"cost", money(lt.cost), "margin", money(lt.margin()),
				"refunded", locales.Number(lang, lt.refunded), "finished", locales.Number(lang, lt.finished())))
		}
		for name, lt := range p.lines { // a line the menu no longer has
			if !slices.ContainsFunc(flows.Lines, func(l flows.Line) bool { return l.Name == name }) {
				b.WriteString("\n" + env.N("rep.stats.line", lt.orders, "line", locales.Escape(name), "revenue", money(lt.revenue(rate)),
					"cost", money(lt.cost), "margin", money(lt.margin()),
					"refunded", locales.Number(lang, lt.refunded), "finished", locales.Number(lang, lt.finished())))
			}
		}
	}
	b.WriteString("\n\n" + env.T("rep.stats.legend"))
	if anyTopups(periods) {
		b.WriteString("\n" + env.T("wtopup.stats_note"))
	}
	return b.String()
}
