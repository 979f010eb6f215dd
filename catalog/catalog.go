// Package catalog is the typed, cached view of the upstream catalog that the
// product-line flows browse: reseller client calls behind the Redis catalog
// cache (state.Cache), so a thousand buyers browsing one category cost one
// upstream request per cache period.
package catalog

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

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
	s, _, err := state.GetJSON(ctx, c.Cache, "acct:balance", c.opt(BalanceTTL), func(ctx context.Context) (string, error) {
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

// GameKeys returns the key catalog matching q, region and platform ("" for any).
func (c *Cached) GameKeys(ctx context.Context, q, region, platform string) ([]reseller.GameKeyGame, bool, error) {
	q = queryKey(q)
	key := "keys:" + q + "\x1f" + region + "\x1f" + platform
	return state.GetJSON(ctx, c.Cache, key, c.opt(0), func(ctx context.Context) ([]reseller.GameKeyGame, error) {
		l, err := c.Client.GameKeys(ctx, &reseller.GameKeysOptions{Q: q, Region: region, Platform: platform})
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// GameKeyOffers returns a game's visible key offers.
func (c *Cached) GameKeyOffers(ctx context.Context, gameID string) (*reseller.GameKeyOffers, bool, error) {
	return state.GetJSON(ctx, c.Cache, "keys:game:"+gameID, c.opt(0), func(ctx context.Context) (*reseller.GameKeyOffers, error) {
		return c.Client.GameKeyOffers(ctx, gameID)
	})
}

// GameKeyRestriction returns where a region-restricted key activates.
func (c *Cached) GameKeyRestriction(ctx context.Context, gameID string) (*reseller.RegionRestriction, bool, error) {
	return state.GetJSON(ctx, c.Cache, "keys:rr:"+gameID, c.opt(0), func(ctx context.Context) (*reseller.RegionRestriction, error) {
		return c.Client.GameKeyRegionRestriction(ctx, gameID)
	})
}

// TopUpSearch returns the in-game top-up categories matching q ("" for all).
func (c *Cached) TopUpSearch(ctx context.Context, q string) ([]reseller.TopUpCategory, bool, error) {
	q = queryKey(q)
	return state.GetJSON(ctx, c.Cache, "tu:q:"+q, c.opt(0), func(ctx context.Context) ([]reseller.TopUpCategory, error) {
		l, err := c.Client.TopUpCategories(ctx, &reseller.TopUpCategoriesOptions{Q: q})
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// TopUpBrands returns the in-game top-up brands with their categories.
func (c *Cached) TopUpBrands(ctx context.Context) ([]reseller.TopUpBrand, bool, error) {
	return state.GetJSON(ctx, c.Cache, "tu:brands", c.opt(0), func(ctx context.Context) ([]reseller.TopUpBrand, error) {
		l, err := c.Client.TopUpBrands(ctx, nil)
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// TopUpOffers returns a category's offers and the fields an order needs.
func (c *Cached) TopUpOffers(ctx context.Context, categoryID string) (*reseller.TopUpOffers, bool, error) {
	return state.GetJSON(ctx, c.Cache, "tu:cat:"+categoryID, c.opt(0), func(ctx context.Context) (*reseller.TopUpOffers, error) {
		return c.Client.TopUpOffers(ctx, categoryID)
	})
}

// ManualServices returns the manual services.
func (c *Cached) ManualServices(ctx context.Context) ([]reseller.ManualService, bool, error) {
	return state.GetJSON(ctx, c.Cache, "svc", c.opt(0), func(ctx context.Context) ([]reseller.ManualService, error) {
		l, err := c.Client.ManualServices(ctx)
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// ManualServiceOffers returns a service's offers and fields.
func (c *Cached) ManualServiceOffers(ctx context.Context, serviceID string) (*reseller.ManualOffers, bool, error) {
	return state.GetJSON(ctx, c.Cache, "svc:"+serviceID, c.opt(0), func(ctx context.Context) (*reseller.ManualOffers, error) {
		return c.Client.ManualServiceOffers(ctx, serviceID)
	})
}

// StoreGames returns the store-gift top-games list (cached TopGamesTTL).
func (c *Cached) StoreGames(ctx context.Context) ([]reseller.StoreGame, bool, error) {
	return state.GetJSON(ctx, c.Cache, "gifts:top", c.opt(TopGamesTTL), func(ctx context.Context) ([]reseller.StoreGame, error) {
		l, err := c.Client.StoreGames(ctx, &reseller.StoreGamesOptions{Limit: 500})
		if err != nil {
			return nil, err
		}
		return l.Data, nil
	})
}

// StoreGiftOffers returns a game's gift editions (cached EditionsTTL).
func (c *Cached) StoreGiftOffers(ctx context.Context, appID int64) (*reseller.StoreGiftOffers, bool, error) {
	return state.GetJSON(ctx, c.Cache, "gifts:app:"+strconv.FormatInt(appID, 10), c.opt(EditionsTTL), func(ctx context.Context) (*reseller.StoreGiftOffers, error) {
		return c.Client.StoreGiftOffers(ctx, appID)
	})
}

// StoreRates returns the store top-up currency rates and minimum.
func (c *Cached) StoreRates(ctx context.Context) (*reseller.StoreRates, bool, error) {
	return state.GetJSON(ctx, c.Cache, "topup:rates", c.opt(0), c.Client.StoreRates)
}

// CheckStoreLogin asks the upstream, never the cache, whether a store login
// can be topped up.
func (c *Cached) CheckStoreLogin(ctx context.Context, login string) (*reseller.StoreLoginCheck, error) {
	return c.Client.CheckStoreLogin(ctx, login)
}
