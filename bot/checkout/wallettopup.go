package checkout

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/state"
)

// Wallet top-ups: with the wallet on, a buyer adds USD to their own shop
// wallet by paying a Stars invoice. /wallet has a "➕ Top up" button; the
// amount is a button or typed; the top-up is a record in the buyer's
// wallet slot (state.WalletTopup) and its invoice's payload "w:<id>". The
// pre-checkout checks the record; the payment is credited once per charge
// (ledger ref "topup:<charge id>") or refunded (wallettopup_settle.go).

// TopupOptions configure wallet top-ups (on whenever the wallet is).
type TopupOptions struct {
	// MinUSD and MaxUSD bound one top-up (WALLET_TOPUP_MIN_USD,
	// WALLET_TOPUP_MAX_USD; default 1 and 500).
	MinUSD, MaxUSD decimal.Decimal
	// MaxBalanceUSD bounds the wallet balance a top-up may reach
	// (WALLET_MAX_BALANCE_USD); zero: no bound.
	MaxBalanceUSD decimal.Decimal
	// Amounts are the buttons offered (default $5, $10, $25, $50; those
	// outside MinUSD..MaxUSD are left out).
	Amounts []decimal.Decimal
	// StarsUSDRate is the USD value of one Star (STARS_USD_RATE), the rate
	// the product lines price items in Stars at (shop.Pricing.Stars): a
	// top-up of usd costs ceil(usd / rate) Stars. Default 0.013.
	StarsUSDRate decimal.Decimal
	// TTL is how long a top-up's invoice may be paid (default 15 minutes).
	TTL time.Duration
}

// withDefaults fills what is unset.
func (o TopupOptions) withDefaults() TopupOptions {
	if !o.MinUSD.IsPositive() {
		o.MinUSD = decimal.NewFromInt(1)
	}
	if !o.MaxUSD.IsPositive() {
		o.MaxUSD = decimal.NewFromInt(500)
	}
	if o.MaxUSD.LessThan(o.MinUSD) {
		o.MaxUSD = o.MinUSD
	}
	if o.MaxBalanceUSD.IsNegative() {
		o.MaxBalanceUSD = decimal.Zero
	}
	if len(o.Amounts) == 0 {
		for _, n := range []int64{5, 10, 25, 50} {
			o.Amounts = append(o.Amounts, decimal.NewFromInt(n))
		}
	}
	if !o.StarsUSDRate.IsPositive() {
		o.StarsUSDRate = decimal.RequireFromString("0.013")
	}
	if o.TTL <= 0 {
		o.TTL = 15 * time.Minute
	}
	return o
}

// Payload prefix of top-up invoices: "w:<top-up id>".
const topupPrefix = "w:"

// topupFlow is the wallet top-up's flow.
const topupFlow = "wtopup"

// The top-up's buttons.
const (
	actTopup       flows.Action = "wtu" // global: open the amounts (the /wallet button)
	actTopupAmount flows.Action = "wta" // arg: cents
)

// topupStars is the price in Stars of a top-up of usd: the product lines'
// conversion (shop.Pricing.Stars), rounded up to a whole Star.
func (p *Checkout) topupStars(usd decimal.Decimal) int64 {
	pr := shop.Pricing{StarsUSDRate: p.opts.Topup.StarsUSDRate}
	return max(pr.Stars(usd), 1)
}

// topupsOn reports whether buyers may top up their wallet.
func (p *Checkout) topupsOn() bool { return p.opts.Wallet }

// registerTopup adds the top-up flow and its open button.
func (p *Checkout) registerTopup(e *flows.Engine) {
	e.Register(topupFlow, topupFlowOf{p})
	e.HandleButton(actTopup, func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		if !p.topupsOn() {
			return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
		}
		s.Enter(topupFlow, "amount", ev.Now.Add(e.FlowTTL))
		sc, err := p.topupAmounts(ctx, env)
		if err != nil {
			return nil, err
		}
		sc.Fresh = true // under /wallet's message, not over an older menu
		return &flows.Reply{Screen: sc, Save: true}, nil
	})
}

// topupRows is /wallet's top-up button.
func (p *Checkout) topupRows(env *flows.Env) [][]flows.Button {
	if !p.topupsOn() {
		return nil
	}
	return [][]flows.Button{{{Text: env.T("wtopup.btn"), Action: actTopup, Global: true}}}
}

// room is how much the buyer's wallet may still take (max, true) or
// unbounded (false).
func (p *Checkout) room(bal decimal.Decimal) (decimal.Decimal, bool) {
	m := p.opts.Topup.MaxBalanceUSD
	if !m.IsPositive() {
		return decimal.Zero, false
	}
	return decimal.Max(m.Sub(bal), decimal.Zero), true
}

// topupAmounts is the amount step: the balance, the amount buttons and
// the limits.
func (p *Checkout) topupAmounts(ctx context.Context, env *flows.Env) (*flows.Screen, error) {
	o := p.opts.Topup
	bal, err := p.Wallets.Balance(ctx, env.User.ID)
	if err != nil {
		return nil, err
	}
	money := func(d decimal.Decimal) string { return locales.Money(env.Lang, d) }
	hi := o.MaxUSD
	room, bounded := p.room(bal)
	if bounded {
		hi = decimal.Min(hi, room)
	}
	cancel := []flows.Button{{Text: env.T("btn.cancel"), Action: flows.ActCancel}}
	if hi.LessThan(o.MinUSD) {
		text := env.T("wtopup.full", "balance", money(bal), "max", money(o.MaxBalanceUSD))
		return &flows.Screen{Text: text, Rows: [][]flows.Button{cancel}}, nil
	}
	text := env.T("wtopup.choose", "balance", money(bal), "min", money(o.MinUSD), "max", money(hi))
	var rows [][]flows.Button
	var row []flows.Button
	for _, a := range o.Amounts {
		if a.LessThan(o.MinUSD) || a.GreaterThan(hi) {
			continue
		}
		row = append(row, flows.Button{
			Text:   env.T("wtopup.btn_amount", "usd", money(a), "stars", locales.Stars(env.Lang, p.topupStars(a))),
			Action: actTopupAmount, Arg: a.Shift(2).StringFixed(0),
		})
		if len(row) == 2 {
			rows, row = append(rows, row), nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return &flows.Screen{Text: text, Rows: append(rows, cancel)}, nil
}

// topupAmountRE is a typed amount: dollars, optionally with cents (a
// decimal comma too), optionally with a "$" before or after.
var topupAmountRE = regexp.MustCompile(`^\$?\s*([0-9]{1,7})(?:[.,]([0-9]{1,2}))?\s*\$?$`)

// topupTooPreciseRE is a typed amount with more decimals than cents.
var topupTooPreciseRE = regexp.MustCompile(`^\$?\s*[0-9]{1,7}[.,][0-9]{3,}\s*\$?$`)

// parseTopupAmount reads a typed amount; false when it is not one.
func parseTopupAmount(s string) (decimal.Decimal, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.ToLower(s)), "usd"))
	m := topupAmountRE.FindStringSubmatch(s)
	if m == nil {
		return decimal.Zero, false
	}
	v := m[1]
	if m[2] != "" {
		v += "." + m[2]
	}
	d, err := decimal.NewFromString(v)
	return d, err == nil
}

// topupFlowOf is the top-up flow: one step, "amount" (buttons or a typed
// amount). Each amount chosen sends its invoice below and leaves the
// amounts as they are, as Pay does for items: the invoice is the answer.
type topupFlowOf struct{ p *Checkout }

func (f topupFlowOf) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = "amount"
	sc, err := f.p.topupAmounts(ctx, env)
	return &flows.Reply{Screen: sc, Save: true}, err
}

func (f topupFlowOf) Show(ctx context.Context, env *flows.Env, _ *flows.Session) (*flows.Screen, error) {
	return f.p.topupAmounts(ctx, env)
}

func (f topupFlowOf) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	p := f.p
	if !p.topupsOn() {
		s.Clear()
		return &flows.Reply{Answer: env.T("wtopup.off"), Notices: []flows.Notice{{Text: env.T("wtopup.off")}}, Save: true, NoScreen: true}, nil
	}
	switch {
	case ev.Kind == flows.EvButton && ev.Button.Action == actTopupAmount:
		c, err := strconv.ParseInt(ev.Button.Arg, 10, 64)
		if err != nil || c <= 0 {
			sc, err := f.Show(ctx, env, s)
			return &flows.Reply{Answer: env.T("err.outdated"), Screen: sc}, err
		}
		return p.topupChosen(ctx, env, s, decimal.New(c, -2))
	case ev.Kind == flows.EvText:
		usd, ok := parseTopupAmount(ev.Text)
		if !ok {
			key := "wtopup.bad_amount"
			if topupTooPreciseRE.MatchString(strings.TrimSpace(ev.Text)) {
				key = "wtopup.too_precise" // a number, but not in cents
			}
			return p.topupProblem(ctx, env, s, env.T(key, "value", locales.Escape(locales.Clip(strings.TrimSpace(ev.Text), 40))))
		}
		return p.topupChosen(ctx, env, s, usd)
	}
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// topupProblem tells the buyer what is wrong with an amount and shows the
// amounts again: nothing was charged and they may try again.
func (p *Checkout) topupProblem(ctx context.Context, env *flows.Env, s *flows.Session, text string) (*flows.Reply, error) {
	s.Step = "amount"
	sc, err := p.topupAmounts(ctx, env)
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Answer: locales.Clip(plainText(text), 190), Notices: []flows.Notice{{Text: text}}, Screen: sc, Save: true}, nil
}

// plainText drops the tags of a short HTML text (for a callback answer).
func plainText(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", "\"").Replace(b.String())
}

// topupChosen checks an amount against the limits and the balance bound,
// stores the top-up and sends its invoice.
func (p *Checkout) topupChosen(ctx context.Context, env *flows.Env, s *flows.Session, usd decimal.Decimal) (*flows.Reply, error) {
	t, problem, limited, err := p.newTopup(ctx, env, usd)
	switch {
	case err != nil:
		return nil, err
	case problem != "":
		return p.topupProblem(ctx, env, s, problem)
	case limited != "":
		return &flows.Reply{Answer: limited, Alert: true, Notices: []flows.Notice{{Text: limited}}, NoScreen: true}, nil
	}
	if _, err := p.tg.SendInvoice(ctx, p.topupInvoice(env, t)); err != nil {
		return nil, err // nothing to pay: the record expires unpaid
	}
	p.log.Info("wallet top-up invoice sent", "chat", t.ChatID, "topup", t.ID, "usd", usd.StringFixed(2), "stars", t.Stars)
	s.Step = "amount"
	return &flows.Reply{Answer: env.T("pay.invoice_sent"), NoScreen: true, Save: true}, nil
}

// newTopup checks an amount against the limits and the balance bound and
// stores the top-up whose invoice is then sent (the chat) or linked (the
// Mini App). problem (Telegram HTML) says what is wrong with the amount;
// limited, that the buyer asked for too many invoices.
func (p *Checkout) newTopup(ctx context.Context, env *flows.Env, usd decimal.Decimal) (t *state.WalletTopup, problem, limited string, err error) {
	o := p.opts.Topup
	money := func(d decimal.Decimal) string { return locales.Money(env.Lang, d) }
	if usd.LessThan(o.MinUSD) || usd.GreaterThan(o.MaxUSD) || !usd.Equal(usd.Round(2)) {
		return nil, env.T("wtopup.out_of_range", "amount", money(usd), "min", money(o.MinUSD), "max", money(o.MaxUSD)), "", nil
	}
	bal, err := p.Wallets.Balance(ctx, env.User.ID)
	if err != nil {
		return nil, "", "", err
	}
	if room, bounded := p.room(bal); bounded && usd.GreaterThan(room) {
		return nil, env.T("wtopup.over_max", "max", money(o.MaxBalanceUSD), "balance", money(bal), "room", money(room)), "", nil
	}
	ok, wait, err := p.limiter.Allow(ctx, "inv:u:"+strconv.FormatInt(env.User.ID, 10))
	if err != nil {
		return nil, "", "", err
	}
	if !ok {
		return nil, "", env.N("err.rate_limited", max(int64((wait+time.Second-1)/time.Second), 1)), nil
	}
	// Invoices are recorded after the store's epoch (see sweepCharge).
	if _, err := p.storeEpoch(ctx); err != nil {
		return nil, "", "", err
	}
	now := p.now()
	t = &state.WalletTopup{
		UserID: env.User.ID, ChatID: env.User.ID, USD: usd, Stars: p.topupStars(usd), Lang: string(env.Lang),
		Created: now, Expires: now.Add(o.TTL),
	}
	if err := p.Wallets.CreateTopup(ctx, t); err != nil {
		return nil, "", "", err
	}
	return t, "", "", nil
}

// topupInvoice is the Stars invoice of top-up t, sent or linked.
func (p *Checkout) topupInvoice(env *flows.Env, t *state.WalletTopup) Invoice {
	money := func(d decimal.Decimal) string { return locales.Money(env.Lang, d) }
	minutes := int64(p.opts.Topup.TTL / time.Minute)
	return Invoice{
		ChatID:      t.ChatID,
		Title:       locales.Clip(env.T("wtopup.invoice_title", "usd", money(t.USD)), 32),
		Description: locales.Clip(env.N("wtopup.invoice_description", max(minutes, 1), "usd", money(t.USD)), 255),
		Payload:     topupPrefix + t.ID,
		Label:       locales.Clip(env.T("wtopup.invoice_label", "usd", money(t.USD)), 32),
		Stars:       t.Stars,
	}
}

// ---- pre-checkout

// preCheckoutTopup answers the pre-checkout query of a top-up invoice.
func (p *Checkout) preCheckoutTopup(ctx context.Context, pq PreCheckoutQuery) {
	id := strings.TrimPrefix(pq.Payload, topupPrefix)
	t, err := p.Wallets.Topup(ctx, id)
	if err != nil && !errors.Is(err, state.ErrNoTopup) {
		p.log.Warn("pre-checkout: load wallet top-up", "topup", id, "err", err)
	}
	lang := p.topupLang(t, pq.LanguageCode)
	key, kv := p.checkTopup(ctx, pq, t, err)
	refusal := ""
	if key != "" {
		refusal = locales.T(lang, key, kv...)
	}
	if err := p.tg.AnswerPreCheckout(ctx, pq.ID, refusal); err != nil {
		p.log.Warn("answer pre-checkout query", "topup", id, "err", err)
	}
	p.log.Info("pre-checkout", "topup", id, "user", pq.UserID, "ok", key == "", "reason", key)
}

// checkTopup returns "" when the top-up may be paid, else the locale key
// of the reason and its arguments.
func (p *Checkout) checkTopup(ctx context.Context, pq PreCheckoutQuery, t *state.WalletTopup, loadErr error) (string, []any) {
	lang := p.topupLang(t, pq.LanguageCode)
	money := func(d decimal.Decimal) string { return locales.Money(lang, d) }
	switch {
	case !p.topupsOn():
		return "wtopup.refuse_off", nil
	case loadErr != nil && !errors.Is(loadErr, state.ErrNoTopup):
		return "pay.refuse_unavailable", nil
	case t != nil && t.V > state.TopupVersion:
		// A newer build's: only it knows what the payment must meet.
		return "pay.refuse_unavailable", nil
	case t == nil || t.UserID != pq.UserID:
		return "pay.refuse_unknown", nil
	case t.Expired(p.now()):
		return "wtopup.refuse_expired", nil
	case pq.Currency != "XTR" || pq.Total != t.Stars:
		return "wtopup.refuse_amount", nil
	case t.PaidBy != "":
		return "wtopup.refuse_paid", nil
	}
	bal, err := p.Wallets.Balance(ctx, t.UserID)
	if err != nil {
		p.log.Warn("pre-checkout: read the wallet", "topup", t.ID, "err", err)
		return "pay.refuse_unavailable", nil
	}
	if room, bounded := p.room(bal); bounded && t.USD.GreaterThan(room) {
		return "wtopup.refuse_limit", []any{"max", money(p.opts.Topup.MaxBalanceUSD), "after", money(bal.Add(t.USD))}
	}
	return "", nil
}

// topupLang is the language of a top-up's buyer: the one they asked in,
// else what their Telegram client suggests.
func (p *Checkout) topupLang(t *state.WalletTopup, code string) locales.Lang {
	if t != nil {
		if l, ok := locales.Parse(t.Lang); ok && slices.Contains(p.engine.Langs, l) {
			return l
		}
	}
	return p.engine.LangFor(&flows.Session{}, flows.User{LanguageCode: code})
}
