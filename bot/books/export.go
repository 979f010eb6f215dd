package books

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// /export sends admins CSV documents (RFC 4180, UTF-8, a header row; money
// with four fixed decimals, the upstream's precision, so rows add up
// exactly; times in UTC, ISO 8601):
//
//	/export orders [window] [line] [status]
//	/export ledger [window]
//
// where window is today, 7d or 30d (the /stats periods, 30d by default),
// or a first UTC day YYYY-MM-DD and optionally a last one (included). An
// order's figures are the ones /stats counts (figuresOf), and the caption
// totals them with the same tally.

// exportMaxDays bounds an export's window.
const exportMaxDays = 366

// exportArgs is a parsed /export.
type exportArgs struct {
	kind     string    // "orders" or "ledger"
	from, to time.Time // [from, to)
	line     string
	status   string
}

// parseExport reads /export's argument at now. It returns the locale key
// of the problem and the offending word, or "".
func parseExport(arg string, now time.Time) (a exportArgs, problem, value string) {
	f := strings.Fields(strings.ToLower(arg))
	if len(f) == 0 || (f[0] != "orders" && f[0] != "ledger") {
		return a, "rep.export.usage", ""
	}
	a.kind = f[0]
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	a.from, a.to = today.AddDate(0, 0, -29), now
	var dates []time.Time
	period := false
	for _, w := range f[1:] {
		switch {
		case w == "today" || w == "7d" || w == "30d":
			if period || len(dates) > 0 {
				return a, "rep.export.bad_word", w
			}
			period = true
			a.from = map[string]time.Time{"today": today, "7d": today.AddDate(0, 0, -6), "30d": today.AddDate(0, 0, -29)}[w]
		case len(w) == 10 && w[4] == '-':
			d, err := time.Parse(time.DateOnly, w)
			if err != nil || period || len(dates) == 2 {
				return a, "rep.export.bad_word", w
			}
			dates = append(dates, d)
		case a.kind == "orders" && a.line == "" && slices.ContainsFunc(flows.Lines, func(l flows.Line) bool { return l.Name == w }):
			a.line = w
		case a.kind == "orders" && a.status == "" && slices.Contains(state.OrderStatuses, w):
			a.status = w
		default:
			return a, "rep.export.bad_word", w
		}
	}
	if len(dates) > 0 {
		a.from, a.to = dates[0], now
		if len(dates) == 2 {
			a.to = dates[1].AddDate(0, 0, 1)
		}
		if !a.to.After(a.from) {
			return a, "rep.export.bad_range", ""
		}
	}
	if a.to.Sub(a.from) > exportMaxDays*24*time.Hour {
		return a, "rep.export.too_long", ""
	}
	return a, "", ""
}

// csvTime is an export's time: UTC, ISO 8601, or "" for none.
func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// csvMoney is an export's USD amount: four fixed decimals.
func csvMoney(d decimal.Decimal) string { return d.StringFixed(4) }

func (r *Books) export(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
	a, problem, value := parseExport(ev.Arg, ev.Now)
	if problem != "" {
		text := env.T(problem, "value", locales.Escape(locales.Clip(value, 40)), "max", exportMaxDays)
		if problem != "rep.export.usage" {
			text += "\n\n" + env.T("rep.export.usage")
		}
		return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
	}
	var (
		data    []byte
		name    string
		caption string
		err     error
	)
	stamp := a.from.Format("20060102") + "-" + a.to.Add(-time.Second).UTC().Format("20060102")
	if a.kind == "orders" {
		data, caption, err = r.exportOrders(ctx, env, a)
		name = "orders-" + stamp + ".csv"
	} else {
		data, caption, err = r.exportLedger(ctx, env, a)
		name = "ledger-" + stamp + ".csv"
	}
	if err != nil {
		return nil, err
	}
	if err := r.tg.SendDocument(ctx, env.User.ID, name, data, caption); err != nil {
		r.log.Warn("admin export: send the document", "err", err)
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("rep.export.send_failed")}}, NoScreen: true}, nil
	}
	return &flows.Reply{NoScreen: true}, nil
}

// windowText is the export's window for its caption: first and last UTC
// day.
func windowText(env *flows.Env, a exportArgs) string {
	return env.T("rep.export.window", "from", locales.Date(env.Lang, a.from), "to", locales.Date(env.Lang, a.to.Add(-time.Second)))
}

// orderColumns are the columns of the orders export.
var orderColumns = []csvColumn{{"order_id", true}, {"created_at", false}, {"user_id", true}, {"line", false}, {"item", false},
	{"status", false}, {"pay_method", false}, {"charge_id", false}, {"stars", true}, {"price_usd", true}, {"revenue_usd", true},
	{"cost_usd", true}, {"margin_usd", true}, {"counted_as", false}, {"upstream_number", true}, {"upstream_status", false},
	{"delivered_at", false}}

// exportOrders writes the orders of a's window, oldest first, and its
// caption: the window's tally, as /stats counts it.
func (r *Books) exportOrders(ctx context.Context, env *flows.Env, a exportArgs) ([]byte, string, error) {
	var list []*state.Order
	err := r.scanOrders(ctx, a.from, state.OrderFilter{Line: a.line, Status: a.status}, func(o *state.Order) {
		if !o.CreatedAt.Before(a.from) && o.CreatedAt.Before(a.to) {
			list = append(list, o)
		}
	})
	if err != nil {
		return nil, "", err
	}
	slices.Reverse(list)
	var buf bytes.Buffer
	w := newCSVTable(&buf, orderColumns)
	var t tally
	for _, o := range list {
		f := r.figuresOf(o)
		t.add(f)
		counted := "in_progress"
		switch {
		case f.refunded:
			counted = "refunded"
		case f.delivered:
			counted = "delivered"
		}
		up := ""
		if o.UpstreamNumber > 0 {
			up = strconv.FormatInt(o.UpstreamNumber, 10)
		}
		cost, margin := csvMoney(f.cost), csvMoney(f.margin)
		if f.delivered && !f.costKnown {
			cost, margin = "", "" // an impossible upstream figure: unknown
		}
		stars := ""
		if o.PayMethod == state.PayStars {
			stars = strconv.FormatInt(o.Stars, 10)
		}
		w.row(
			strconv.FormatInt(o.ID, 10), csvTime(o.CreatedAt), strconv.FormatInt(o.UserID, 10), o.Line,
			upstreamorder.ItemName(env.Lang, o), o.Status, o.PayMethod, o.ChargeID,
			stars, csvMoney(o.ShopUSD), csvMoney(f.revenue), cost, margin, counted,
			up, o.UpstreamStatus, csvTime(o.DeliveredAt),
		)
	}
	if err := w.flush(); err != nil {
		return nil, "", err
	}
	rate := r.opts.StarsUSDRate
	money := func(d decimal.Decimal) string { return locales.Money(env.Lang, d) }
	caption := env.N("rep.export.orders", t.orders, "window", windowText(env, a),
		"delivered", locales.Number(env.Lang, t.delivered), "refunded", locales.Number(env.Lang, t.refunded),
		"revenue", money(t.revenue(rate)), "cost", money(t.cost), "margin", money(t.margin()))
	if a.line != "" || a.status != "" {
		caption += "\n" + env.T("rep.export.filters", "line", orAll(env, a.line), "status", orAll(env, a.status))
	}
	return buf.Bytes(), caption, nil
}

func orAll(env *flows.Env, v string) string {
	if v == "" {
		return env.T("rep.export.all")
	}
	return v
}

// ledgerColumns are the columns of the wallet ledger export.
var ledgerColumns = []csvColumn{{"at", false}, {"user_id", true}, {"ref", false}, {"amount_usd", true}, {"balance_usd", true},
	{"note", false}, {"actor", false}}

// ledgerRow is one wallet movement of the export.
type ledgerRow struct {
	user int64
	e    state.Entry
}

// exportLedger writes every wallet movement of a's window, oldest first,
// and its caption: credits, debits and the net.
func (r *Books) exportLedger(ctx context.Context, env *flows.Env, a exportArgs) ([]byte, string, error) {
	users, err := r.wallets.Holders(ctx)
	if err != nil {
		return nil, "", err
	}
	var rows []ledgerRow
	for _, u := range users {
	pages:
		for offset := 0; ; offset += statsBatch {
			entries, err := r.wallets.Ledger(ctx, u, offset, statsBatch)
			if err != nil {
				return nil, "", err
			}
			for _, e := range entries { // newest first
				if e.At.Before(a.from) {
					break pages
				}
				if e.At.Before(a.to) {
					rows = append(rows, ledgerRow{u, e})
				}
			}
			if len(entries) < statsBatch {
				break
			}
		}
	}
	slices.SortStableFunc(rows, func(x, y ledgerRow) int {
		if c := x.e.At.Compare(y.e.At); c != 0 {
			return c
		}
		return strings.Compare(x.e.Ref, y.e.Ref)
	})
	var buf bytes.Buffer
	w := newCSVTable(&buf, ledgerColumns)
	credits, debits := decimal.Zero, decimal.Zero
	for _, row := range rows {
		e := row.e
		if e.Amount.IsNegative() {
			debits = debits.Add(e.Amount.Neg())
		} else {
			credits = credits.Add(e.Amount)
		}
		w.row(csvTime(e.At), strconv.FormatInt(row.user, 10), e.Ref, csvMoney(e.Amount), csvMoney(e.Balance), e.Note, e.Actor)
	}
	if err := w.flush(); err != nil {
		return nil, "", err
	}
	caption := env.N("rep.export.ledger", int64(len(rows)), "window", windowText(env, a),
		"credits", locales.Money(env.Lang, credits), "debits", locales.Money(env.Lang, debits),
		"net", locales.SignedMoney(env.Lang, credits.Sub(debits)))
	return buf.Bytes(), caption, nil
}
