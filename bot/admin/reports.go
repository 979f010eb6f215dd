package admin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// Admin reports: /balance, /transactions, /stats and /credit. Each is for
// the ids in ADMIN_IDS only; anyone else gets exactly the reply to an
// unknown command, so nothing reveals that they exist.

// Flows of the interactive admin reports.
const (
	flowTransactions = "rep_tx"
	flowCredit       = "rep_credit"
)

// Report limits.
const (
	txPerPage      = 10
	txNoteRunes    = 80
	txMaxBackPages = 100 // cursors of earlier pages kept for Back
	upstreamWait   = 10 * time.Second
	statsBatch     = 200
	// statsSkew is how far past the 30-day window the /stats scan still
	// looks: order ids follow creation time, but replicas' clocks may
	// differ a little, so the scan stops only at an order clearly older.
	statsSkew = time.Hour
)

// MaxAdminCreditUSD is the largest single /credit; a larger amount is
// refused as a likely typo.
var MaxAdminCreditUSD = decimal.NewFromInt(10_000)

// reports are the admin reports; /credit keeps an audit of its credits.
type reports struct {
	*Admin
	audit *state.CreditAudit
}

// registerReports adds /balance, /transactions, /stats and /credit.
func (ad *Admin) registerReports(e *flows.Engine) {
	r := &reports{Admin: ad, audit: state.NewCreditAudit(ad.rdb, ad.prefix)}
	e.HandleCommand("balance", flows.AdminOnly(r.balance))
	e.HandleCommand("stats", flows.AdminOnly(r.stats))
	e.HandleCommand("transactions", flows.AdminOnly(func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		s.Enter(flowTransactions, "list", ev.Now.Add(e.FlowTTL))
		sc, err := txFlow{r}.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	}))
	e.HandleCommand("credit", flows.AdminOnly(r.creditCommand(e)))
	e.HandleCommand("export", flows.AdminOnly(r.export))
	e.RegisterAdmin(flowTransactions, txFlow{r})
	e.RegisterAdmin(flowCredit, creditFlow{r})
}

// notAdminAnymore ends an admin flow for someone no longer in ADMIN_IDS.
func notAdminAnymore(env *flows.Env, s *flows.Session) *flows.Reply {
	s.Clear()
	r := flows.UnknownCommand(env)
	r.Save = true
	return r
}

// upstreamProblem says in the admin's language why an upstream call
// failed; the details go to the log.
func (r *reports) upstreamProblem(env *flows.Env, what string, err error) string {
	var apiErr *reseller.Error
	switch {
	case reseller.IsUnauthorized(err):
		return env.T("rep.up.unauthorized")
	case reseller.IsForbidden(err):
		return env.T("rep.up.forbidden")
	case reseller.IsRateLimited(err):
		return env.T("rep.up.rate_limited")
	case errors.As(err, &apiErr) && apiErr.Status >= 500:
		r.log.Warn("admin report: upstream error", "read", what, "err", err)
		return env.T("rep.up.server", "status", strconv.Itoa(apiErr.Status))
	case errors.As(err, &apiErr):
		r.log.Warn("admin report: upstream refused", "read", what, "err", err)
		return env.T("rep.up.refused", "status", strconv.Itoa(apiErr.Status))
	}
	r.log.Warn("admin report: upstream unreachable", "read", what, "err", err)
	return env.T("rep.up.unavailable")
}

// starsUSD is the USD value of n Stars at STARS_USD_RATE.
func (ad *Admin) starsUSD(n int64) decimal.Decimal {
	return decimal.NewFromInt(n).Mul(ad.opts.StarsUSDRate)
}

// paidUSD is what an order brought in, in USD: its Stars at
// STARS_USD_RATE, or the wallet amount.
func (ad *Admin) paidUSD(o *state.Order) decimal.Decimal {
	return o.PaidUSD(ad.opts.StarsUSDRate)
}

// ---- /balance

// balance reports the upstream account, the bot's Star balance and what
// buyers paid for orders not yet delivered. A part that cannot be read
// says why; the other parts still show.
func (r *reports) balance(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	pending, err := r.pendingSection(ctx, env)
	if err != nil {
		return nil, err
	}
	parts := []string{env.T("rep.bal.title"), r.upstreamSection(ctx, env), r.starsSection(ctx, env), pending}
	return &flows.Reply{Notices: []flows.Notice{{Text: strings.Join(parts, "\n\n")}}, NoScreen: true}, nil
}

func (r *reports) upstreamSection(ctx context.Context, env *flows.Env) string {
	if r.up == nil {
		return env.T("rep.bal.upstream_failed", "reason", env.T("rep.up.not_configured"))
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamWait)
	defer cancel()
	me, err := r.up.Me(ctx)
	if err != nil {
		return env.T("rep.bal.upstream_failed", "reason", r.upstreamProblem(env, "account", err))
	}
	status := env.T("rep.bal.active")
	if me.Status != reseller.AccountActive {
		status = env.T("rep.bal.blocked")
	}
	return env.T("rep.bal.upstream", "nickname", locales.Escape(me.Nickname), "status", status,
		"balance", locales.Money(env.Lang, me.BalanceUSD.Decimal), "orders", locales.Number(env.Lang, me.TotalOrders),
		"spent", locales.Money(env.Lang, me.TotalSpentUSD.Decimal))
}

func (r *reports) starsSection(ctx context.Context, env *flows.Env) string {
	amount, nano, err := r.tg.StarBalance(ctx)
	if err != nil {
		r.log.Warn("admin report: read the Star balance", "err", err)
		return env.T("rep.bal.stars_failed")
	}
	stars := locales.Stars(env.Lang, amount)
	exact := decimal.NewFromInt(amount).Add(decimal.New(nano, -9))
	if nano != 0 {
		stars = locales.Decimal(env.Lang, exact, 2) + "\u00a0⭐"
	}
	return env.T("rep.bal.stars", "stars", stars, "usd", locales.Money(env.Lang, exact.Mul(r.opts.StarsUSDRate)),
		"rate", r.opts.StarsUSDRate)
}

// pendingSection sums what buyers paid for the orders not yet finished
// (paid, placing, placed, refunding, needs review): Stars for Stars
// payments, USD for wallet payments.
func (r *reports) pendingSection(ctx context.Context, env *flows.Env) (string, error) {
	ids, err := r.orders.Unfinished(ctx)
	if err != nil {
		return "", err
	}
	var stars, n, review, refunding int64
	wallet := decimal.Zero
	for _, id := range ids {
		o, err := r.orders.Get(ctx, id)
		if errors.Is(err, state.ErrOrderNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if state.Terminal(o.Status) {
			continue // finished since the index was read
		}
		n++
		switch o.PayMethod {
		case state.PayStars:
			stars += o.Stars
		case state.PayWallet:
			wallet = wallet.Add(o.ShopUSD)
		}
		switch o.Status {
		case state.OrderNeedsReview:
			review++
		case state.OrderRefunding:
			refunding++
		}
	}
	if n == 0 {
		return env.T("rep.bal.pending_none"), nil
	}
	text := env.N("rep.bal.pending", n, "stars", locales.Stars(env.Lang, stars),
		"stars_usd", locales.Money(env.Lang, r.starsUSD(stars)), "wallet", locales.Money(env.Lang, wallet),
		"total", locales.Money(env.Lang, r.starsUSD(stars).Add(wallet)))
	if review > 0 {
		text += "\n" + env.N("rep.bal.pending_review", review)
	}
	if refunding > 0 {
		text += "\n" + env.N("rep.bal.pending_refunding", refunding)
	}
	return text, nil
}

// ---- /transactions

// Transaction filters cycle through these values; "" is "all".
var (
	txDirections = []string{"", string(reseller.TxCredit), string(reseller.TxDebit)}
	txTypes      = []string{"", string(reseller.TxDeposit), string(reseller.TxOrder), string(reseller.TxAdjustment)}
	txStatuses   = []string{"", string(reseller.TxPending), string(reseller.TxCompleted), string(reseller.TxCancelled)}
)

// Button actions of /transactions.
const (
	actTxDir    = "fd"    // cycle the direction filter
	actTxType   = "ft"    // cycle the type filter
	actTxStatus = "fs"    // cycle the status filter
	actTxOlder  = "older" // arg: the cursor of the next (older) page
	actTxNewer  = "newer" // back to the previous page
	actTxReload = "rl"    // read the page again
)

// txFlow pages through the upstream transactions. Session data: the
// filters ("dir", "type", "st"), the current page's cursor ("cur", empty
// on the first page) and the cursors of the earlier pages ("back",
// space-separated, "0" for the first page), so Back needs no extra call.
type txFlow struct{ r *reports }

func (f txFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = "list"
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

func cycleNext(values []string, cur string) string {
	i := slices.Index(values, cur)
	return values[(i+1)%len(values)]
}

func (f txFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if !env.User.Admin {
		return notAdminAnymore(env, s), nil
	}
	if ev.Kind == flows.EvButton {
		firstPage := func() { s.Set("cur", ""); s.Set("back", "") }
		switch ev.Button.Action {
		case actTxDir:
			s.Set("dir", cycleNext(txDirections, s.Get("dir")))
			firstPage()
		case actTxType:
			s.Set("type", cycleNext(txTypes, s.Get("type")))
			firstPage()
		case actTxStatus:
			s.Set("st", cycleNext(txStatuses, s.Get("st")))
			firstPage()
		case actTxOlder:
			c, err := strconv.ParseInt(ev.Button.Arg, 10, 64)
			if err != nil || c < 1 {
				break
			}
			back := strings.Fields(s.Get("back"))
			cur := s.Get("cur")
			if cur == "" {
				cur = "0"
			}
			back = append(back, cur)
			if len(back) > txMaxBackPages {
				back = back[len(back)-txMaxBackPages:]
			}
			s.Set("back", strings.Join(back, " "))
			s.Set("cur", strconv.FormatInt(c, 10))
		case actTxNewer:
			back := strings.Fields(s.Get("back"))
			if len(back) == 0 {
				break
			}
			cur := back[len(back)-1]
			if cur == "0" {
				cur = ""
			}
			s.Set("cur", cur)
			s.Set("back", strings.Join(back[:len(back)-1], " "))
		}
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

func (f txFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	if !env.User.Admin {
		return &flows.Screen{Text: env.T("err.unknown_command")}, nil
	}
	r := f.r
	dir, typ, st := s.Get("dir"), s.Get("type"), s.Get("st")
	word := func(kind, v string) string {
		if v == "" {
			return env.T("rep.tx.all")
		}
		key := "rep.tx." + kind + "." + strings.ToLower(v)
		if w := env.T(key); w != key {
			return w
		}
		return locales.Escape(v) // a value the spec does not list
	}
	page := len(strings.Fields(s.Get("back"))) + 1
	var b strings.Builder
	b.WriteString(env.T("rep.tx.title", "page", page))
	b.WriteString("\n")
	b.WriteString(env.T("rep.tx.filters", "dir", word("dir", dir), "type", word("type", typ), "status", word("status", st)))
	b.WriteString("\n")
	rows := [][]flows.Button{
		{{Text: env.T("rep.btn.dir", "value", word("dir", dir)), Action: actTxDir}, {Text: env.T("rep.btn.type", "value", word("type", typ)), Action: actTxType}},
		{{Text: env.T("rep.btn.status", "value", word("status", st)), Action: actTxStatus}},
	}
	var nav []flows.Button
	if page > 1 {
		nav = append(nav, flows.Button{Text: env.T("rep.btn.newer"), Action: actTxNewer})
	}
	if r.up == nil {
		b.WriteString("\n" + env.T("rep.tx.failed", "reason", env.T("rep.up.not_configured")))
		return &flows.Screen{Text: b.String(), Rows: rows}, nil
	}
	cursor, _ := strconv.ParseInt(s.Get("cur"), 10, 64)
	cctx, cancel := context.WithTimeout(ctx, upstreamWait)
	defer cancel()
	list, err := r.up.Transactions(cctx, &reseller.TransactionsOptions{
		Limit: txPerPage, Cursor: cursor, Direction: reseller.TxDirection(dir), Type: reseller.TxType(typ), Status: reseller.TxStatus(st),
	})
	if err != nil {
		b.WriteString("\n" + env.T("rep.tx.failed", "reason", r.upstreamProblem(env, "transactions", err)))
		nav = append(nav, flows.Button{Text: env.T("btn.retry"), Action: actTxReload})
		return &flows.Screen{Text: b.String(), Rows: append(rows, nav)}, nil
	}
	if len(list.Data) == 0 {
		b.WriteString("\n" + env.T("rep.tx.empty"))
	}
	for _, t := range list.Data {
		amount := locales.SignedMoney(env.Lang, t.AmountUSD.Decimal)
		if t.Direction == reseller.TxDebit {
			amount = locales.SignedMoney(env.Lang, t.AmountUSD.Decimal.Neg())
		}
		key := "rep.tx.row"
		if t.Note != "" {
			key = "rep.tx.row_note"
		}
		b.WriteString("\n" + env.T(key, "number", strconv.FormatInt(t.Number, 10),
			"date", locales.DateTime(env.Lang, t.CreatedAt.UTC()),
			"dir", word("dir", string(t.Direction)), "type", word("type", string(t.Type)), "status", word("status", string(t.Status)),
			"amount", amount, "balance", locales.Money(env.Lang, t.BalanceAfter.Decimal),
			"note", locales.Escape(locales.Clip(t.Note, txNoteRunes))))
	}
	if list.HasMore && list.NextCursor != nil {
		nav = append(nav, flows.Button{Text: env.T("rep.btn.older"), Action: actTxOlder, Arg: strconv.FormatInt(*list.NextCursor, 10)})
	}
	if len(nav) > 0 {
		rows = append(rows, nav)
	}
	return &flows.Screen{Text: b.String(), Rows: rows}, nil
}

// ---- /stats

// tally is one period's (or one line's) figures. What counts:
//   - orders: every paid order created in the period, whatever its status;
//   - revenue: what buyers paid for orders that were not refunded (status
//     refunded, or refunding: the refund is decided, only its payout may be
//     pending). Stars payments count at STARS_USD_RATE, wallet payments at
//     their USD price;
//   - cost: the upstream's charged_usd of delivered orders (an order still
//     in progress has no final cost yet; a refunded one cost nothing);
//   - margin: the revenue of delivered orders minus their cost, so orders
//     in progress do not inflate it;
//   - refund rate: refunded (or refunding) orders over finished ones
//     (delivered + refunded).
type tally struct {
	orders, delivered, refunded int64
	stars                       int64           // Stars paid for orders not refunded
	wallet                      decimal.Decimal // wallet USD paid for orders not refunded
	deliveredRevenue            decimal.Decimal
	cost                        decimal.Decimal
	// Promo codes: orders not refunded that used one, and what they took
	// off. Revenue and margin already count the discounted prices.
	discounts   int64
	discountUSD decimal.Decimal
}

// figures are one order's part in the /stats figures (see tally): the
// /stats totals and the CSV export's rows both come from here.
type figures struct {
	refunded  bool            // refunded or refunding: counted, brings nothing
	delivered bool            // its cost and margin are final
	stars     int64           // Stars that count as revenue
	wallet    decimal.Decimal // wallet USD that counts as revenue
	revenue   decimal.Decimal // stars at STARS_USD_RATE plus wallet
	cost      decimal.Decimal // delivered: what the upstream charged
	margin    decimal.Decimal // delivered: revenue minus cost
	discount  decimal.Decimal // the promo code's discount (not refunded orders)
}

// figuresOf returns o's part in the figures.
func (ad *Admin) figuresOf(o *state.Order) figures {
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
	f.revenue = ad.paidUSD(o)
	f.discount = o.DiscountUSD
	if o.Status == state.OrderDelivered {
		f.delivered = true
		f.cost = o.ChargedUSD
		f.margin, _ = o.Margin(ad.opts.StarsUSDRate) // revenue minus cost, as referral rewards count it
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
		t.deliveredRevenue = t.deliveredRevenue.Add(f.revenue)
		t.cost = t.cost.Add(f.cost)
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
}

// stats reports orders, revenue, cost, margin and refund rate for today,
// the last 7 and the last 30 UTC days, overall and per product line.
func (r *reports) stats(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
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
	text := r.statsText(env, now, periods, true)
	if locales.UTF16Len(text) > maxMessageChars {
		text = r.statsText(env, now, periods, false)
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
}

// scanOrders calls fn with every order matching filter, newest first, down
// to those created at from: order ids follow creation time, so the scan
// stops at an order clearly older (statsSkew: replicas' clocks may differ
// a little). fn also sees the few orders just older than from; it checks
// CreatedAt itself.
func (ad *Admin) scanOrders(ctx context.Context, from time.Time, filter state.OrderFilter, fn func(o *state.Order)) error {
	for offset := 0; ; offset += statsBatch {
		batch, err := ad.orders.List(ctx, offset, statsBatch, filter)
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

func (r *reports) statsText(env *flows.Env, now time.Time, periods []*period, perLine bool) string {
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
			b.WriteString("\n" + env.N("rep.stats.discounts", t.discounts, "usd", money(t.discountUSD), "margin", money(t.margin())))
		}
		if t.finished() == 0 {
			b.WriteString("\n" + env.T("rep.stats.refunds_none"))
		} else {
			b.WriteString("\n" + env.N("rep.stats.refunds", t.finished(), "pct", locales.Decimal(lang, percent(decimal.NewFromInt(t.refunded), decimal.NewFromInt(t.finished())), 1),
				"refunded", locales.Number(lang, t.refunded)))
		}
		r.writeTopups(&b, env, p)
		b.WriteString(p.refs.line(env))
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

// ---- /credit

// Button action of the credit confirmation (Cancel is the engine's "x").
const actCreditConfirm = "ok"

var creditAmountRE = regexp.MustCompile(`^[0-9]+([.,][0-9]{1,2})?$`)

// parseCredit reads "/credit <user_id> <usd>": a positive integer id and a
// positive amount with at most two decimals, up to MaxAdminCreditUSD (a
// decimal comma and a leading "$" are accepted). It returns the locale key
// of the problem, or "".
func parseCredit(arg string) (user int64, amount decimal.Decimal, problem, value string) {
	f := strings.Fields(arg)
	if len(f) != 2 {
		return 0, decimal.Zero, "rep.credit.usage", ""
	}
	user, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || user <= 0 {
		return 0, decimal.Zero, "rep.credit.bad_user", f[0]
	}
	a := strings.TrimPrefix(f[1], "$")
	if !creditAmountRE.MatchString(a) {
		return 0, decimal.Zero, "rep.credit.bad_amount", f[1]
	}
	amount, err = decimal.NewFromString(strings.Replace(a, ",", ".", 1))
	if err != nil || !amount.IsPositive() || amount.GreaterThan(MaxAdminCreditUSD) {
		return 0, decimal.Zero, "rep.credit.bad_amount", f[1]
	}
	return user, amount, "", ""
}

// creditRef draws the wallet ledger ref of one confirmation screen: the
// credit is idempotent by it, so Confirm pressed twice, or replayed after
// a crash, credits once.
func creditRef(admin int64) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "credit:" + strconv.FormatInt(admin, 10) + ":" + hex.EncodeToString(b[:])
}

func (r *reports) creditCommand(e *flows.Engine) flows.CommandFunc {
	return func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		user, amount, problem, value := parseCredit(ev.Arg)
		if problem != "" {
			maxUSD := locales.Money(env.Lang, MaxAdminCreditUSD)
			text := env.T(problem, "value", locales.Escape(locales.Clip(value, 40)), "max", maxUSD)
			if problem != "rep.credit.usage" {
				text += "\n\n" + env.T("rep.credit.usage", "max", maxUSD)
			}
			return &flows.Reply{Notices: []flows.Notice{{Text: text}}, NoScreen: true}, nil
		}
		s.Enter(flowCredit, "confirm", ev.Now.Add(e.FlowTTL))
		s.Set("user", strconv.FormatInt(user, 10))
		s.Set("amount", amount.StringFixed(2))
		s.Set("ref", creditRef(env.User.ID))
		sc, err := creditFlow{r}.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	}
}

// walletEnabled reports whether buyers can pay with the wallet
// (PAYMENT_METHODS includes wallet).
func (r *reports) walletEnabled() bool { return r.opts.Wallet }

// creditFlow is the confirmation of /credit and its result. Session data:
// "user", "amount", "ref" (drawn when the confirmation is shown); after
// Confirm, step "done" with "balance", "told" and "dup".
type creditFlow struct{ r *reports }

func (f creditFlow) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// Cancel drops the credit: the confirmation says nothing was credited and
// the admin stays on it (no buyer's menu).
func (f creditFlow) Cancel(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	if s.Step == "done" {
		s.Clear()
		return &flows.Reply{Answer: env.T("cancel.nothing_short"), Notices: []flows.Notice{{Text: env.T("rep.credit.nothing_to_cancel")}}, NoScreen: true, Save: true}, nil
	}
	user := s.Get("user")
	amount, _ := decimal.NewFromString(s.Get("amount"))
	s.Clear()
	text := env.T("rep.credit.cancelled", "user", locales.Escape(user), "amount", locales.Money(env.Lang, amount))
	return &flows.Reply{Answer: env.T("rep.credit.cancelled_short"), Screen: &flows.Screen{Text: text}, Save: true}, nil
}

func (f creditFlow) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if !env.User.Admin {
		return notAdminAnymore(env, s), nil
	}
	if s.Step == "confirm" && ev.Kind == flows.EvButton && ev.Button.Action == actCreditConfirm {
		return f.confirm(ctx, env, s)
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// confirm credits the wallet under the screen's ref, records the audit
// entry, logs it and tells the buyer. Every step is safe to repeat: a
// replay of the same confirmation (the session save lost in a crash)
// credits nothing more and tells the buyer nothing more.
func (f creditFlow) confirm(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	r := f.r
	user, _ := strconv.ParseInt(s.Get("user"), 10, 64)
	amount, err := decimal.NewFromString(s.Get("amount"))
	ref := s.Get("ref")
	if err != nil || user <= 0 || ref == "" {
		s.Clear()
		return &flows.Reply{Answer: env.T("err.outdated"), Screen: r.engine.MenuScreen(env), Save: true}, nil
	}
	adminID := env.User.ID
	bal, dup, err := r.wallets.Credit(ctx, user, amount, ref, "admin credit", "admin:"+strconv.FormatInt(adminID, 10))
	if err != nil {
		return nil, err
	}
	fresh, err := r.audit.Record(ctx, state.CreditRecord{Admin: adminID, User: user, Amount: amount, Ref: ref, At: env.Now})
	if err != nil {
		return nil, err // the session keeps the ref: Confirm again finishes it without a second credit
	}
	told := "again"
	if fresh {
		r.log.Info("admin credited a wallet", "admin", adminID, "user", user, "ref", ref, "replay", dup)
		told = r.tellBuyer(ctx, user, amount, bal)
	}
	s.Goto("done")
	s.Set("balance", bal.StringFixed(2))
	s.Set("told", told)
	s.Set("dup", strconv.FormatBool(dup))
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Answer: env.T("rep.credit.done_answer"), Screen: sc, Save: true}, err
}

// tellBuyer tells the buyer about the credit in their language, if they
// started the bot. It reports what happened: "yes", "not_started",
// "blocked" or "failed"; none of them fails the credit.
func (r *reports) tellBuyer(ctx context.Context, user int64, amount, bal decimal.Decimal) string {
	started, err := r.users.HasStarted(ctx, user)
	if err != nil || !started {
		return "not_started"
	}
	if blocked, _ := r.users.Blocked(ctx, user); blocked {
		return "blocked"
	}
	lang := r.buyerLang(ctx, user)
	text := locales.T(lang, "rep.credit.buyer", "amount", locales.Money(lang, amount), "balance", locales.Money(lang, bal))
	if r.walletEnabled() {
		text += "\n" + locales.T(lang, "rep.credit.buyer_hint")
	}
	_, err = r.tg.Send(ctx, user, text, nil)
	switch {
	case errors.Is(err, flows.ErrBlocked):
		return "blocked"
	case err != nil:
		r.log.Warn("tell buyer about a wallet credit", "user", user, "err", err)
		return "failed"
	}
	return "yes"
}

// buyerLang is the buyer's language: the one chosen with /language, else
// the one of their latest order, else the shop's default.
func (r *reports) buyerLang(ctx context.Context, user int64) locales.Lang {
	e := r.engine
	if _, doc, err := r.sessions.Conversation(ctx, user); err == nil && doc != nil {
		s, _ := flows.DecodeSession(doc)
		if l, ok := locales.Parse(s.Lang); ok && slices.Contains(e.Langs, l) {
			return l
		}
	}
	if list, err := r.orders.ListByUser(ctx, user, 0, 1); err == nil && len(list) > 0 {
		if l, ok := locales.Parse(list[0].Lang); ok && slices.Contains(e.Langs, l) {
			return l
		}
	}
	return e.DefaultLang
}

func (f creditFlow) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	r := f.r
	user, _ := strconv.ParseInt(s.Get("user"), 10, 64)
	amount, _ := decimal.NewFromString(s.Get("amount"))
	id := strconv.FormatInt(user, 10)
	if s.Step == "done" {
		bal, _ := decimal.NewFromString(s.Get("balance"))
		key := "rep.credit.done"
		if s.Get("dup") == "true" {
			key = "rep.credit.done_before"
		}
		text := env.T(key, "amount", locales.Money(env.Lang, amount), "user", id, "balance", locales.Money(env.Lang, bal))
		text += "\n" + env.T("rep.credit.told_"+s.Get("told"))
		return &flows.Screen{Text: text}, nil
	}
	bal, err := r.wallets.Balance(ctx, user)
	if err != nil {
		return nil, err
	}
	started, err := r.users.HasStarted(ctx, user)
	if err != nil {
		return nil, err
	}
	blocked, err := r.users.Blocked(ctx, user)
	if err != nil {
		return nil, err
	}
	text := env.T("rep.credit.confirm", "user", id, "amount", locales.Money(env.Lang, amount),
		"balance", locales.Money(env.Lang, bal), "after", locales.Money(env.Lang, bal.Add(amount)))
	switch {
	case !started:
		text += "\n\n" + env.T("rep.credit.not_started")
	case blocked:
		text += "\n\n" + env.T("rep.credit.blocked")
	}
	if !r.walletEnabled() {
		text += "\n\n" + env.T("rep.credit.wallet_off")
	}
	text += "\n\n" + env.T("rep.credit.question")
	return &flows.Screen{Text: text, Rows: [][]flows.Button{{
		{Text: env.T("rep.btn.confirm"), Action: actCreditConfirm}, {Text: env.T("btn.cancel"), Action: "x"},
	}}}, nil
}
