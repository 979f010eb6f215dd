package shop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// The inline mode's search: what someone typing @<bot> <text> in any chat
// sees. The products (a gift-card or top-up category, a game with keys, a
// store game, a manual service) come from the same catalog the lines
// browse, across the lines, in menu order; an empty text lists the
// catalog from its start. Each card carries the product's deep link, its
// image and its lowest price, one page of InlinePage cards at a time.

// InlinePage is how many cards one answer holds: each needs its product's
// offers for the price.
const InlinePage = 10

// maxInlineOffset bounds the offset a client may send back, so a forged
// one cannot make the shop walk far.
const maxInlineOffset = 500

// product is one product found, before its price is known.
type product struct {
	line, link, name, image string
	region, platform        string
	id                      string // the catalog's id of the category, game or service
}

// Inline answers an inline query (flows.Engine.HandleInline): one page of
// cards from Offset, counted against the user's inline rate limit.
func (sh *Shop) Inline(ctx context.Context, env *flows.Env, q flows.InlineQuery) (*flows.InlineAnswer, error) {
	text := strings.TrimSpace(q.Text)
	if len(text) > MaxQuery {
		return &flows.InlineAnswer{}, nil
	}
	from, err := strconv.Atoi(q.Offset)
	if q.Offset == "" {
		from, err = 0, nil
	}
	if err != nil || from < 0 || from > maxInlineOffset {
		return &flows.InlineAnswer{}, nil // not an offset of ours
	}
	if sh.InlineLimiter != nil {
		ok, wait, err := sh.InlineLimiter.Allow(ctx, "i:"+strconv.FormatInt(env.User.ID, 10))
		if err != nil {
			return nil, err
		}
		if !ok {
			return &flows.InlineAnswer{Limited: true, Wait: wait}, nil
		}
	}
	found, err := sh.find(ctx, strings.ToLower(text))
	if len(found) == 0 {
		return &flows.InlineAnswer{}, err
	}
	a := &flows.InlineAnswer{}
	end := min(from+InlinePage, len(found))
	if end < len(found) && end <= maxInlineOffset {
		a.Next = strconv.Itoa(end)
	}
	for _, p := range found[min(from, len(found)):end] {
		if c, ok := sh.card(ctx, env, p); ok {
			a.Cards = append(a.Cards, c)
		}
	}
	return a, nil
}

// find lists the products matching q (lowercased; "" for all), each once.
// A line whose catalog fails is left out; the error is returned only when
// nothing was found.
func (sh *Shop) find(ctx context.Context, q string) ([]product, error) {
	var out []product
	var errs []error
	seen := map[string]bool{}
	add := func(line string) func([]entry, error) {
		return func(cats []entry, err error) {
			if err != nil {
				errs = append(errs, err)
				return
			}
			for _, c := range cats {
				link := flows.ProductLink(line, c.ID)
				if seen[link] || q != "" && !strings.Contains(strings.ToLower(c.Name), q) && !c.searched {
					continue
				}
				seen[link] = true
				out = append(out, product{line: line, link: link, name: c.Name, image: c.Image, id: c.ID, region: c.Region, platform: c.Platform})
			}
		}
	}
	cat := sh.Catalog
	if q == "" {
		add("giftcards")(brandCats(cat.GiftCardBrands(ctx)))
	} else {
		add("giftcards")(searched(cat.GiftCardSearch(ctx, q)))
	}
	add("keys")(searched(cat.GameKeys(ctx, q, "", "")))
	add("gifts")(plain(cat.StoreGames(ctx)))
	if q == "" {
		add("games")(brandCats(cat.TopUpBrands(ctx)))
	} else {
		add("games")(searched(cat.TopUpSearch(ctx, q)))
	}
	add("services")(plain(cat.ManualServices(ctx)))
	if len(out) > 0 {
		return out, nil
	}
	return nil, errors.Join(errs...)
}

// entry is a catalog entry as the inline search takes it: searched says
// the catalog's own search found it (its name need not hold the text).
type entry struct {
	flows.Category
	searched bool
}

func plain(cats []flows.Category, _ bool, err error) ([]entry, error) {
	out := make([]entry, len(cats))
	for i, c := range cats {
		out[i] = entry{Category: c}
	}
	return out, err
}

func searched(cats []flows.Category, stale bool, err error) ([]entry, error) {
	out, err := plain(cats, stale, err)
	for i := range out {
		out[i].searched = true
	}
	return out, err
}

// brandCats are the brands' categories, each named after its brand when
// the catalog gives it no name of its own.
func brandCats(brands []flows.Brand, stale bool, err error) ([]entry, error) {
	var cats []flows.Category
	for _, b := range brands {
		for _, c := range b.Categories {
			if c.Name == "" {
				c.Name = b.Name
			}
			cats = append(cats, c)
		}
	}
	return plain(cats, stale, err)
}

// title is a product's name with what tells its kind apart: the region
// and platform of a game's keys or a category.
func title(p product) string {
	t := ClipName(p.name)
	for _, x := range []string{p.region, p.platform} {
		if x != "" && !strings.Contains(t, x) {
			t += " · " + x
		}
	}
	return t
}

// card is the product's card with its lowest price now on sale; ok is
// false for a product with nothing to sell (gone, sold out).
func (sh *Shop) card(ctx context.Context, env *flows.Env, p product) (flows.Card, bool) {
	low, ok := sh.lowest(ctx, p)
	if !ok {
		return flows.Card{}, false
	}
	name := title(p)
	line := env.T("line." + p.line)
	price := env.T("inline.from", "price", sh.Pricing.Price(env.Lang, p.line, low))
	return flows.Card{
		ID: cardID(p.link), Link: p.link, Title: name, Description: line + " · " + price, Image: p.image,
		Text: env.T("inline.card", "name", locales.Escape(name), "line", line, "price", price),
	}, true
}

// lowest is the lowest upstream price of what the product sells now.
func (sh *Shop) lowest(ctx context.Context, p product) (decimal.Decimal, bool) {
	var prices []decimal.Decimal
	if p.line == "gifts" {
		app, err := strconv.ParseInt(p.id, 10, 64)
		if err != nil {
			return decimal.Decimal{}, false
		}
		eds, _, err := sh.Catalog.StoreGiftEditions(ctx, app)
		if err != nil {
			return decimal.Decimal{}, false
		}
		for _, e := range eds {
			for _, r := range e.Regions {
				prices = append(prices, r.PriceUSD)
			}
		}
	} else {
		load := map[string]Loader{
			"giftcards": sh.Catalog.GiftCardOffers, "keys": sh.Catalog.GameKeyOffers,
			"games": sh.Catalog.TopUpOffers, "services": sh.Catalog.ManualServiceOffers,
		}[p.line]
		offers, _, err := load(ctx, p.id)
		if err != nil {
			return decimal.Decimal{}, false
		}
		units := p.line == "giftcards" || p.line == "keys" // sold by the unit, from stock
		for _, o := range offers.Offers {
			if !units || o.Stock >= max(o.MinQuantity, 1) {
				prices = append(prices, o.PriceUSD)
			}
		}
	}
	var low decimal.Decimal
	found := false
	for _, pr := range prices {
		if pr.IsPositive() && pr.LessThanOrEqual(maxUpstreamUSD) && (!found || pr.LessThan(low)) {
			low, found = pr, true
		}
	}
	return low, found
}

// cardID is a result id of at most 64 bytes: the link, or its hash when
// longer.
func cardID(link string) string {
	if len(link) <= 64 {
		return link
	}
	h := sha256.Sum256([]byte(link))
	return hex.EncodeToString(h[:16])
}

// Found is one product of SearchAll: its line and category (the category,
// game or service id a deep link names), its name with its region and
// platform, and its lowest upstream price now on sale.
type Found struct {
	Line, Category, Link, Name string
	Image                      string // the catalog's image URL, or ""
	LowestUSD                  decimal.Decimal
}

// SearchAll is the inline mode's search across the lines for a form (the
// Mini App): the products matching text (lowercased; "" for all) from
// offset from, at most per of them with something on sale, and the
// offset of the next page (-1: none). The caller counts the buyer's rate
// limit (a search may cost upstream calls).
func (sh *Shop) SearchAll(ctx context.Context, text string, from, per int) ([]Found, int, error) {
	found, err := sh.find(ctx, strings.ToLower(strings.TrimSpace(text)))
	if len(found) == 0 {
		return nil, -1, err
	}
	from = min(max(from, 0), len(found))
	var out []Found
	i := from
	for ; i < len(found) && len(out) < per; i++ {
		p := found[i]
		if low, ok := sh.lowest(ctx, p); ok {
			out = append(out, Found{Line: p.line, Category: p.id, Link: p.link, Name: title(p), Image: p.image, LowestUSD: low})
		}
	}
	next := -1
	if i < len(found) {
		next = i
	}
	return out, next, nil
}
