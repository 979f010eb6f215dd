package webapp

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
)

// lineJSON is a product line on the page's first screen. A line the app
// does not sell yet (App false) is bought in the chat: ChatURL opens it.
type lineJSON struct {
	ID      string `json:"id"`
	Label   string `json:"label"`
	App     bool   `json:"app"`
	ChatURL string `json:"chat_url,omitempty"`
	// Category is the line's one category, which the page opens at once
	// (Stars, Premium, store top-ups).
	Category string `json:"category,omitempty"`
}

type langJSON struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// session is the page's first call: who the buyer is, their language and
// the shop's, the texts, the lines and how they pay.
func (a *App) session(q *request) (any, *apiError) {
	env := q.env
	var ls []lineJSON
	for _, l := range flows.Lines {
		j := lineJSON{ID: l.Name, Label: plain(env.T(l.Label)), App: lines.IsFormLine(l.Name)}
		if !j.App {
			j.ChatURL = a.chatURL(l.Name)
		}
		if lines.SingleCategory(l.Name) {
			j.Category = l.Name
		}
		ls = append(ls, j)
	}
	var langs []langJSON
	for _, l := range a.d.Engine.Langs {
		langs = append(langs, langJSON{string(l), locales.LanguageName(l)})
	}
	u := q.data.User
	return map[string]any{
		"user":      map[string]any{"id": u.ID, "first_name": u.FirstName},
		"lang":      string(env.Lang),
		"langs":     langs,
		"texts":     pageTexts(env),
		"lines":     ls,
		"pay":       map[string]bool{"stars": a.d.Payments != nil, "wallet": a.d.Wallet != nil, "promo": a.d.Shop.Promos != nil},
		"referrals": a.d.Referrals != nil,
		"support":   a.d.Support != nil,
		"start":     q.data.StartParam,
	}, nil
}

// chatURL is the link that opens line in the chat with the bot, or "" while
// the bot's name is unknown.
func (a *App) chatURL(line string) string {
	name := a.d.BotName()
	if name == "" {
		return ""
	}
	return "https://t.me/" + url.PathEscape(name) + "?start=" + url.QueryEscape(line)
}

// formLine reads the {line} of the path: a line the app sells.
func (q *request) formLine() (string, *apiError) {
	line := q.r.PathValue("line")
	if !lines.IsFormLine(line) {
		return "", errNotFound
	}
	return line, nil
}

// categoryJSON is one category of a line's list.
type categoryJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Group    string `json:"group,omitempty"` // the brand, for lines grouped by brand
	Region   string `json:"region,omitempty"`
	Platform string `json:"platform,omitempty"`
	Variant  string `json:"variant,omitempty"`
	Image    string `json:"image,omitempty"` // the page's address of its image (img/<key>), or none
	url      string // the upstream's image URL: never sent
}

// categories lists a line's categories (?q= searches, as the chat's search
// does; game keys also take ?region= and ?platform=).
func (a *App) categories(q *request) (any, *apiError) {
	line, e := q.formLine()
	if e != nil {
		return nil, e
	}
	ctx, env, cat := q.r.Context(), q.env, a.d.Shop.Catalog
	query := strings.TrimSpace(q.r.URL.Query().Get("q"))
	if utf8.RuneCountInString(query) > shop.MaxQuery {
		return nil, fail(http.StatusBadRequest, "bad_query", env, "search.bad")
	}
	region, platform := q.r.URL.Query().Get("region"), q.r.URL.Query().Get("platform")
	if query != "" && line != "services" && line != "gifts" {
		// A search text may cost an upstream call: the chat's limit
		// applies, as to a search typed in the chat.
		if err := a.d.Shop.Allow(ctx, env); err != nil {
			return nil, a.catalogError(q, err)
		}
	}
	var out []categoryJSON
	var stale bool
	var err error
	brands := func(bs []flows.Brand, st bool, e error) {
		stale, err = st, e
		for _, b := range bs {
			for _, c := range b.Categories {
				out = append(out, categoryJSON{ID: c.ID, Name: cmpOr(c.Name, b.Name), Group: b.Name, Region: c.Region, Variant: c.Variant, url: c.Image})
			}
		}
	}
	found := func(cs []flows.Category, st bool, e error) {
		stale, err = st, e
		for _, c := range cs {
			out = append(out, categoryJSON{ID: c.ID, Name: c.Name, Region: c.Region, Platform: c.Platform, Variant: c.Variant, url: c.Image})
		}
	}
	filters := map[string][]string{}
	switch {
	case line == "giftcards" && query != "":
		found(cat.GiftCardSearch(ctx, query))
	case line == "giftcards":
		brands(cat.GiftCardBrands(ctx))
	case line == "games" && query != "":
		found(cat.TopUpSearch(ctx, query))
	case line == "games":
		brands(cat.TopUpBrands(ctx))
	case line == "keys":
		found(cat.GameKeys(ctx, query, region, platform))
		if err == nil {
			// The filters offer what the whole key catalog has, as the
			// chat's do.
			all, _, ferr := cat.GameKeys(ctx, "", "", "")
			if ferr == nil {
				for _, g := range all {
					addOnce(filters, "regions", g.Region)
					addOnce(filters, "platforms", g.Platform)
				}
				slices.Sort(filters["regions"])
				slices.Sort(filters["platforms"])
			}
		}
	case line != "services": // Stars, Premium, top-ups, store gifts
		found(lines.Categories(ctx, a.d.Shop, env, line, query))
	default: // services: a short list, searched here
		var all []flows.Category
		all, stale, err = cat.ManualServices(ctx)
		for _, c := range all {
			if query == "" || strings.Contains(strings.ToLower(c.Name), strings.ToLower(query)) {
				out = append(out, categoryJSON{ID: c.ID, Name: c.Name, url: c.Image})
			}
		}
	}
	if err != nil {
		return nil, a.catalogError(q, err)
	}
	if out == nil {
		out = []categoryJSON{}
	}
	out, page, more := pageOf(q, out, categoriesPage)
	urls := make([]string, len(out))
	for i, c := range out {
		urls[i] = c.url
	}
	for i, p := range a.imagePaths(ctx, urls) {
		out[i].Image = p
	}
	return map[string]any{"line": line, "categories": out, "filters": filters, "stale": stale, "page": page, "more": more}, nil
}

// One page of a line's categories, of a category's items.
const (
	categoriesPage = 60
	itemsPage      = 50
)

// pageOf is page ?page= (from 0) of all, per to a page, and whether more
// follow.
func pageOf[T any](q *request, all []T, per int) ([]T, int, bool) {
	page, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	pages := max(1, (len(all)+per-1)/per)
	page = min(max(page, 0), pages-1)
	return all[page*per : min(len(all), (page+1)*per)], page, page < pages-1
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func addOnce(m map[string][]string, key, v string) {
	if v != "" && !slices.Contains(m[key], v) {
		m[key] = append(m[key], v)
	}
}

// catalogError answers a failed catalog read or a refused action as the
// chat does: not found, rate limited, or the catalog unavailable.
func (a *App) catalogError(q *request, err error) *apiError {
	var rl *shop.RateLimited
	switch {
	case errors.As(err, &rl):
		return rateLimited(q.env, rl.Wait)
	case errors.Is(err, flows.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", q.env, "catalog.not_found")
	case errors.Is(err, lines.ErrNotFormLine):
		return errNotFound
	}
	a.log.Warn("mini app: catalog", "user", q.env.User.ID, "path", q.r.URL.Path, "err", err)
	return fail(http.StatusServiceUnavailable, "unavailable", q.env, "catalog.unavailable")
}

// price is an amount as the page shows it: in Stars and USD, raw and in
// the buyer's language.
type price struct {
	USD       string `json:"usd"`
	Stars     int64  `json:"stars"`
	USDText   string `json:"usd_text"`
	StarsText string `json:"stars_text"`
}

func priceOf(env *flows.Env, usd decimal.Decimal, stars int64) *price {
	return &price{USD: usd.StringFixed(2), Stars: stars, USDText: locales.Money(env.Lang, usd), StarsText: locales.Stars(env.Lang, stars)}
}

// itemJSON is one item of a category: its shop price per unit (none when
// it cannot be sold now), and whether it is sold out or paused (the
// upstream balance cannot pay for it now).
type itemJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Price    *price `json:"price,omitempty"`
	SoldOut  bool   `json:"sold_out,omitempty"`
	Paused   bool   `json:"paused,omitempty"`
	Min      int    `json:"min,omitempty"` // lines sold by the unit: the quantity's bounds
	Max      int    `json:"max,omitempty"`
	Note     string `json:"note,omitempty"`
	Delivery string `json:"delivery,omitempty"` // manual services: the expected delivery
}

// fieldJSON is one buyer field of a category.
type fieldJSON struct {
	Key     string   `json:"key"`
	Label   string   `json:"label"`
	Kind    string   `json:"kind"`
	Options []string `json:"options,omitempty"`
	Secret  bool     `json:"secret,omitempty"`
}

// offers is a category's page: its items with prices and marks, and the
// fields an order needs.
func (a *App) offers(q *request) (any, *apiError) {
	line, e := q.formLine()
	if e != nil {
		return nil, e
	}
	ctx, env, sh := q.r.Context(), q.env, a.d.Shop
	offers, stale, err := lines.Offers(ctx, sh, env, line, q.r.PathValue("category"))
	if err != nil {
		return nil, a.catalogError(q, err)
	}
	balance := sh.Balance(ctx)
	byUnit := lines.ByUnit(line)
	items := make([]itemJSON, 0, len(offers.Offers))
	for i := range offers.Offers {
		o := &offers.Offers[i]
		it := itemJSON{ID: o.ID, Name: o.Name}
		switch {
		case o.Note != "" && lines.ShopNotes(line):
			it.Note = plain(o.Note)
		case o.Note != "":
			it.Note = plain(shop.Note(env, o.Note, shop.MaxNameLen))
		}
		if o.DeliveryMinutes != nil {
			it.Delivery = plain(env.N("svc.delivery", int64(*o.DeliveryMinutes)))
		}
		least := 1
		if byUnit {
			least = lines.MinQuantity(o)
			it.SoldOut = lines.SoldOut(line, o)
			it.Min = least
			it.Max = balance.Affordable(o.PriceUSD, min(o.MaxQuantity, o.Stock, 100))
		}
		it.Paused = !balance.Covers(o.PriceUSD.Mul(decimal.NewFromInt(int64(least))))
		if !it.Paused && !lines.PricedByAnswer(line) {
			usd := sh.Pricing.ShopUSD(line, o.PriceUSD)
			it.Price = priceOf(env, usd, sh.Pricing.Stars(usd))
		}
		items = append(items, it)
	}
	fields := []fieldJSON{}
	for _, f := range lines.Fields(offers) {
		fields = append(fields, fieldJSON{Key: f.Key, Label: f.Label, Kind: f.Kind, Options: f.Options, Secret: f.Secret})
	}
	note := ""
	if offers.Note != "" {
		note = plain(shop.Note(env, offers.Note, shop.MaxNoteLen))
	}
	items, page, more := pageOf(q, items, itemsPage)
	return map[string]any{
		"line": line, "by_unit": byUnit, "stale": stale, "page": page, "more": more,
		"category": map[string]any{"id": offers.CategoryID, "name": offers.Name, "note": note, "image": a.imagePaths(ctx, []string{offers.Image})[0],
			"region": offers.Region, "platform": offers.Platform, "restricted": offers.Restricted},
		"items": items, "fields": fields,
	}, nil
}

// checkBody is a field answer to check before the order is sent.
type checkBody struct {
	Line     string `json:"line"`
	Category string `json:"category"`
	Field    string `json:"field"`
	Value    string `json:"value"`
}

// check checks one answer with the chat's check of that field: the value
// as it will be kept, or why it is refused.
func (a *App) check(q *request) (any, *apiError) {
	var b checkBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if !lines.IsFormLine(b.Line) {
		return nil, badRequest(q.env, "unknown line")
	}
	offers, _, err := lines.Offers(q.r.Context(), a.d.Shop, q.env, b.Line, b.Category)
	if err != nil {
		return nil, a.catalogError(q, err)
	}
	for _, f := range lines.Fields(offers) {
		if f.Key != b.Field {
			continue
		}
		v, reason := lines.CheckField(q.env, f, b.Value)
		if reason != "" {
			return map[string]any{"ok": false, "field": f.Key, "reason": plain(reason)}, nil
		}
		if f.Secret {
			v = "" // never sent back
		}
		return map[string]any{"ok": true, "field": f.Key, "value": v}, nil
	}
	return nil, badRequest(q.env, "the category has no field "+strconvQuote(b.Field))
}

func strconvQuote(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}
