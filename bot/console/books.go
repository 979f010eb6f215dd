package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// balance is the upstream balance with its low-balance state, and
// /balance's report.
func (c *Console) balance(q *request) (any, *apiError) {
	ctx := q.r.Context()
	out := map[string]any{}
	if bal, err := c.d.Books.UpstreamBalance(ctx); err != nil {
		out["upstream_error"] = locales.Clip(err.Error(), 200)
	} else {
		out["upstream_usd"] = bal.StringFixed(2)
		out["low"] = c.opts.LowBalance.IsPositive() && bal.LessThan(c.opts.LowBalance)
		out["low_below"] = c.opts.LowBalance.StringFixed(2)
	}
	text, err := c.d.Books.BalanceText(ctx, q.env.Lang)
	if err != nil {
		return nil, internal()
	}
	out["report"] = text
	return out, nil
}

// tallyJSON is a Tally as the page shows it (USD with 2 places).
type tallyJSON struct {
	Orders    int64  `json:"orders"`
	Delivered int64  `json:"delivered"`
	Refunded  int64  `json:"refunded"`
	Revenue   string `json:"revenue"`
	Cost      string `json:"cost"`
	Margin    string `json:"margin"`
	Discounts string `json:"discounts"`
	Referrals string `json:"referrals"`
	Topups    string `json:"topups"`
}

func tallyOf(t state.Tally) tallyJSON {
	return tallyJSON{Orders: t.Orders, Delivered: t.Delivered, Refunded: t.Refunded, Revenue: t.Revenue.StringFixed(2),
		Cost: t.Cost.StringFixed(2), Margin: t.Margin.StringFixed(2), Discounts: t.Discounts.StringFixed(2),
		Referrals: t.Referrals.StringFixed(2), Topups: t.Topups.StringFixed(2)}
}

// figures are the books of the last days (days=30 by default, at most
// 90, today included, UTC) as /stats counts them: totals, per line, per
// day, and the charts.
func (c *Console) figures(q *request) (any, *apiError) {
	days, _ := strconv.Atoi(q.r.URL.Query().Get("days"))
	if days <= 0 {
		days = 30
	}
	if days > 90 {
		return nil, bad("console.err.days")
	}
	now := q.env.Now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	f, err := c.d.Books.Figures(q.r.Context(), today.AddDate(0, 0, -(days-1)), now)
	if err != nil {
		c.log.Warn("console: figures", "err", err)
		return nil, internal()
	}
	type dayJSON struct {
		Date string `json:"date"`
		tallyJSON
	}
	out := map[string]any{"from": f.From.Format(time.DateOnly), "to": now, "total": tallyOf(f.Total)}
	var dl []dayJSON
	var labels []string
	var rev, cost, margin, disc, refs, topups []decimal.Decimal
	for _, d := range f.Days {
		dl = append(dl, dayJSON{Date: d.Date.Format(time.DateOnly), tallyJSON: tallyOf(d.Tally)})
		labels = append(labels, d.Date.Format("01-02"))
		rev, cost, margin = append(rev, d.Revenue), append(cost, d.Cost), append(margin, d.Margin)
		disc, refs, topups = append(disc, d.Discounts), append(refs, d.Referrals), append(topups, d.Topups)
	}
	out["days"] = dl
	lineNames := make([]string, 0, len(f.Lines))
	for name := range f.Lines {
		lineNames = append(lineNames, name)
	}
	order := func(name string) int {
		i := slices.IndexFunc(flows.Lines, func(l flows.Line) bool { return l.Name == name })
		if i < 0 {
			return len(flows.Lines)
		}
		return i
	}
	slices.SortFunc(lineNames, func(a, b string) int { return order(a) - order(b) })
	lines := map[string]tallyJSON{}
	var lrev, lcost, lmargin []decimal.Decimal
	var llabels []string
	for _, name := range lineNames {
		t := f.Lines[name]
		lines[name] = tallyOf(t)
		llabels = append(llabels, lineLabel(q.env, name))
		lrev, lcost, lmargin = append(lrev, t.Revenue), append(lcost, t.Cost), append(lmargin, t.Margin)
	}
	out["lines"] = lines
	t := func(key string) string { return locales.Plain(q.env.T(key)) }
	out["charts"] = []map[string]string{
		{"id": "daily", "title": t("console.chart.daily"), "svg": barChart(t("console.chart.daily"),
			labels, []series{{t("console.chart.revenue"), rev}, {t("console.chart.cost"), cost}, {t("console.chart.margin"), margin}})},
		{"id": "money", "title": t("console.chart.money"), "svg": barChart(t("console.chart.money"),
			labels, []series{{t("console.chart.discounts"), disc}, {t("console.chart.referrals"), refs}, {t("console.chart.topups"), topups}})},
		{"id": "lines", "title": t("console.chart.lines"), "svg": barChart(t("console.chart.lines"),
			llabels, []series{{t("console.chart.revenue"), lrev}, {t("console.chart.cost"), lcost}, {t("console.chart.margin"), lmargin}})},
	}
	return out, nil
}

// lineLabel is a product line's name in env's language.
func lineLabel(env *flows.Env, name string) string {
	for _, l := range flows.Lines {
		if l.Name == name {
			return locales.Plain(env.T(l.Label))
		}
	}
	return name
}

// reconcile is /reconcile's report over window (24h by default).
func (c *Console) reconcile(q *request) (any, *apiError) {
	text, refusal, err := c.d.Books.ReconcileText(q.r.Context(), q.env.Lang, q.r.URL.Query().Get("window"))
	switch {
	case err != nil:
		c.log.Warn("console: reconcile", "err", err)
		return nil, internal()
	case refusal != "":
		return nil, refused(refusal)
	}
	return map[string]any{"report": text}, nil
}

type exportBody struct {
	// Arg is /export's argument: "orders 7d", "ledger 2026-11-01
	// 2026-11-30", "orders giftcards delivered".
	Arg string `json:"arg"`
}

// exportLink checks an export's arguments and answers a signed link to
// download it, valid Options.LinkTTL for this user only.
func (c *Console) exportLink(q *request) (any, *apiError) {
	var b exportBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	arg := strings.Join(strings.Fields(b.Arg), " ")
	// The arguments are checked now, so a bad one is said here, not in a
	// downloaded file.
	_, _, refusal, err := c.d.Books.ExportCSV(q.r.Context(), q.env.Lang, arg)
	switch {
	case err != nil:
		return nil, internal()
	case refusal != "":
		return nil, refused(refusal)
	}
	return map[string]any{"url": "api/download/" + url.PathEscape(c.link(q.user.ID, arg)), "expires": q.env.Now.Add(c.opts.LinkTTL)}, nil
}

// download serves a signed export link: the CSV of /export, made now.
// A link works once (a second use, from any replica, is refused) and
// only until it expires; a download that fails before any byte is sent
// leaves the link usable.
func (c *Console) download(q *request) (any, *apiError) {
	l, ok := c.readLink(q.r.PathValue("token"))
	if !ok {
		return nil, errAuth
	}
	first, err := c.useLink(q, l)
	switch {
	case err != nil:
		c.log.Warn("console: use a download link", "err", err)
		return nil, internal()
	case !first:
		c.log.Info("console: a download link used again", "user", q.user.ID)
		return nil, errLinkUsed
	}
	release := func() {
		if c.d.Links != nil {
			if err := c.d.Links.Release(q.r.Context(), l.sig); err != nil {
				c.log.Warn("console: release a download link", "err", err)
			}
		}
	}
	name, data, refusal, err := c.d.Books.ExportCSV(q.r.Context(), q.env.Lang, l.arg)
	switch {
	case err != nil:
		release()
		return nil, internal()
	case refusal != "":
		release()
		return nil, refused(refusal)
	}
	h := q.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(data)
	c.log.Info("console: export downloaded", "user", q.user.ID, "file", name)
	return nil, nil
}
