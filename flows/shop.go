package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/locales"
)

// Markup is the shop's margin on upstream prices.
type Markup struct {
	Percent decimal.Decimal
	Fixed   decimal.Decimal // USD per order
}

// Pricing turns upstream USD into what the buyer pays (DESIGN "How money
// flows"): shop_usd = upstream_usd * (1 + percent/100) + fixed, rounded up
// to a cent; stars = ceil(shop_usd / StarsUSDRate).
type Pricing struct {
	Markup       Markup
	Lines        map[string]Markup // per-line overrides
	StarsUSDRate decimal.Decimal
	ShowStars    bool // buyers pay in Stars
	ShowUSD      bool // buyers pay from the USD wallet
}

var hundred = decimal.NewFromInt(100)

func decimalInt(n int) decimal.Decimal { return decimal.NewFromInt(int64(n)) }

// ShopUSD returns the buyer's USD price for an upstream price on line.
func (p *Pricing) ShopUSD(line string, upstream decimal.Decimal) decimal.Decimal {
	m := p.Markup
	if o, ok := p.Lines[line]; ok {
		m = o
	}
	usd := upstream.Mul(decimal.NewFromInt(1).Add(m.Percent.Div(hundred))).Add(m.Fixed)
	return usd.RoundUp(2)
}

// Stars returns the price in Stars of a shop USD price.
func (p *Pricing) Stars(usd decimal.Decimal) int64 {
	if !p.StarsUSDRate.IsPositive() {
		return 0
	}
	return usd.Div(p.StarsUSDRate).Ceil().IntPart()
}

// Format shows a shop USD price the way the buyer pays: Stars and/or USD.
func (p *Pricing) Format(lang locales.Lang, usd decimal.Decimal) string {
	var parts []string
	if p.ShowStars || !p.ShowUSD {
		parts = append(parts, locales.Stars(lang, p.Stars(usd)))
	}
	if p.ShowUSD {
		parts = append(parts, locales.Money(lang, usd))
	}
	return strings.Join(parts, " · ")
}

// Price formats the buyer's price on line for an upstream price.
func (p *Pricing) Price(lang locales.Lang, line string, upstream decimal.Decimal) string {
	return p.Format(lang, p.ShopUSD(line, upstream))
}

// Shop is what the product-line flows share: the catalog, prices, quotes
// and the rate limit. A confirmed quote leaves the flows as Reply.Pay.
type Shop struct {
	Catalog  Catalog
	Pricing  Pricing
	Quotes   QuoteStore
	Limiter  Limiter // nil: no limit
	Funds    Funds   // nil: items are never paused for the upstream balance
	Promos   Promos  // nil: no promo codes
	QuoteTTL time.Duration
	PerPage  int // list entries per page (default 8)

	engine *Engine
}

// Attach readies the shop for engine e (lines.Register calls it before it
// registers the lines): the defaults, the way back to e's main menu and the
// paused items' button.
func (sh *Shop) Attach(e *Engine) {
	sh.engine = e
	if sh.PerPage <= 0 {
		sh.PerPage = 8
	}
	if sh.QuoteTTL <= 0 {
		sh.QuoteTTL = 15 * time.Minute
	}
	e.HandleButton(actPaused, func(_ context.Context, env *Env, _ *Session, _ Event) (*Reply, error) {
		return &Reply{Answer: env.T("catalog.paused_alert"), Alert: true, NoScreen: true}, nil
	})
}

// Actions shared by the line flows. Line-specific actions are short too:
// callback data must stay within 64 bytes.
const (
	actBack     = "b"  // back one step
	actPage     = "pg" // arg: page number
	actNoop     = "pi" // the page indicator of older screens: nothing to do
	actPick     = "i"  // arg: index of an entry on the page
	actSearch   = "s"  // open the search prompt
	actQty      = "n"  // arg: a quick quantity
	actPay      = "pay"
	actEdit     = "e"
	actRetry    = "r"
	actForMe    = "me"
	actPaused   = "pz" // an item the upstream balance cannot cover now
	stepConfirm = "confirm"
)

// Limits on upstream text in what the bot sends (Telegram counts UTF-16
// units): a name in a message line, a button label.
const (
	maxNameLen    = 120
	maxButtonText = 60
	maxNoteLen    = 600
	maxItemName   = 2*maxNameLen + 16 // a quote's item: category and offer
)

// listItem is one entry of a paginated list: its button label and, for
// lists that also describe each entry in the message, its text line (HTML).
// A paused item is shown as temporarily unavailable and cannot be picked;
// an item with NoButton (sold out) is only described.
type listItem struct {
	Label    string
	ID       string
	Line     string
	Paused   bool
	NoButton bool
}

// funds is the upstream balance as far as it is known for one screen.
type funds struct {
	balance decimal.Decimal
	known   bool
}

// funds reads the upstream balance once for a screen. When it cannot be
// read nothing is paused: the pre-checkout check still refuses a payment
// the balance cannot cover.
func (sh *Shop) funds(ctx context.Context) funds {
	if sh.Funds == nil {
		return funds{}
	}
	b, err := sh.Funds.UpstreamBalance(ctx)
	if err != nil {
		return funds{}
	}
	return funds{balance: b, known: true}
}

// maxUpstreamUSD is the largest upstream price of one order the shop takes:
// anything above is an upstream error, not a price.
var maxUpstreamUSD = decimal.NewFromInt(100_000)

// covers reports whether an item at upstream price usd can be sold: the price
// is sane (positive, not absurd: an upstream error must never show as a
// negative or overflowing price) and the balance pays for it.
func (f funds) covers(usd decimal.Decimal) bool {
	if !usd.IsPositive() || usd.GreaterThan(maxUpstreamUSD) {
		return false
	}
	return !f.known || f.balance.GreaterThanOrEqual(usd)
}

// affordable is how many units at upstream price usd the balance pays for,
// at most limit.
func (f funds) affordable(usd decimal.Decimal, limit int) int {
	if !f.known || !usd.IsPositive() {
		return limit
	}
	n := f.balance.Div(usd).Floor().IntPart()
	return int(min(max(n, 0), int64(limit)))
}

// pausedLabel marks an item's label as temporarily unavailable.
func pausedLabel(env *Env, label string) string {
	return env.T("catalog.paused_btn", "item", label)
}

// clipName shortens an upstream name for a message line (not yet escaped).
func clipName(name string) string { return locales.Clip(name, maxNameLen) }

// itemLabel is a button label: the upstream name, clipped so that the
// suffix (a price) always shows.
func itemLabel(name, suffix string) string {
	return locales.Clip(name, max(maxButtonText-locales.UTF16Len(suffix), 12)) + suffix
}

// pricedItem is an entry labelled with its price, or with its name only when
// it cannot be sold now (so an absurd upstream price is never shown).
func pricedItem(name, price, id string, sellable bool) listItem {
	if !sellable {
		return listItem{Label: locales.Clip(name, maxButtonText), ID: id, Paused: true}
	}
	return listItem{Label: itemLabel(name, " — "+price), ID: id}
}

// offerItem is a card or key of an offer list: described by a line with its
// price, picked by a button, or only described when sold out or paused.
func offerItem(env *Env, price, name, id string, soldOut, paused bool) listItem {
	shown := locales.Escape(clipName(name))
	switch {
	case soldOut:
		return listItem{Line: env.T("gc.card_sold_out", "name", shown), NoButton: true}
	case paused:
		return listItem{Line: env.T("catalog.paused_line", "name", shown), NoButton: true}
	}
	return listItem{Label: itemLabel(name, " — "+price), ID: id, Line: env.T("gc.card_line", "name", shown, "price", price)}
}

// listPage renders one page of items: their text lines added to text, one
// button per row, and ◀️ ▶️ when there is more than one page (the page,
// kept in the session, is then named in the text). The ids of the page are
// kept in the session, so the buttons carry only an index. Labels are
// clipped, so a page stays within Telegram's limits whatever the upstream
// names.
func (sh *Shop) listPage(env *Env, s *Session, text string, items []listItem) (string, [][]Button) {
	per := sh.PerPage
	pages := max(1, (len(items)+per-1)/per)
	page, _ := strconv.Atoi(s.Get("page"))
	page = min(max(page, 0), pages-1)
	var rows [][]Button
	var ids []string
	var b strings.Builder
	b.WriteString(text)
	for i := page * per; i < min(len(items), (page+1)*per); i++ {
		it := items[i]
		if it.Line != "" {
			b.WriteString("\n" + it.Line)
		}
		label := locales.Clip(it.Label, maxButtonText+16)
		switch {
		case it.NoButton:
		case it.Paused:
			rows = append(rows, []Button{{Text: pausedLabel(env, label), Action: actPaused}})
		default:
			rows = append(rows, []Button{{Text: label, Action: actPick, Arg: strconv.Itoa(len(ids))}})
			ids = append(ids, it.ID)
		}
	}
	s.Set("ids", strings.Join(ids, "\x1f"))
	if pages > 1 {
		b.WriteString("\n\n" + env.T("page.of", "page", page+1, "pages", pages))
		var nav []Button
		if page > 0 {
			nav = append(nav, Button{Text: env.T("btn.prev"), Action: actPage, Arg: strconv.Itoa(page - 1)})
		}
		if page < pages-1 {
			nav = append(nav, Button{Text: env.T("btn.next"), Action: actPage, Arg: strconv.Itoa(page + 1)})
		}
		rows = append(rows, nav)
	}
	return b.String(), rows
}

// picked returns the id behind a list button's index.
func picked(s *Session, arg string) (string, bool) {
	i, err := strconv.Atoi(arg)
	ids := strings.Split(s.Get("ids"), "\x1f")
	if err != nil || i < 0 || i >= len(ids) || ids[i] == "" {
		return "", false
	}
	return ids[i], true
}

// navRow is Back and Cancel.
func navRow(env *Env) []Button {
	return []Button{{Text: env.T("btn.back"), Action: actBack}, {Text: env.T("btn.cancel"), Action: actCancel}}
}

// withStale adds the out-of-date note to a screen's text.
func withStale(env *Env, text string, stale bool) string {
	if stale {
		return text + "\n\n" + env.T("catalog.stale")
	}
	return text
}

// failScreen is shown when the catalog cannot be read at all.
func failScreen(env *Env, err error) *Screen {
	key := "catalog.unavailable"
	if errors.Is(err, ErrNotFound) {
		key = "catalog.not_found"
	}
	return &Screen{Text: env.T(key), Rows: [][]Button{{{Text: env.T("btn.retry"), Action: actRetry}}, navRow(env)}}
}

// quickQuantities are the quick buttons of a quantity question within lo..hi.
func quickQuantities(env *Env, lo, hi int, candidates []int) [][]Button {
	var row []Button
	var rows [][]Button
	for _, n := range candidates {
		if n < lo || n > hi {
			continue
		}
		row = append(row, Button{Text: locales.Number(env.Lang, int64(n)), Action: actQty, Arg: strconv.Itoa(n)})
		if len(row) == 4 {
			rows = append(rows, row)
			row = nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// parseQuantity reads a whole number the buyer typed ("1 000" and "1,000"
// too). Zero and negative numbers are numbers: the caller's range check
// answers them with the allowed range, like any other number out of it.
func parseQuantity(text string) (int, bool) {
	t := strings.NewReplacer(" ", "", "\u00a0", "", ",", "", "_", "", "\u2212", "-").Replace(strings.TrimSpace(text))
	n, err := strconv.Atoi(t)
	if err != nil || len(strings.TrimLeft(t, "+-")) > 9 {
		return 0, false
	}
	return n, true
}

// notice is a reply that keeps the step and asks again: a reason, then the
// current screen.
func (sh *Shop) again(ctx context.Context, env *Env, f Flow, s *Session, reason string) (*Reply, error) {
	sc, err := f.Show(ctx, env, s)
	if err != nil {
		return nil, err
	}
	return &Reply{Notices: []Notice{{Text: reason}}, Screen: sc, Save: true}, nil
}

// back goes to the previous step, or to the main menu from the first one.
func (sh *Shop) back(ctx context.Context, env *Env, f Flow, s *Session) (*Reply, error) {
	if !s.GoBack() {
		s.Clear()
		return &Reply{Screen: sh.engine.MenuScreen(env), Save: true}, nil
	}
	s.Set("page", "")
	sc, err := f.Show(ctx, env, s)
	return &Reply{Screen: sc, Save: true}, err
}

// show renders the current step as a reply.
func (sh *Shop) show(ctx context.Context, env *Env, f Flow, s *Session) (*Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &Reply{Screen: sc, Save: true}, err
}

// badInput is a localized reason why the buyer's answer cannot be used; the
// same question is asked again.
type badInput struct{ text string }

func (e *badInput) Error() string { return "bad input" }

// errRateLimited carries how long the buyer must wait.
type errRateLimited struct{ wait time.Duration }

func (e *errRateLimited) Error() string { return fmt.Sprintf("rate limited for %v", e.wait) }

// allow counts one costly action of the buyer.
func (sh *Shop) allow(ctx context.Context, env *Env) error {
	if sh.Limiter == nil {
		return nil
	}
	ok, wait, err := sh.Limiter.Allow(ctx, "u:"+strconv.FormatInt(env.User.ID, 10))
	if err != nil {
		return err
	}
	if !ok {
		return &errRateLimited{wait}
	}
	return nil
}

// limited counts one costly action and returns the "please wait" reply
// when the buyer is over the limit, nil otherwise.
func (sh *Shop) limited(ctx context.Context, env *Env) (*Reply, error) {
	err := sh.allow(ctx, env)
	var rl *errRateLimited
	if errors.As(err, &rl) {
		return limited(env, rl), nil
	}
	return nil, err
}

// limited is the polite "please wait" reply.
func limited(env *Env, e *errRateLimited) *Reply {
	n := int64((e.wait + time.Second - 1) / time.Second)
	msg := env.N("err.rate_limited", max(n, 1))
	return &Reply{Answer: msg, Alert: true, Notices: []Notice{{Text: msg}}, NoScreen: true}
}

// pricer builds a fresh quote from what the buyer chose (kept in the
// session), with prices from the catalog.
type pricer interface {
	Flow
	price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error)
}

// quote prices the buyer's choice, stores the quote and shows the
// confirmation screen. It counts against the buyer's rate limit.
func (sh *Shop) quote(ctx context.Context, env *Env, f pricer, s *Session, notices ...Notice) (*Reply, error) {
	if r, err := sh.limited(ctx, env); r != nil || err != nil {
		return r, err
	}
	q, stale, err := f.price(ctx, env, s)
	var bad *badInput
	if errors.As(err, &bad) {
		return sh.again(ctx, env, f, s, bad.text)
	}
	if err != nil {
		return &Reply{Notices: notices, Screen: failScreen(env, err), Save: true}, nil
	}
	if !sh.funds(ctx).covers(q.UpstreamUSD) {
		return sh.again(ctx, env, f, s, env.T("catalog.paused_quote"))
	}
	q.ItemName = locales.Clip(q.ItemName, maxItemName)
	q.ChatID, q.UserID = env.User.ID, env.User.ID
	q.Created, q.Expires = env.Now, env.Now.Add(sh.QuoteTTL)
	if unit, ok := unitPriced(q); ok {
		// The buyer saw the unit price: the total is exactly unit × quantity.
		shopUnit := sh.Pricing.ShopUSD(q.Line, unit)
		q.ShopUSD = shopUnit.Mul(decimalInt(q.Quantity))
		q.Stars = sh.Pricing.Stars(shopUnit) * int64(q.Quantity)
	} else {
		q.ShopUSD = sh.Pricing.ShopUSD(q.Line, q.UpstreamUSD)
		q.Stars = sh.Pricing.Stars(q.ShopUSD)
	}
	if err := sh.Quotes.Save(ctx, q); err != nil {
		return nil, err
	}
	s.Set("quote", q.ID)
	s.Goto(stepConfirm)
	sc := sh.confirmScreen(env, q)
	sc.Text = withStale(env, sc.Text, stale)
	return &Reply{Notices: notices, Screen: sc, Save: true}, nil
}

// unitPriced reports whether a quote is several units of one item priced
// per unit (gift cards, game keys), and the upstream unit price.
func unitPriced(q *Quote) (decimal.Decimal, bool) {
	if q.Quantity <= 1 || (q.Line != "giftcards" && q.Line != "keys") {
		return decimal.Decimal{}, false
	}
	return q.UpstreamUSD.Div(decimalInt(q.Quantity)), true
}

// FormatQuote shows a quote's total as the buyer pays it: its Stars and/or
// USD as priced, not recomputed from the USD.
func (p *Pricing) FormatQuote(lang locales.Lang, stars int64, usd decimal.Decimal) string {
	var parts []string
	if p.ShowStars || !p.ShowUSD {
		parts = append(parts, locales.Stars(lang, stars))
	}
	if p.ShowUSD {
		parts = append(parts, locales.Money(lang, usd))
	}
	return strings.Join(parts, " · ")
}

// confirmScreen shows what, for whom, how many and the total.
func (sh *Shop) confirmScreen(env *Env, q *Quote) *Screen {
	var b strings.Builder
	b.WriteString(env.T("confirm.title"))
	b.WriteString("\n\n")
	b.WriteString(env.T("confirm.line", "line", env.T("line."+q.Line)))
	b.WriteString("\n")
	b.WriteString(env.T("confirm.item", "item", locales.Escape(q.ItemName)))
	if q.For != "" {
		key := "confirm.for"
		if q.Line == "games" || q.Line == "services" {
			key = "confirm.details" // the offer's fields, not a person
		}
		b.WriteString("\n")
		b.WriteString(env.T(key, "who", locales.Escape(q.For)))
	}
	if q.Quantity > 1 && q.Line != "stars" {
		b.WriteString("\n")
		b.WriteString(env.T("confirm.qty", "n", locales.Number(env.Lang, int64(q.Quantity))))
		if unit, ok := unitPriced(q); ok {
			shopUnit := sh.Pricing.ShopUSD(q.Line, unit)
			b.WriteString("\n")
			b.WriteString(env.T("confirm.unit", "price", sh.Pricing.FormatQuote(env.Lang, sh.Pricing.Stars(shopUnit), shopUnit)))
		}
	}
	b.WriteString("\n\n")
	total := sh.Pricing.FormatQuote(env.Lang, q.Stars, q.ShopUSD)
	if q.PromoCode != "" {
		b.WriteString(env.T("confirm.promo", "code", locales.Escape(q.PromoCode),
			"discount", sh.Pricing.FormatQuote(env.Lang, q.ListStars-q.Stars, q.DiscountUSD)))
		b.WriteString("\n")
		b.WriteString(env.T("confirm.total_promo", "total", total, "was", sh.Pricing.FormatQuote(env.Lang, q.ListStars, q.ListUSD)))
	} else {
		b.WriteString(env.T("confirm.total", "total", total))
	}
	b.WriteString("\n")
	b.WriteString(env.N("confirm.valid", int64(sh.QuoteTTL/time.Minute)))
	rows := [][]Button{{{Text: env.T("btn.pay"), Action: actPay}}}
	if pr := sh.promoRow(env); pr != nil {
		rows = append(rows, pr)
	}
	rows = append(rows, []Button{{Text: env.T("btn.edit"), Action: actEdit}}, navRow(env))
	return &Screen{Text: b.String(), Rows: rows}
}

// showConfirm renders the confirmation step from the stored quote.
func (sh *Shop) showConfirm(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	q, err := sh.Quotes.Load(ctx, s.Get("quote"))
	if err != nil {
		if errors.Is(err, ErrNoQuote) {
			return &Screen{Text: env.T("quote.gone"), Rows: [][]Button{{{Text: env.T("btn.retry"), Action: actRetry}}, navRow(env)}}, nil
		}
		return nil, err
	}
	return sh.confirmScreen(env, q), nil
}

// confirm handles the confirmation step's own buttons: Pay hands a live
// quote to checkout; an expired or lost quote is priced again and shown.
// Edit goes to editStep. It reports false for other actions.
func (sh *Shop) confirm(ctx context.Context, env *Env, f pricer, s *Session, ev Event, editStep string) (*Reply, bool, error) {
	if r, ok, err := sh.handlePromo(ctx, env, f, s, ev); ok {
		return r, true, err
	}
	if s.Step != stepConfirm || ev.Kind != EvButton {
		return nil, false, nil
	}
	switch ev.Button.Action {
	case actPay:
		q, err := sh.Quotes.Load(ctx, s.Get("quote"))
		if err != nil && !errors.Is(err, ErrNoQuote) {
			return nil, true, err
		}
		if err != nil || q.Expired(env.Now) || q.UserID != env.User.ID {
			s.GoBack() // quote() goes to confirm again
			r, err := sh.quote(ctx, env, f, s, Notice{Text: env.T("quote.repriced")})
			return r, true, err
		}
		if !sh.funds(ctx).covers(q.UpstreamUSD) {
			s.GoBack()
			r, err := sh.again(ctx, env, f, s, env.T("catalog.paused_quote"))
			return r, true, err
		}
		return &Reply{Pay: q}, true, nil
	case actRetry:
		s.GoBack()
		r, err := sh.quote(ctx, env, f, s)
		return r, true, err
	case actEdit:
		for s.Step != editStep && s.GoBack() {
		}
		s.Set("fi", "") // the fields are asked again from the first
		s.Step = editStep
		r, err := sh.show(ctx, env, f, s)
		return r, true, err
	}
	return nil, false, nil
}
