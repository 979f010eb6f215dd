// Package catalog implements the flows' ports over the upstream and the
// store: the typed, cached view of the upstream catalog that the
// product-line flows browse (reseller client calls behind the Redis catalog
// cache, work.Cache, so a thousand buyers browsing one category cost one
// upstream request per cache period, turned into flows' own types), the
// upstream balance, and the quote store. It is the one place where flows'
// types meet the reseller's and the store's.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state"
)

// Default cache periods (the upstream spec's cache times).
const (
	TopGamesTTL = 10 * time.Minute // the store-gift top-games list
	EditionsTTL = 30 * time.Minute // a store game's gift editions
	// BalanceTTL is how long the upstream balance is trusted for pausing
	// items buyers browse; the pre-checkout check always asks afresh.
	BalanceTTL = 30 * time.Second
)

// UpstreamBalance returns the reseller's upstream balance, cached for
// BalanceTTL, so buyers never browse into an item it cannot pay for.
func (c *Cached) UpstreamBalance(ctx context.Context) (decimal.Decimal, error) {
	s, _, err := get(ctx, c, "acct:balance", BalanceTTL, func(ctx context.Context) (string, error) {
		a, err := c.Client.Me(ctx)
		if err != nil {
			return "", err
		}
		return a.BalanceUSD.String(), nil
	})
	if err != nil {
		return decimal.Zero, err
	}
	return decimal.NewFromString(s)
}

// Cached implements flows.Catalog and flows.Funds over the reseller client
// and the cache.
type Cached struct {
	Client *reseller.Client
	Cache  *work.Cache   // nil: every call asks the upstream
	TTL    time.Duration // everything without its own period (Config.CatalogTTL)
}

// New returns the cached catalog; ttl is the default cache period. A nil
// cache makes every call ask the upstream (tests without a store).
func New(c *reseller.Client, cache *work.Cache, ttl time.Duration) *Cached {
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	return &Cached{Client: c, Cache: cache, TTL: ttl}
}

// get reads key from the cache (for ttl, or the default period when 0),
// fetching it on a miss, and reports whether the copy is stale. An upstream
// error says, in flows' terms, whether the item is unknown or the request
// refused.
func get[T any](ctx context.Context, c *Cached, key string, ttl time.Duration, fetch func(ctx context.Context) (T, error)) (T, bool, error) {
	if ttl <= 0 {
		ttl = c.TTL
	}
	var v T
	var stale bool
	var err error
	if c.Cache == nil {
		v, err = fetch(ctx)
	} else {
		v, stale, err = work.GetJSON(ctx, c.Cache, key, work.CacheOptions{TTL: ttl}, fetch)
	}
	return v, stale, flowsError(err)
}

// list reads an upstream list through the cache (the entries are cached as
// the upstream sends them) and converts each entry with conv.
func list[T, U any](ctx context.Context, c *Cached, key string, ttl time.Duration, fetch func(ctx context.Context) (*reseller.List[T], error), conv func(T) U) ([]U, bool, error) {
	l, stale, err := get(ctx, c, key, ttl, func(ctx context.Context) ([]T, error) {
		l, err := fetch(ctx)
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
	out := make([]U, 0, len(l))
	for _, x := range l {
		out = append(out, conv(x))
	}
	return out, stale, err
}

// flowsError wraps an upstream error with the flows' kind of it.
func flowsError(err error) error {
	switch {
	case err == nil:
		return nil
	case reseller.IsNotFound(err):
		return fmt.Errorf("%w: %w", flows.ErrNotFound, err)
	case reseller.IsInvalidRequest(err):
		return fmt.Errorf("%w: %w", flows.ErrInvalid, err)
	}
	return err
}

// queryKey normalizes a search text for a cache key.
func queryKey(q string) string { return strings.ToLower(strings.TrimSpace(q)) }

// GiftCardBrands returns every gift-card brand with its regional categories.
func (c *Cached) GiftCardBrands(ctx context.Context) ([]flows.Brand, bool, error) {
	return list(ctx, c, "gc:brands", 0, func(ctx context.Context) (*reseller.List[reseller.GiftCardBrand], error) {
		return c.Client.GiftCardBrands(ctx, nil)
	}, func(b reseller.GiftCardBrand) flows.Brand {
		fb := flows.Brand{Name: b.Brand}
		for _, sub := range b.Subcategories {
			fb.Categories = append(fb.Categories, flows.Category{ID: sub.CategoryID, Region: sub.Region, Image: sub.Image})
		}
		return fb
	})
}

// GiftCardSearch returns the gift-card categories matching q.
func (c *Cached) GiftCardSearch(ctx context.Context, q string) ([]flows.Category, bool, error) {
	q = queryKey(q)
	return list(ctx, c, "gc:q:"+q, 0, func(ctx context.Context) (*reseller.List[reseller.GiftCategory], error) {
		return c.Client.GiftCardCategories(ctx, &reseller.GiftCardCategoriesOptions{Q: q})
	}, func(x reseller.GiftCategory) flows.Category {
		return flows.Category{ID: x.CategoryID, Name: x.Name, Image: x.Image}
	})
}

// GiftCardOffers returns a category's visible cards.
func (c *Cached) GiftCardOffers(ctx context.Context, categoryID string) (*flows.Offers, bool, error) {
	o, stale, err := get(ctx, c, "gc:cat:"+categoryID, 0, func(ctx context.Context) (*reseller.GiftCardOffers, error) {
		return c.Client.GiftCardOffers(ctx, categoryID)
	})
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: o.CategoryID, Name: o.Name, Image: o.Image}
	for _, x := range o.Offers {
		out.Offers = append(out.Offers, unitOffer(x.CardID, x.Name, x.PriceUSD, x.Stock, x.MinQuantity, x.MaxQuantity))
	}
	return out, stale, nil
}

// StarsPricing returns the price of one Star and the quantity bounds.
func (c *Cached) StarsPricing(ctx context.Context) (*flows.StarsPricing, bool, error) {
	p, stale, err := get(ctx, c, "stars", 0, c.Client.StarsPricing)
	if err != nil {
		return nil, false, err
	}
	return &flows.StarsPricing{PricePerStar: p.PricePerStar.Decimal, Min: p.Min, Max: p.Max}, stale, nil
}

// PremiumPlans returns the Premium plans.
func (c *Cached) PremiumPlans(ctx context.Context) ([]flows.PremiumPlan, bool, error) {
	p, stale, err := get(ctx, c, "premium", 0, c.Client.PremiumPricing)
	if err != nil {
		return nil, false, err
	}
	out := make([]flows.PremiumPlan, 0, len(p.Plans))
	for _, pl := range p.Plans {
		out = append(out, flows.PremiumPlan{Months: pl.Months, PriceUSD: pl.PriceUSD.Decimal})
	}
	return out, stale, nil
}

// GameKeys returns the key catalog matching q, region and platform ("" for any).
func (c *Cached) GameKeys(ctx context.Context, q, region, platform string) ([]flows.Category, bool, error) {
	q = queryKey(q)
	key := "keys:" + q + "\x1f" + region + "\x1f" + platform
	return list(ctx, c, key, 0, func(ctx context.Context) (*reseller.List[reseller.GameKeyGame], error) {
		return c.Client.GameKeys(ctx, &reseller.GameKeysOptions{Q: q, Region: region, Platform: platform})
	}, func(g reseller.GameKeyGame) flows.Category {
		return flows.Category{ID: g.GameID, Name: g.Name, Region: g.Region, Platform: g.Platform, Image: g.Image}
	})
}

// GameKeyOffers returns a game's visible key offers.
func (c *Cached) GameKeyOffers(ctx context.Context, gameID string) (*flows.Offers, bool, error) {
	o, stale, err := get(ctx, c, "keys:game:"+gameID, 0, func(ctx context.Context) (*reseller.GameKeyOffers, error) {
		return c.Client.GameKeyOffers(ctx, gameID)
	})
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: o.GameID, Name: o.Name, Region: o.Region, Platform: o.Platform, Restricted: o.RegionRestriction, Image: o.Image}
	for _, x := range o.Keys {
		out.Offers = append(out.Offers, unitOffer(x.KeyID, x.Name, x.PriceUSD, x.Stock, x.MinQuantity, x.MaxQuantity))
	}
	return out, stale, nil
}

// unitOffer is a card or key offer: sold by the unit, within bounds and stock.
func unitOffer(id, name string, price reseller.Money, stock, lo, hi int) flows.Offer {
	return flows.Offer{ID: id, Name: name, PriceUSD: price.Decimal, Stock: stock, MinQuantity: lo, MaxQuantity: hi}
}

// GameKeyRestriction returns where a region-restricted key activates.
func (c *Cached) GameKeyRestriction(ctx context.Context, gameID string) (*flows.Restriction, bool, error) {
	rr, stale, err := get(ctx, c, "keys:rr:"+gameID, 0, func(ctx context.Context) (*reseller.RegionRestriction, error) {
		return c.Client.GameKeyRegionRestriction(ctx, gameID)
	})
	if err != nil {
		return nil, false, err
	}
	names := func(cs []reseller.Country) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	return &flows.Restriction{Available: names(rr.Available), Unavailable: names(rr.Unavailable)}, stale, nil
}

// TopUpSearch returns the in-game top-up categories matching q ("" for all).
func (c *Cached) TopUpSearch(ctx context.Context, q string) ([]flows.Category, bool, error) {
	q = queryKey(q)
	return list(ctx, c, "tu:q:"+q, 0, func(ctx context.Context) (*reseller.List[reseller.TopUpCategory], error) {
		return c.Client.TopUpCategories(ctx, &reseller.TopUpCategoriesOptions{Q: q})
	}, func(x reseller.TopUpCategory) flows.Category {
		return flows.Category{ID: x.CategoryID, Name: x.Name, Image: x.Image}
	})
}

// TopUpBrands returns the in-game top-up brands with their categories.
func (c *Cached) TopUpBrands(ctx context.Context) ([]flows.Brand, bool, error) {
	return list(ctx, c, "tu:brands", 0, func(ctx context.Context) (*reseller.List[reseller.TopUpBrand], error) {
		return c.Client.TopUpBrands(ctx, nil)
	}, func(b reseller.TopUpBrand) flows.Brand {
		fb := flows.Brand{Name: b.Brand}
		for _, sub := range b.Subcategories {
			fb.Categories = append(fb.Categories, flows.Category{ID: sub.CategoryID, Name: sub.Name, Region: sub.Region, Variant: sub.Variant, Image: sub.Image})
		}
		return fb
	})
}

// TopUpOffers returns a category's offers and the fields an order needs.
func (c *Cached) TopUpOffers(ctx context.Context, categoryID string) (*flows.Offers, bool, error) {
	o, stale, err := get(ctx, c, "tu:cat:"+categoryID, 0, func(ctx context.Context) (*reseller.TopUpOffers, error) {
		return c.Client.TopUpOffers(ctx, categoryID)
	})
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: o.CategoryID, Name: o.Name, Note: o.Note, Image: o.Image}
	for _, f := range o.Fields {
		out.Fields = append(out.Fields, flows.Field{Key: f.Key, Label: f.Label, Type: f.Type, Options: f.Options})
	}
	for _, x := range o.Offers {
		out.Offers = append(out.Offers, flows.Offer{ID: x.OfferID, Name: x.Name, PriceUSD: x.PriceUSD.Decimal})
	}
	return out, stale, nil
}

// ManualServices returns the manual services.
func (c *Cached) ManualServices(ctx context.Context) ([]flows.Category, bool, error) {
	return list(ctx, c, "svc", 0, c.Client.ManualServices, func(x reseller.ManualService) flows.Category {
		return flows.Category{ID: x.ID, Name: x.Name, Image: x.Image}
	})
}

// ManualServiceOffers returns a service's offers and fields. The upstream
// gives a service's image only in the service list: it is taken from there
// (a list that cannot be read leaves the offers without one).
func (c *Cached) ManualServiceOffers(ctx context.Context, serviceID string) (*flows.Offers, bool, error) {
	o, stale, err := get(ctx, c, "svc:"+serviceID, 0, func(ctx context.Context) (*reseller.ManualOffers, error) {
		return c.Client.ManualServiceOffers(ctx, serviceID)
	})
	if err != nil {
		return nil, false, err
	}
	out := &flows.Offers{CategoryID: o.ServiceID, Name: o.Name, Note: o.Info}
	if list, _, err := c.ManualServices(ctx); err == nil {
		for _, sv := range list {
			if sv.ID == o.ServiceID {
				out.Image = sv.Image
			}
		}
	}
	for _, f := range o.Fields {
		out.Fields = append(out.Fields, flows.Field{Key: f.Code, Label: f.Name})
	}
	for _, x := range o.Offers {
		out.Offers = append(out.Offers, flows.Offer{ID: x.ID, Name: x.Name, PriceUSD: x.PriceUSD.Decimal, DeliveryMinutes: x.DeliveryMinutes, Note: x.Note})
	}
	return out, stale, nil
}

// StoreGames returns the store-gift top-games list (cached TopGamesTTL).
func (c *Cached) StoreGames(ctx context.Context) ([]flows.Category, bool, error) {
	return list(ctx, c, "gifts:top", TopGamesTTL, func(ctx context.Context) (*reseller.List[reseller.StoreGame], error) {
		return c.Client.StoreGames(ctx, &reseller.StoreGamesOptions{Limit: 500})
	}, func(g reseller.StoreGame) flows.Category {
		return flows.Category{ID: strconv.FormatInt(g.AppID, 10), Name: g.Name}
	})
}

// StoreGiftEditions returns a game's gift editions (cached EditionsTTL).
func (c *Cached) StoreGiftEditions(ctx context.Context, appID int64) ([]flows.Edition, bool, error) {
	o, stale, err := get(ctx, c, "gifts:app:"+strconv.FormatInt(appID, 10), EditionsTTL, func(ctx context.Context) (*reseller.StoreGiftOffers, error) {
		return c.Client.StoreGiftOffers(ctx, appID)
	})
	if err != nil {
		return nil, false, err
	}
	out := make([]flows.Edition, 0, len(o.Offers))
	for _, ed := range o.Offers {
		fe := flows.Edition{ID: strconv.FormatInt(ed.SubID, 10), Name: ed.Name}
		for _, r := range ed.Regions {
			fe.Regions = append(fe.Regions, flows.RegionPrice{Region: r.Region, PriceUSD: r.PriceUSD.Decimal})
		}
		out = append(out, fe)
	}
	return out, stale, nil
}

// StoreRates returns the store top-up currency rates and the minimum top-up
// in each currency the upstream takes.
func (c *Cached) StoreRates(ctx context.Context) (*flows.StoreRates, bool, error) {
	r, stale, err := get(ctx, c, "topup:rates", 0, c.Client.StoreRates)
	if err != nil {
		return nil, false, err
	}
	out := &flows.StoreRates{Rates: map[string]decimal.Decimal{}, Min: map[string]decimal.Decimal{}}
	for cur, rate := range r.Rates {
		out.Rates[string(cur)] = rate
	}
	for _, cur := range append([]reseller.Currency{reseller.USD}, keys(r.Rates)...) {
		if lo, err := reseller.MinTopupIn(r, cur); err == nil {
			out.Min[string(cur)] = lo
		}
	}
	return out, stale, nil
}

func keys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// CheckStoreLogin asks the upstream, never the cache, whether a store login
// can be topped up.
func (c *Cached) CheckStoreLogin(ctx context.Context, login string) (bool, error) {
	check, err := c.Client.CheckStoreLogin(ctx, login)
	if err != nil {
		return false, flowsError(err)
	}
	return check.CanRefill, nil
}

// Quotes implements flows.QuoteStore over the store's quotes: a flows quote
// is stored as the shop's record of it (state.Quote, the same fields).
type Quotes struct {
	Store *records.Quotes
	// Saved, when set, is told of every quote saved (the quote
	// reminders).
	Saved func(ctx context.Context, q *state.Quote)
}

// Save stores q, giving it an id when it has none.
func (q Quotes) Save(ctx context.Context, fq *flows.Quote) error {
	if err := q.Store.Save(ctx, StateQuote(fq)); err != nil {
		return err
	}
	if q.Saved != nil {
		q.Saved(ctx, StateQuote(fq))
	}
	return nil
}

// Load returns the quote id, or an error wrapping flows.ErrNoQuote.
func (q Quotes) Load(ctx context.Context, id string) (*flows.Quote, error) {
	sq, err := q.Store.Load(ctx, id)
	if errors.Is(err, state.ErrNoQuote) {
		return nil, fmt.Errorf("%w: %w", flows.ErrNoQuote, err)
	}
	if err != nil {
		return nil, err
	}
	return (*flows.Quote)(sq), nil
}

// StateQuote is the shop's record of a flows quote (the same value: the
// types differ in their JSON tags only).
func StateQuote(q *flows.Quote) *state.Quote { return (*state.Quote)(q) }

// Promos implements flows.Promos over the store's promo codes.
type Promos struct{ Store *records.Promos }

// Promo returns the code's terms when the buyer may use it now, else an
// error wrapping the flows' reason.
func (p Promos) Promo(ctx context.Context, code string, userID int64) (*flows.Promo, error) {
	sp, err := p.Store.Check(ctx, code, userID)
	switch {
	case errors.Is(err, state.ErrPromoUnknown), errors.Is(err, state.ErrPromoDisabled):
		return nil, fmt.Errorf("%w: %w", flows.ErrPromoUnknown, err)
	case errors.Is(err, state.ErrPromoExpired):
		return nil, fmt.Errorf("%w: %w", flows.ErrPromoExpired, err)
	case errors.Is(err, state.ErrPromoUsedUp):
		return nil, fmt.Errorf("%w: %w", flows.ErrPromoUsedUp, err)
	case errors.Is(err, state.ErrPromoUsedByBuyer):
		return nil, fmt.Errorf("%w: %w", flows.ErrPromoUsed, err)
	case err != nil:
		return nil, err
	}
	return &flows.Promo{Code: sp.Code, Percent: sp.Percent, OffUSD: sp.OffUSD, Lines: sp.Lines, MinUSD: sp.MinUSD, BelowCost: sp.BelowCost}, nil
}
