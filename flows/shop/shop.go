package shop

import (
	"context"
	"errors"
	"fmt"
	"shopbot/flows"
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

// Pricing turns upstream USD into what the buyer pays (docs/design.md,
// "Payments"): shop_usd = upstream_usd * (1 + percent/100) + fixed, rounded up
// to a cent; stars = ceil(shop_usd / StarsUSDRate).
type Pricing struct {
	Markup       Markup
	Lines        map[string]Markup // per-line overrides
	StarsUSDRate decimal.Decimal
	ShowStars    bool // buyers pay in Stars
	ShowUSD      bool // buyers pay from the USD wallet
}

var hundred = decimal.NewFromInt(100)

func DecimalInt(n int) decimal.Decimal { return decimal.NewFromInt(int64(n)) }

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
	Catalog flows.Catalog
	Pricing Pricing
	Quotes  flows.QuoteStore
	Limiter flows.Limiter // nil: no limit
	// InlineLimiter counts a user's inline queries (inline.go), apart from
	// Limiter: a query comes with every few keystrokes. nil: no limit.
	InlineLimiter flows.Limiter
	// Reviews shows what buyers said of a product on its screen
	// (reviews.go); nil: no reviews shown.
	Reviews flows.Reviews
	// Restock keeps who waits for a sold-out item (a sold-out card or key
	// then has a "notify me" button); nil: none.
	Restock  flows.Restock
	Funds    flows.Funds  // nil: items are never paused for the upstream balance
	Promos   flows.Promos // nil: no promo codes
	QuoteTTL time.Duration
	PerPage  int // list entries per page (default 8)

	engine *flows.Engine
}

// Attach readies the shop for engine e (lines.Register calls it before it
// registers the lines): the defaults, the way back to e's main menu and the
// paused items' button.
func (sh *Shop) Attach(e *flows.Engine) {
	sh.engine = e
	if sh.PerPage <= 0 {
		sh.PerPage = 8
	}
	if sh.QuoteTTL <= 0 {
		sh.QuoteTTL = 15 * time.Minute
	}
	e.HandleButton(ActPaused, func(_ context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
		return &flows.Reply{Answer: env.T("catalog.paused_alert"), Alert: true, NoScreen: true}, nil
	})
}

// Actions shared by the line flows. Line-specific actions are short too:
// callback data must stay within 64 bytes.
const (
	ActBack   flows.Action = "b"   // back one step
	actPage   flows.Action = "pg"  // arg: page number
	actNoop   flows.Action = "pi"  // the page indicator of older screens: nothing to do
	ActPick   flows.Action = "i"   // arg: index of an entry on the page
	ActSearch flows.Action = "s"   // open the search prompt
	ActQty    flows.Action = "n"   // arg: a quick quantity
	actPay    flows.Action = "pay" // pay the quote confirmed
	actEdit   flows.Action = "e"   // change the answers (the line's edit step)
	actRetry  flows.Action = "r"   // price a lost quote again
	ActForMe  flows.Action = "me"  // the buyer's own username as the recipient
	ActPaused flows.Action = "pz"  // an item the upstream balance cannot cover now
	ActNotify flows.Action = "nt"  // arg: index of a sold-out entry to be told about
)

// StepConfirm is the confirmation step of every line: the quote and Pay.
const StepConfirm = "confirm"

// Session variables the lines share. Their strings are what stored
// sessions hold.
const (
	// KeyPage is the page of the list shown (a number; unset: the first).
	KeyPage flows.Key = "page"
	// KeyIDs are the ids behind the list buttons of the page shown (a
	// list): the buttons carry only an index (Picked).
	KeyIDs flows.Key = "ids"
	// KeyQuery is the search text.
	KeyQuery flows.Key = "q"
	// KeyQuote is the id of the quote on the confirmation step.
	KeyQuote flows.Key = "quote"
	// KeyBrand is the brand chosen (its name), whose categories
	// CategoriesScreen lists.
	KeyBrand flows.Key = "brand"
	// KeyFieldIndex is the field asked (a number: its index) on a line's
	// fields step; unset asks the first.
	KeyFieldIndex flows.Key = "fi"
)

// Limits on upstream text in what the bot sends (Telegram counts UTF-16
// units): a name in a message line, a button label.
const (
	MaxNameLen    = 120
	MaxButtonText = 60
	MaxNoteLen    = 600
	maxItemName   = 2*MaxNameLen + 16 // a quote's item: category and offer
)

// ListItem is one entry of a paginated list: its button label and, for
// lists that also describe each entry in the message, its text line (HTML).
// A paused item is shown as temporarily unavailable and cannot be picked;
// an item with NoButton (sold out) is only described, or, with Notify,
// has a button to be told when it is back.
type ListItem struct {
	Label    string
	ID       string
	Line     string
	Paused   bool
	NoButton bool
	Notify   bool
}

// Balance is the upstream balance as far as it is known for one screen.
type Balance struct {
	balance decimal.Decimal
	known   bool
}

// Balance reads the upstream balance once for a screen. When it cannot be
// read nothing is paused: the pre-checkout check still refuses a payment
// the balance cannot cover.
func (sh *Shop) Balance(ctx context.Context) Balance {
	if sh.Funds == nil {
		return Balance{}
	}
	b, err := sh.Funds.UpstreamBalance(ctx)
	if err != nil {
		return Balance{}
	}
	return Balance{balance: b, known: true}
}

// maxUpstreamUSD is the largest upstream price of one order the shop takes:
// anything above is an upstream error, not a price.
var maxUpstreamUSD = decimal.NewFromInt(100_000)

// Covers reports whether an item at upstream price usd can be sold: the price
// is sane (positive, not absurd: an upstream error must never show as a
// negative or overflowing price) and the balance pays for it.
func (f Balance) Covers(usd decimal.Decimal) bool {
	if !usd.IsPositive() || usd.GreaterThan(maxUpstreamUSD) {
		return false
	}
	return !f.known || f.balance.GreaterThanOrEqual(usd)
}

// Affordable is how many units at upstream price usd the balance pays for,
// at most limit.
func (f Balance) Affordable(usd decimal.Decimal, limit int) int {
	if !f.known || !usd.IsPositive() {
		return limit
	}
	n := f.balance.Div(usd).Floor().IntPart()
	return int(min(max(n, 0), int64(limit)))
}

// PausedLabel marks an item's label as temporarily unavailable.
func PausedLabel(env *flows.Env, label string) string {
	return env.T("catalog.paused_btn", "item", label)
}

// ClipName shortens an upstream name for a message line (not yet escaped).
func ClipName(name string) string { return locales.Clip(name, MaxNameLen) }

// itemLabel is a button label: the upstream name, clipped so that the
// suffix (a price) always shows.
func itemLabel(name, suffix string) string {
	return locales.Clip(name, max(MaxButtonText-locales.UTF16Len(suffix), 12)) + suffix
}

// PricedItem is an entry labelled with its price, or with its name only when
// it cannot be sold now (so an absurd upstream price is never shown).
func PricedItem(name, price, id string, sellable bool) ListItem {
	if !sellable {
		return ListItem{Label: locales.Clip(name, MaxButtonText), ID: id, Paused: true}
	}
	return ListItem{Label: itemLabel(name, " — "+price), ID: id}
}

// OfferItem is a card or key of an offer list: described by a line with its
// Price, picked by a button, or only described when sold out (with a
// button to be told when it is back, when notify) or paused.
func OfferItem(env *flows.Env, price, name, id string, soldOut, paused, notify bool) ListItem {
	shown := locales.Escape(ClipName(name))
	switch {
	case soldOut && notify:
		return ListItem{Line: env.T("gc.card_sold_out", "name", shown), Label: name, ID: id, NoButton: true, Notify: true}
	case soldOut:
		return ListItem{Line: env.T("gc.card_sold_out", "name", shown), NoButton: true}
	case paused:
		return ListItem{Line: env.T("catalog.paused_line", "name", shown), NoButton: true}
	}
	return ListItem{Label: itemLabel(name, " — "+price), ID: id, Line: env.T("gc.card_line", "name", shown, "price", price)}
}

// ListPage renders one page of items: their text lines added to text, one
// button per row, and ◀️ ▶️ when there is more than one page (the page,
// kept in the session, is then named in the text). The ids of the page are
// kept in the session, so the buttons carry only an index. Labels are
// clipped, so a page stays within Telegram's limits whatever the upstream
// names.
func (sh *Shop) ListPage(env *flows.Env, s *flows.Session, text string, items []ListItem) (string, [][]flows.Button) {
	per := sh.PerPage
	pages := max(1, (len(items)+per-1)/per)
	page := s.Int(KeyPage)
	page = min(max(page, 0), pages-1)
	var rows [][]flows.Button
	var ids []string
	var b strings.Builder
	b.WriteString(text)
	for i := page * per; i < min(len(items), (page+1)*per); i++ {
		it := items[i]
		if it.Line != "" {
			b.WriteString("\n" + it.Line)
		}
		label := locales.Clip(it.Label, MaxButtonText+16)
		switch {
		case it.Notify:
			rows = append(rows, []flows.Button{{Text: env.T("restock.btn", "item", locales.Clip(it.Label, MaxButtonText)), Action: ActNotify, Arg: strconv.Itoa(len(ids))}})
			ids = append(ids, it.ID)
		case it.NoButton:
		case it.Paused:
			rows = append(rows, []flows.Button{{Text: PausedLabel(env, label), Action: ActPaused}})
		default:
			rows = append(rows, []flows.Button{{Text: label, Action: ActPick, Arg: strconv.Itoa(len(ids))}})
			ids = append(ids, it.ID)
		}
	}
	s.SetList(KeyIDs, ids)
	if pages > 1 {
		b.WriteString("\n\n" + env.T("page.of", "page", page+1, "pages", pages))
		var nav []flows.Button
		if page > 0 {
			nav = append(nav, flows.Button{Text: env.T("btn.prev"), Action: actPage, Arg: strconv.Itoa(page - 1)})
		}
		if page < pages-1 {
			nav = append(nav, flows.Button{Text: env.T("btn.next"), Action: actPage, Arg: strconv.Itoa(page + 1)})
		}
		rows = append(rows, nav)
	}
	return b.String(), rows
}

// Picked returns the id behind a list button's index.
func Picked(s *flows.Session, arg string) (string, bool) {
	i, err := strconv.Atoi(arg)
	ids := s.List(KeyIDs)
	if err != nil || i < 0 || i >= len(ids) || ids[i] == "" {
		return "", false
	}
	return ids[i], true
}

// NavRow is Back and Cancel.
func NavRow(env *flows.Env) []flows.Button {
	return []flows.Button{{Text: env.T("btn.back"), Action: ActBack}, {Text: env.T("btn.cancel"), Action: flows.ActCancel}}
}

// knownNotes are upstream notes the shop has translated, by their English
// text: the locale key of each.
var knownNotes = map[string]string{
	"Delivered to the player ID within minutes.":                            "note.player_minutes",
	"Delivered by an operator within 24 hours.":                             "note.operator_24h",
	"Delivered within one business day.":                                    "note.business_day",
	"Large amounts may need a second login.":                                "note.second_login",
	"Requires the account email; the code arrives by email from Supercell.": "note.supercell_email",
}

// Note shows an upstream note (HTML, italic, clipped to max): in the
// buyer's language when the shop knows it, else as the upstream wrote it,
// marked as the supplier's own words in a language other than English.
func Note(env *flows.Env, note string, max int) string {
	if key, ok := knownNotes[strings.TrimSpace(note)]; ok {
		return "<i>" + env.T(key) + "</i>"
	}
	text := "<i>" + locales.Escape(locales.Clip(note, max)) + "</i>"
	if env.Lang != locales.En {
		text = env.T("note.supplier", "note", text)
	}
	return text
}

// WithStale adds the out-of-date note to a screen's text.
func WithStale(env *flows.Env, text string, stale bool) string {
	if stale {
		return text + "\n\n" + env.T("catalog.stale")
	}
	return text
}

// FailScreen is shown when the catalog cannot be read at all.
func FailScreen(env *flows.Env, err error) *flows.Screen {
	key := "catalog.unavailable"
	if errors.Is(err, flows.ErrNotFound) {
		key = "catalog.not_found"
	}
	return &flows.Screen{Text: env.T(key), Rows: [][]flows.Button{{{Text: env.T("btn.retry"), Action: actRetry}}, NavRow(env)}}
}

// QuickQuantities are the quick buttons of a quantity question within lo..hi.
func QuickQuantities(env *flows.Env, lo, hi int, candidates []int) [][]flows.Button {
	var row []flows.Button
	var rows [][]flows.Button
	for _, n := range candidates {
		if n < lo || n > hi {
			continue
		}
		row = append(row, flows.Button{Text: locales.Number(env.Lang, int64(n)), Action: ActQty, Arg: strconv.Itoa(n)})
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

// ParseQuantity reads a whole number the buyer typed ("1 000" and "1,000"
// too). Zero and negative numbers are numbers: the caller's range check
// answers them with the allowed range, like any other number out of it.
func ParseQuantity(text string) (int, bool) {
	t := strings.NewReplacer(" ", "", "\u00a0", "", ",", "", "_", "", "\u2212", "-").Replace(strings.TrimSpace(text))
	n, err := strconv.Atoi(t)
	if err != nil || len(strings.TrimLeft(t, "+-")) > 9 {
		return 0, false
	}
	return n, true
}

// notice is a reply that keeps the step and asks again: a reason, then the
// current screen.
func (sh *Shop) Again(ctx context.Context, env *flows.Env, f flows.Flow, s *flows.Session, reason string) (*flows.Reply, error) {
	sc, err := f.Show(ctx, env, s)
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: reason}}, Screen: sc, Save: true}, nil
}

// Back goes to the previous step, or to the main menu from the first one.
func (sh *Shop) Back(ctx context.Context, env *flows.Env, f flows.Flow, s *flows.Session) (*flows.Reply, error) {
	if !s.GoBack() {
		s.Clear()
		return &flows.Reply{Screen: sh.engine.MenuScreen(env), Save: true}, nil
	}
	s.Set(KeyPage, "")
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

// ShowStep renders the current step as a reply.
func (sh *Shop) ShowStep(ctx context.Context, env *flows.Env, f flows.Flow, s *flows.Session) (*flows.Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

// BadInput is a localized reason why the buyer's answer cannot be used; the
// same question is asked again.
type BadInput struct{ Text string }

func (e *BadInput) Error() string { return "bad input" }

// RateLimited is the error of a costly action the buyer may not take yet:
// Wait says when the next one is allowed.
type RateLimited struct{ Wait time.Duration }

func (e *RateLimited) Error() string { return fmt.Sprintf("rate limited for %v", e.Wait) }

// Seconds is the wait in whole seconds, at least 1: what the buyer is told.
func (e *RateLimited) Seconds() int64 { return max(int64((e.Wait+time.Second-1)/time.Second), 1) }

// Allow counts one costly action of env's buyer (a quote, a search, a
// login check) against the limit the chat and the Mini App share; over
// it, the error is a *RateLimited.
func (sh *Shop) Allow(ctx context.Context, env *flows.Env) error {
	if sh.Limiter == nil {
		return nil
	}
	ok, wait, err := sh.Limiter.Allow(ctx, "u:"+strconv.FormatInt(env.User.ID, 10))
	if err != nil {
		return err
	}
	if !ok {
		return &RateLimited{wait}
	}
	return nil
}

// Limited counts one costly action and returns the "please wait" reply
// when the buyer is over the limit, nil otherwise.
func (sh *Shop) Limited(ctx context.Context, env *flows.Env) (*flows.Reply, error) {
	err := sh.Allow(ctx, env)
	var rl *RateLimited
	if errors.As(err, &rl) {
		return limited(env, rl), nil
	}
	return nil, err
}

// limited is the polite "please wait" reply.
func limited(env *flows.Env, e *RateLimited) *flows.Reply {
	msg := env.N("err.rate_limited", e.Seconds())
	return &flows.Reply{Answer: msg, Alert: true, Notices: []flows.Notice{{Text: msg}}, NoScreen: true}
}

// Pricer builds a fresh quote from what the buyer chose (kept in the
// session), with prices from the catalog.
type Pricer interface {
	flows.Flow
	Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error)
}

// Quote prices the buyer's choice, stores the quote and shows the
// confirmation screen. It counts against the buyer's rate limit.
func (sh *Shop) Quote(ctx context.Context, env *flows.Env, f Pricer, s *flows.Session, notices ...flows.Notice) (*flows.Reply, error) {
	if r, err := sh.Limited(ctx, env); r != nil || err != nil {
		return r, err
	}
	q, stale, err := f.Price(ctx, env, s)
	var bad *BadInput
	if errors.As(err, &bad) {
		return sh.Again(ctx, env, f, s, bad.Text)
	}
	if err != nil {
		return &flows.Reply{Notices: notices, Screen: FailScreen(env, err), Save: true}, nil
	}
	if err := sh.StoreQuote(ctx, env, q); errors.Is(err, ErrPaused) {
		return sh.Again(ctx, env, f, s, env.T("catalog.paused_quote"))
	} else if err != nil {
		return nil, err
	}
	s.Set(KeyQuote, q.ID)
	s.Goto(StepConfirm)
	sc := sh.confirmScreen(env, q)
	sc.Text = WithStale(env, sc.Text, stale)
	return &flows.Reply{Notices: notices, Screen: sc, Save: true}, nil
}

// ErrPaused is StoreQuote's refusal of an item the upstream balance cannot
// pay for now: the buyer is told it is temporarily unavailable.
var ErrPaused = errors.New("the upstream balance cannot pay for the item now")

// StoreQuote prices q, as a line's Pricer built it (line, item, quantity,
// upstream price), for env's buyer and stores it with its id: the one
// place a quote gets its shop price, in the chat (Quote) and in the Mini
// App (lines.Quote). An item the upstream balance cannot pay for is
// refused with ErrPaused and nothing is stored.
func (sh *Shop) StoreQuote(ctx context.Context, env *flows.Env, q *flows.Quote) error {
	if !sh.Balance(ctx).Covers(q.UpstreamUSD) {
		return ErrPaused
	}
	q.ItemName = locales.Clip(q.ItemName, maxItemName)
	q.ChatID, q.UserID = env.User.ID, env.User.ID
	q.Created, q.Expires, q.Lang = env.Now, env.Now.Add(sh.QuoteTTL), string(env.Lang)
	if unit, ok := unitPriced(q); ok {
		// The buyer saw the unit price: the total is exactly unit × quantity.
		shopUnit := sh.Pricing.ShopUSD(q.Line, unit)
		q.ShopUSD = shopUnit.Mul(DecimalInt(q.Quantity))
		q.Stars = sh.Pricing.Stars(shopUnit) * int64(q.Quantity)
	} else {
		q.ShopUSD = sh.Pricing.ShopUSD(q.Line, q.UpstreamUSD)
		q.Stars = sh.Pricing.Stars(q.ShopUSD)
	}
	return sh.Quotes.Save(ctx, q)
}

// UnitPrice is the shop's price of one unit of a quote sold by the unit
// (several gift cards or game keys), as its summary shows it; false for
// other quotes.
func (sh *Shop) UnitPrice(q *flows.Quote) (usd decimal.Decimal, stars int64, ok bool) {
	unit, ok := unitPriced(q)
	if !ok {
		return decimal.Decimal{}, 0, false
	}
	shopUnit := sh.Pricing.ShopUSD(q.Line, unit)
	return shopUnit, sh.Pricing.Stars(shopUnit), true
}

// unitPriced reports whether a quote is several units of one item priced
// per unit (gift cards, game keys), and the upstream unit price.
func unitPriced(q *flows.Quote) (decimal.Decimal, bool) {
	if q.Quantity <= 1 || (q.Line != "giftcards" && q.Line != "keys") {
		return decimal.Decimal{}, false
	}
	return q.UpstreamUSD.Div(DecimalInt(q.Quantity)), true
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
func (sh *Shop) confirmScreen(env *flows.Env, q *flows.Quote) *flows.Screen {
	var b strings.Builder
	b.WriteString(env.T("confirm.title"))
	b.WriteString("\n\n")
	b.WriteString(env.T("confirm.line", "line", env.T("line."+q.Line)))
	b.WriteString("\n")
	b.WriteString(env.T("confirm.item", "item", locales.Escape(q.ItemName)))
	if q.For != "" {
		key := "confirm.for"
		fields := q.Line == "games" || q.Line == "services"
		if fields {
			key = "confirm.details" // the offer's fields, not a person
		}
		b.WriteString("\n")
		b.WriteString(env.T(key, "who", locales.Escape(q.For)))
		if fields {
			// The order goes to exactly what the buyer typed: a typo is
			// theirs to catch here, before they pay.
			b.WriteString("\n")
			b.WriteString(env.T("confirm.check_details"))
		}
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
	rows := [][]flows.Button{{{Text: env.T("btn.pay"), Action: actPay}}}
	if pr := sh.promoRow(env); pr != nil {
		rows = append(rows, pr)
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.edit"), Action: actEdit}}, NavRow(env))
	return &flows.Screen{Text: b.String(), Rows: rows}
}

// ShowConfirm renders the confirmation step from the stored quote.
func (sh *Shop) ShowConfirm(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	q, err := sh.Quotes.Load(ctx, s.Get(KeyQuote))
	if err != nil {
		if errors.Is(err, flows.ErrNoQuote) {
			return &flows.Screen{Text: env.T("quote.gone"), Rows: [][]flows.Button{{{Text: env.T("btn.retry"), Action: actRetry}}, NavRow(env)}}, nil
		}
		return nil, err
	}
	return sh.confirmScreen(env, q), nil
}

// Abandon voids the quote of the line's summary when the buyer cancels:
// the invoice already sent for it stays in the chat, and paying it is then
// refused at pre-checkout, as the buyer was told nothing was charged.
func (sh *Shop) Abandon(ctx context.Context, env *flows.Env, s *flows.Session) error {
	id := s.Get(KeyQuote)
	if id == "" {
		return nil
	}
	q, err := sh.Quotes.Load(ctx, id)
	switch {
	case errors.Is(err, flows.ErrNoQuote):
		return nil
	case err != nil:
		return err
	case q.UserID != env.User.ID || q.Cancelled:
		return nil
	}
	q.Cancelled = true
	return sh.Quotes.Save(ctx, q)
}

// Confirm handles the confirmation step's own buttons: Pay hands a live
// quote to checkout; an expired or lost quote is priced again and shown.
// Edit goes to editStep. It reports false for other actions.
func (sh *Shop) Confirm(ctx context.Context, env *flows.Env, f Pricer, s *flows.Session, ev flows.Event, editStep string) (*flows.Reply, bool, error) {
	if r, ok, err := sh.handlePromo(ctx, env, f, s, ev); ok {
		return r, true, err
	}
	if s.Step != StepConfirm || ev.Kind != flows.EvButton {
		return nil, false, nil
	}
	switch ev.Button.Action {
	case actPay:
		q, err := sh.Quotes.Load(ctx, s.Get(KeyQuote))
		if err != nil && !errors.Is(err, flows.ErrNoQuote) {
			return nil, true, err
		}
		if err != nil || q.Expired(env.Now) || q.UserID != env.User.ID {
			s.GoBack() // quote() goes to confirm again
			r, err := sh.Quote(ctx, env, f, s, flows.Notice{Text: env.T("quote.repriced")})
			return r, true, err
		}
		if !sh.Balance(ctx).Covers(q.UpstreamUSD) {
			s.GoBack()
			r, err := sh.Again(ctx, env, f, s, env.T("catalog.paused_quote"))
			return r, true, err
		}
		return &flows.Reply{Pay: q}, true, nil
	case actRetry:
		s.GoBack()
		r, err := sh.Quote(ctx, env, f, s)
		return r, true, err
	case actEdit:
		for s.Step != editStep && s.GoBack() {
		}
		s.Set(KeyFieldIndex, "") // the fields are asked again from the first
		s.Step = editStep
		r, err := sh.ShowStep(ctx, env, f, s)
		return r, true, err
	}
	return nil, false, nil
}
