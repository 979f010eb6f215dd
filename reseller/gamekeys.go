package reseller

import (
	"context"
	"net/url"

	"shopbot/reseller/internal/check"
)

// GameKeyGame is an entry of the game-keys catalog.
type GameKeyGame struct {
	// GameID identifies the game.
	GameID string `json:"game_id"`
	// Name is the game's name.
	Name string `json:"name"`
	// Region is the key region, for example GLOBAL or CIS.
	Region string `json:"region"`
	// Platform names the platform the key activates on.
	Platform string `json:"platform"`
	// RegionRestriction says whether GameKeyRegionRestriction is meaningful.
	RegionRestriction bool `json:"region_restriction"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
}

// GameKeyOffer is one orderable key of a game.
type GameKeyOffer struct {
	// KeyID identifies the key offer.
	KeyID string `json:"key_id"`
	// Name is the offer's name.
	Name string `json:"name"`
	// PriceUSD is the unit price, markup included.
	PriceUSD Money `json:"price_usd"`
	// Stock is the number of keys available.
	Stock int `json:"stock"`
	// MinQuantity is the smallest quantity per order.
	MinQuantity int `json:"min_quantity"`
	// MaxQuantity is the largest quantity per order.
	MaxQuantity int `json:"max_quantity"`
}

// CheckQuantity reports, as a *ValidationError on "quantity", whether q
// keys cannot be ordered: outside 1..100, outside the offer's
// min_quantity..max_quantity, or above its stock.
func (o *GameKeyOffer) CheckQuantity(q int) error {
	return check.OfferQuantity(q, o.MinQuantity, o.MaxQuantity, o.Stock)
}

// GameKeyOffers are a game's keys (object "game_key_offers").
type GameKeyOffers struct {
	// Object is "game_key_offers".
	Object string `json:"object"`
	// GameID is the game.
	GameID string `json:"game_id"`
	// Name is the game's name.
	Name string `json:"name"`
	// Region is the key region.
	Region string `json:"region"`
	// Platform names the platform.
	Platform string `json:"platform"`
	// RegionRestriction says whether activation is region restricted.
	RegionRestriction bool `json:"region_restriction"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
	// Keys are the visible key offers.
	Keys []GameKeyOffer `json:"keys"`
}

// Country is a country code and name.
type Country struct {
	// Code is the country code.
	Code string `json:"code"`
	// Name is the country's name.
	Name string `json:"name"`
}

// RegionRestriction lists where a game's key activates (object
// "region_restriction").
type RegionRestriction struct {
	// Object is "region_restriction".
	Object string `json:"object"`
	// GameID is the game.
	GameID string `json:"game_id"`
	// Region is the key region.
	Region string `json:"region"`
	// HasAvailability says whether the lists are known.
	HasAvailability bool `json:"has_availability"`
	// Available are the countries where the key activates.
	Available []Country `json:"available"`
	// Unavailable are the countries where it does not.
	Unavailable []Country `json:"unavailable"`
}

// GameKeysOptions are the query of GET /game-keys. Empty fields are not sent.
type GameKeysOptions struct {
	// Q searches by name or id.
	Q string
	// Region filters by region, for example GLOBAL or CIS.
	Region string
	// Platform filters by platform.
	Platform string
	// Limit is 1 to 500 (server default 200).
	Limit int
}

// Validate checks the options.
func (o *GameKeysOptions) Validate() error {
	if o == nil {
		return nil
	}
	return check.Limit(o.Limit, 500)
}

// GameKeyOrderRequest is the body of POST /game-keys/order.
type GameKeyOrderRequest struct {
	// GameID is the game (required).
	GameID string `json:"game_id"`
	// KeyID is the key offer (required).
	KeyID string `json:"key_id"`
	// Quantity is 1 to 100 (and within the offer's bounds, see
	// GameKeyOffer.CheckQuantity).
	Quantity int `json:"quantity"`
}

// Validate checks the request locally.
func (r *GameKeyOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("game_id", r.GameID); err != nil {
		return err
	}
	if err := check.Required("key_id", r.KeyID); err != nil {
		return err
	}
	return check.Quantity(r.Quantity)
}

// GameKeys lists the visible game-key catalog: GET /game-keys. opts may be
// nil. The list carries Total.
func (c *Client) GameKeys(ctx context.Context, opts *GameKeysOptions) (*List[GameKeyGame], error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts != nil {
		setQ(q, opts.Q)
		if opts.Region != "" {
			q.Set("region", opts.Region)
		}
		if opts.Platform != "" {
			q.Set("platform", opts.Platform)
		}
		setLimit(q, opts.Limit)
	}
	return getJSON[List[GameKeyGame]](ctx, c, "GET /game-keys", "/game-keys", q)
}

// GameKeyOffers returns a game's visible key offers: GET
// /game-keys/{gameId}/keys.
func (c *Client) GameKeyOffers(ctx context.Context, gameID string) (*GameKeyOffers, error) {
	id, err := check.PathID("game_id", gameID)
	if err != nil {
		return nil, err
	}
	return getJSON[GameKeyOffers](ctx, c, "GET /game-keys/{gameId}/keys", "/game-keys/"+id+"/keys", nil)
}

// GameKeyRegionRestriction returns where a game's key activates: GET
// /game-keys/{gameId}/region-restriction. It is meaningful when the catalog
// flag RegionRestriction is true.
func (c *Client) GameKeyRegionRestriction(ctx context.Context, gameID string) (*RegionRestriction, error) {
	id, err := check.PathID("game_id", gameID)
	if err != nil {
		return nil, err
	}
	return getJSON[RegionRestriction](ctx, c, "GET /game-keys/{gameId}/region-restriction", "/game-keys/"+id+"/region-restriction", nil)
}

// CreateGameKeyOrder orders game keys and charges the balance: POST
// /game-keys/order. The keys arrive in Order.Keys (see
// Order.DeliveredKeys) once completed. See Client for the retry rules of
// order creation.
func (c *Client) CreateGameKeyOrder(ctx context.Context, req *GameKeyOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /game-keys/order", "/game-keys/order", req)
}
