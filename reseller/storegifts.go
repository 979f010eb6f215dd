package reseller

import (
	"context"
	"net/url"
	"strconv"

	"shopbot/reseller/internal/check"
)

// StoreGame is an entry of the store games list.
type StoreGame struct {
	// AppID identifies the game.
	AppID int64 `json:"app_id"`
	// Name is the game's name.
	Name string `json:"name"`
}

// StoreGiftRegion is an edition's price in one region.
type StoreGiftRegion struct {
	// Region is the price region to order with.
	Region string `json:"region"`
	// PriceUSD includes the reseller's markup.
	PriceUSD Money `json:"price_usd"`
}

// StoreGiftEdition is an edition of a game that can be gifted.
type StoreGiftEdition struct {
	// SubID identifies the edition.
	SubID int64 `json:"sub_id"`
	// Name is the edition's name.
	Name string `json:"name"`
	// Regions are the per-region prices.
	Regions []StoreGiftRegion `json:"regions"`
}

// StoreGiftOffers are a game's giftable editions (object
// "store_gift_offers"). Upstream caches them about 30 minutes.
type StoreGiftOffers struct {
	// Object is "store_gift_offers".
	Object string `json:"object"`
	// AppID is the game.
	AppID int64 `json:"app_id"`
	// Offers are the editions.
	Offers []StoreGiftEdition `json:"offers"`
}

// StoreGamesOptions are the query of GET /store-gifts/games.
type StoreGamesOptions struct {
	// Limit is 1 to 500 (server default 100); 0 is not sent.
	Limit int
}

// Validate checks the options.
func (o *StoreGamesOptions) Validate() error {
	if o == nil {
		return nil
	}
	return check.Limit(o.Limit, 500)
}

// StoreGiftOrderRequest is the body of POST /store-gifts/order.
type StoreGiftOrderRequest struct {
	// AppID is the game (required).
	AppID int64 `json:"app_id"`
	// SubID is the edition (required).
	SubID int64 `json:"sub_id"`
	// Region is the price region (required).
	Region string `json:"region"`
	// InviteURL is the friend-invite URL that receives the gift (required).
	InviteURL string `json:"invite_url"`
	// AppName is the game's name (optional; omitted when "").
	AppName string `json:"app_name,omitempty"`
}

// Validate checks the request locally.
func (r *StoreGiftOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Number("app_id", r.AppID); err != nil {
		return err
	}
	if err := check.Number("sub_id", r.SubID); err != nil {
		return err
	}
	if err := check.Required("region", r.Region); err != nil {
		return err
	}
	return check.Required("invite_url", r.InviteURL)
}

// StoreGames lists the top store games: GET /store-gifts/games. opts may be
// nil. Upstream caches the list about 10 minutes.
func (c *Client) StoreGames(ctx context.Context, opts *StoreGamesOptions) (*List[StoreGame], error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts != nil {
		setLimit(q, opts.Limit)
	}
	return getJSON[List[StoreGame]](ctx, c, "GET /store-gifts/games", "/store-gifts/games", q)
}

// StoreGiftOffers returns a game's giftable editions with per-region
// prices: GET /store-gifts/games/{appid}.
func (c *Client) StoreGiftOffers(ctx context.Context, appID int64) (*StoreGiftOffers, error) {
	if err := check.Number("app_id", appID); err != nil {
		return nil, err
	}
	path := "/store-gifts/games/" + strconv.FormatInt(appID, 10)
	return getJSON[StoreGiftOffers](ctx, c, "GET /store-gifts/games/{appid}", path, nil)
}

// CreateStoreGiftOrder orders a store gift and charges the balance: POST
// /store-gifts/order. See Client for the retry rules of order creation.
func (c *Client) CreateStoreGiftOrder(ctx context.Context, req *StoreGiftOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /store-gifts/order", "/store-gifts/order", req)
}
