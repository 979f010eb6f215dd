package lines

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/locales"
)

// The four lines the chat asks in steps of their own (Telegram Stars,
// Telegram Premium, store wallet top-ups, store gifts) as a form orders
// from them: shaped like the catalog lines (a category, its items, the
// fields), built from the chat's own catalog reads, checked by the chat's
// own checks (the field kinds kindUsername, kindLogin, kindAmount and
// kindInvite, qtyReason, plan, refillReason, amountReason, edition) and
// quoted by the line's own Price, from a session holding exactly what the
// chat's steps keep there. Nothing is priced here.
//
//   - stars: one category ("stars"); its items are the quick quantities
//     (the item's id is the number of Stars; any number within the bounds
//     is taken); the field is the recipient's @username.
//   - premium: one category ("premium"); the items are the plans (id: the
//     months); the field is the recipient.
//   - topup: one category ("topup"); the items are the currencies, with no
//     price until the amount is given (PricedByAnswer); the fields are the
//     store login (checked with the upstream when quoted) and the amount.
//   - gifts: the categories are the store's top games (id: the app id;
//     any app id is taken); the items are an edition in a price region
//     (id: "<edition>|<region>"); the field is the friend-invite link.

// appLine is one of those four lines as a form sees it.
type appLine interface {
	formCategories(ctx context.Context, env *flows.Env, query string) ([]flows.Category, bool, error)
	formOffers(ctx context.Context, env *flows.Env, category string) (*flows.Offers, bool, error)
	formQuote(ctx context.Context, env *flows.Env, o Order) (*flows.Quote, bool, error)
}

func appLineOf(sh *shop.Shop, line string) appLine {
	switch line {
	case "stars":
		return &Stars{sh}
	case "premium":
		return &Premium{sh}
	case "topup":
		return &Topup{sh}
	case "gifts":
		return &Gifts{sh}
	}
	return nil
}

// SingleCategory reports whether line has one category only, named as the
// line: the form opens it at once.
func SingleCategory(line string) bool { return line == "stars" || line == "premium" || line == "topup" }

// ShopNotes reports whether the notes of line's offers are the shop's own
// texts (Telegram HTML in the buyer's language), not the upstream's.
func ShopNotes(line string) bool { return appLineOf(nil, line) != nil }

// PricedByAnswer reports whether line's items have no price until the
// buyer answers (a store top-up's amount): an item's PriceUSD is then the
// least an order of it costs upstream.
func PricedByAnswer(line string) bool { return line == "topup" }

// Categories lists the categories of one of the four lines above (query
// searches the store gifts' games; a number opens that app id).
func Categories(ctx context.Context, sh *shop.Shop, env *flows.Env, line, query string) ([]flows.Category, bool, error) {
	a := appLineOf(sh, line)
	if a == nil {
		return nil, false, ErrNotFormLine
	}
	return a.formCategories(ctx, env, query)
}

// single is the one category of a single-category line.
func single(env *flows.Env, line string) []flows.Category {
	return []flows.Category{{ID: line, Name: plainLabel(env.T("line." + line))}}
}

// plainLabel drops the tags of a short Telegram HTML label.
func plainLabel(s string) string {
	for {
		i := strings.IndexByte(s, '<')
		j := strings.IndexByte(s, '>')
		if i < 0 || j < i {
			return s
		}
		s = s[:i] + s[j+1:]
	}
}

// usernameField is the recipient field of Stars and Premium.
func usernameField(env *flows.Env) flows.Field {
	return flows.Field{Key: "username", Label: env.T("form.username"), Type: kindUsername}
}

// formAnswer checks the answer to field key of offers with the chat's
// check of its kind.
func formAnswer(env *flows.Env, offers *flows.Offers, key string, answers map[string]string) (string, error) {
	for _, f := range offerFields(offers) {
		if f.Key == key {
			v, reason := checkField(env, f, answers[key])
			if reason != "" {
				return "", &OrderError{Field: key, Reason: reason}
			}
			return v, nil
		}
	}
	return "", flows.NotFound("no field " + key)
}

// --- Telegram Stars

func (f *Stars) formCategories(_ context.Context, env *flows.Env, _ string) ([]flows.Category, bool, error) {
	return single(env, "stars"), false, nil
}

func (f *Stars) formOffers(ctx context.Context, env *flows.Env, category string) (*flows.Offers, bool, error) {
	if category != "stars" {
		return nil, false, flows.NotFound("stars category")
	}
	p, stale, err := f.Catalog.StarsPricing(ctx)
	if err != nil {
		return nil, false, err
	}
	lo, hi := f.bounds(ctx)
	out := &flows.Offers{CategoryID: "stars", Name: plainLabel(env.T("line.stars")), Fields: []flows.Field{usernameField(env)}}
	for _, n := range starsQuick {
		if n >= lo && n <= hi {
			out.Offers = append(out.Offers, flows.Offer{ID: strconv.Itoa(n), Name: locales.N(env.Lang, "count.stars", int64(n)), PriceUSD: p.PricePerStar.Mul(shop.DecimalInt(n))})
		}
	}
	return out, stale, nil
}

func (f *Stars) formQuote(ctx context.Context, env *flows.Env, o Order) (*flows.Quote, bool, error) {
	offers, _, err := f.formOffers(ctx, env, o.Category)
	if err != nil {
		return nil, false, err
	}
	n, ok := shop.ParseQuantity(o.Item)
	if reason := f.qtyReason(ctx, env, n, ok); reason != "" {
		return nil, false, &OrderError{Field: QuantityField, Reason: reason}
	}
	user, err := formAnswer(env, offers, "username", o.Fields)
	if err != nil {
		return nil, false, err
	}
	s := &flows.Session{}
	s.Set(keyUser, user)
	s.SetInt(keyQty, int64(n))
	return f.Price(ctx, env, s)
}

// --- Telegram Premium

func (f *Premium) formCategories(_ context.Context, env *flows.Env, _ string) ([]flows.Category, bool, error) {
	return single(env, "premium"), false, nil
}

func (f *Premium) formOffers(ctx context.Context, env *flows.Env, category string) (*flows.Offers, bool, error) {
	if category != "premium" {
		return nil, false, flows.NotFound("premium category")
	}
	plans, stale, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: "premium", Name: plainLabel(env.T("line.premium")), Fields: []flows.Field{usernameField(env)}}
	for _, pl := range plans {
		out.Offers = append(out.Offers, flows.Offer{ID: strconv.Itoa(pl.Months), Name: env.N("count.months", int64(pl.Months)), PriceUSD: pl.PriceUSD})
	}
	return out, stale, nil
}

func (f *Premium) formQuote(ctx context.Context, env *flows.Env, o Order) (*flows.Quote, bool, error) {
	offers, _, err := f.formOffers(ctx, env, o.Category)
	if err != nil {
		return nil, false, err
	}
	if _, err := f.plan(ctx, o.Item); err != nil {
		return nil, false, err
	}
	user, err := formAnswer(env, offers, "username", o.Fields)
	if err != nil {
		return nil, false, err
	}
	s := &flows.Session{}
	s.Set(keyUser, user)
	s.Set(keyMonths, o.Item)
	return f.Price(ctx, env, s)
}

// --- store wallet top-ups

func (f *Topup) formCategories(_ context.Context, env *flows.Env, _ string) ([]flows.Category, bool, error) {
	return single(env, "topup"), false, nil
}

// currencies are the top-up currencies in the chat's order: USD, then the
// others sorted.
func currencies(rates *flows.StoreRates) []string {
	curs := []string{flows.USD}
	for c := range rates.Rates {
		if c != flows.USD {
			curs = append(curs, c)
		}
	}
	slices.Sort(curs[1:])
	return curs
}

func (f *Topup) formOffers(ctx context.Context, env *flows.Env, category string) (*flows.Offers, bool, error) {
	if category != "topup" {
		return nil, false, flows.NotFound("topup category")
	}
	rates, stale, err := f.Catalog.StoreRates(ctx)
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: "topup", Name: plainLabel(env.T("line.topup")), Fields: []flows.Field{
		{Key: "store_login", Label: env.T("form.store_login"), Type: kindLogin},
		{Key: "amount", Label: env.T("form.amount"), Type: kindAmount},
	}}
	for _, cur := range currencies(rates) {
		lo, err := f.minimum(rates, cur)
		if err != nil {
			continue // a currency without a minimum is not offered
		}
		rate := decimal.NewFromInt(1)
		if cur != flows.USD {
			rate = rates.Rates[cur]
			if !rate.IsPositive() {
				continue
			}
		}
		out.Offers = append(out.Offers, flows.Offer{ID: cur, Name: cur, PriceUSD: lo.DivRound(rate, 4),
			Note: env.T("topup.below_min", "min", locales.Decimal(env.Lang, lo, 2)+"\u00a0"+cur)})
	}
	return out, stale, nil
}

func (f *Topup) formQuote(ctx context.Context, env *flows.Env, o Order) (*flows.Quote, bool, error) {
	offers, _, err := f.formOffers(ctx, env, o.Category)
	if err != nil {
		return nil, false, err
	}
	if _, ok := offers.Offer(o.Item); !ok {
		return nil, false, flows.NotFound("currency")
	}
	login, err := formAnswer(env, offers, "store_login", o.Fields)
	if err != nil {
		return nil, false, err
	}
	amount, err := formAnswer(env, offers, "amount", o.Fields)
	if err != nil {
		return nil, false, err
	}
	rates, _, err := f.Catalog.StoreRates(ctx)
	if err != nil {
		return nil, false, err
	}
	if reason := f.amountReason(env, rates, o.Item, decimal.RequireFromString(amount)); reason != "" {
		return nil, false, &OrderError{Field: "amount", Reason: reason}
	}
	// The upstream's word on the login, as the chat asks it (the form's
	// quote has counted the buyer's rate limit).
	if reason := f.refillReason(ctx, env, login); reason != "" {
		return nil, false, &OrderError{Field: "store_login", Reason: reason}
	}
	s := &flows.Session{}
	s.Set(keyLogin, login)
	s.Set(keyCurrency, o.Item)
	s.Set(keyAmount, amount)
	q, stale, err := f.Price(ctx, env, s)
	var bad *shop.BadInput
	if errors.As(err, &bad) {
		return nil, false, &OrderError{Field: "amount", Reason: bad.Text}
	}
	return q, stale, err
}

// --- store gifts

func (f *Gifts) formCategories(ctx context.Context, env *flows.Env, query string) ([]flows.Category, bool, error) {
	if app, err := strconv.ParseInt(query, 10, 64); err == nil && app > 0 {
		// An app id opens that game, in the top list or not, as in the chat.
		return []flows.Category{{ID: query, Name: cmpOr(f.appName(ctx, app), "App "+query)}}, false, nil
	}
	games, stale, err := f.Catalog.StoreGames(ctx)
	if err != nil {
		return nil, false, err
	}
	q := strings.ToLower(query)
	var out []flows.Category
	for _, g := range games {
		if q == "" || strings.Contains(strings.ToLower(g.Name), q) {
			out = append(out, g)
		}
	}
	return out, stale, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// giftItem is the id of an edition in a price region.
func giftItem(edition, region string) string { return edition + "|" + region }

func (f *Gifts) formOffers(ctx context.Context, env *flows.Env, category string) (*flows.Offers, bool, error) {
	app, err := strconv.ParseInt(category, 10, 64)
	if err != nil || app <= 0 {
		return nil, false, flows.NotFound("app id")
	}
	editions, stale, err := f.Catalog.StoreGiftEditions(ctx, app)
	if errors.Is(err, flows.ErrInvalid) {
		err = flows.NotFound("app")
	}
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: category, Name: cmpOr(f.appName(ctx, app), "App "+category), Fields: []flows.Field{
		{Key: "invite_url", Label: env.T("form.invite"), Type: kindInvite},
	}}
	for _, ed := range editions {
		for _, r := range ed.Regions {
			out.Offers = append(out.Offers, flows.Offer{ID: giftItem(ed.ID, r.Region), Name: ed.Name + " (" + r.Region + ")", PriceUSD: r.PriceUSD})
		}
	}
	return out, stale, nil
}

func (f *Gifts) formQuote(ctx context.Context, env *flows.Env, o Order) (*flows.Quote, bool, error) {
	offers, _, err := f.formOffers(ctx, env, o.Category)
	if err != nil {
		return nil, false, err
	}
	if _, ok := offers.Offer(o.Item); !ok {
		return nil, false, flows.NotFound("edition gone")
	}
	edition, region, _ := strings.Cut(o.Item, "|")
	invite, err := formAnswer(env, offers, "invite_url", o.Fields)
	if err != nil {
		return nil, false, err
	}
	app, _ := strconv.ParseInt(o.Category, 10, 64)
	s := &flows.Session{}
	s.Set(keyApp, o.Category)
	s.Set(keyAppName, f.appName(ctx, app))
	s.Set(keyEdition, edition)
	s.Set(keyRegion, region)
	s.Set(keyInvite, invite)
	return f.Price(ctx, env, s)
}
