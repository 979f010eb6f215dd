// Package catalog is the typed, cached view of the upstream catalog that the
// product-line flows browse: reseller client calls behind the Redis catalog
// cache (state.Cache), so a thousand buyers browsing one category cost one
// upstream request per cache period.
package catalog

import (
	"context"
	"strings"
	"time"

	"shopbot/reseller"
	"shopbot/state"
)

// Default cache periods (the upstream spec's cache times).
const (
	TopGamesTTL = 10 * time.Minute // the store-gift top-games list
	EditionsTTL = 30 * time.Minute // a store game's gift editions
)

// Cached implements flows.Catalog over the reseller client and the cache.
type Cached struct {
	Client *reseller.Client
	Cache  *state.Cache
	TTL    time.Duration // everything without its own period (Config.CatalogTTL)
}

// New returns the cached catalog; ttl is the default cache period.
func New(c *reseller.Client, cache *state.Cache, ttl time.Duration) *Cached {
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	return &Cached{Client: c, Cache: cache, TTL: ttl}
}

func (c *Cached) opt(ttl time.Duration) state.CacheOptions {
	if ttl <= 0 {
		ttl = c.TTL
	}
	return state.CacheOptions{TTL: ttl}
}

// queryKey normalizes a search text for a cache key.
func queryKey(q string) string { return strings.ToLower(strings.TrimSpace(q)) }

// GiftCardBrands returns every gift-card brand with its regional categories.
func (c *Cached) GiftCardBrands(ctx context.Context) ([]reseller.GiftCardBrand, bool, error) {
	return state.GetJSON(ctx, c.Cache, "gc:brands", c.opt(0), func(ctx context.Context) ([]reseller.GiftCardBrand, error) {
		l, err := c.Client.GiftCardBrands(ctx, nil)
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// GiftCardSearch returns the gift-card categories matching q.
func (c *Cached) GiftCardSearch(ctx context.Context, q string) ([]reseller.GiftCategory, bool, error) {
	q = queryKey(q)
	return state.GetJSON(ctx, c.Cache, "gc:q:"+q, c.opt(0), func(ctx context.Context) ([]reseller.GiftCategory, error) {
		l, err := c.Client.GiftCardCategories(ctx, &reseller.GiftCardCategoriesOptions{Q: q})
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// GiftCardOffers returns a category's visible cards.
func (c *Cached) GiftCardOffers(ctx context.Context, categoryID string) (*reseller.GiftCardOffers, bool, error) {
	return state.GetJSON(ctx, c.Cache, "gc:cat:"+categoryID, c.opt(0), func(ctx context.Context) (*reseller.GiftCardOffers, error) {
		return c.Client.GiftCardOffers(ctx, categoryID)
	})
}

// StarsPricing returns the price of one Star and the quantity bounds.
func (c *Cached) StarsPricing(ctx context.Context) (*reseller.StarsPricing, bool, error) {
	return state.GetJSON(ctx, c.Cache, "stars", c.opt(0), c.Client.StarsPricing)
}

// PremiumPricing returns the Premium plans.
func (c *Cached) PremiumPricing(ctx context.Context) (*reseller.PremiumPricing, bool, error) {
	return state.GetJSON(ctx, c.Cache, "premium", c.opt(0), c.Client.PremiumPricing)
}
