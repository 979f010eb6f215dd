package reseller

import (
	"context"

	"shopbot/reseller/internal/check"
)

// Stars and Premium limits of the spec.
const (
	MinStars = 50
	MaxStars = 10000
)

// StarsPricing is the price of messenger Stars (object
// "messenger_stars_pricing").
type StarsPricing struct {
	// Object is "messenger_stars_pricing".
	Object string `json:"object"`
	// PricePerStar is the USD price of one Star.
	PricePerStar Money `json:"price_per_star"`
	// Min is the smallest quantity that can be bought.
	Min int `json:"min"`
	// Max is the largest quantity that can be bought.
	Max int `json:"max"`
	// UpdatedAt is when prices were updated, as sent (format not specified).
	UpdatedAt string `json:"updated_at"`
}

// PremiumPlan is one messenger Premium duration and its price.
type PremiumPlan struct {
	// Months is 3, 6 or 12.
	Months int `json:"months"`
	// PriceUSD is the plan's price.
	PriceUSD Money `json:"price_usd"`
}

// PremiumPricing lists messenger Premium plans (object
// "messenger_premium_pricing").
type PremiumPricing struct {
	// Object is "messenger_premium_pricing".
	Object string `json:"object"`
	// Plans are the available durations.
	Plans []PremiumPlan `json:"plans"`
	// UpdatedAt is when prices were updated, as sent (format not specified).
	UpdatedAt string `json:"updated_at"`
}

// StarsOrderRequest is the body of POST /messenger/stars/buy.
type StarsOrderRequest struct {
	// MessengerUsername is the recipient (required).
	MessengerUsername string `json:"messenger_username"`
	// Quantity is the number of Stars, 50 to 10000.
	Quantity int `json:"quantity"`
}

// Validate checks the request locally.
func (r *StarsOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("messenger_username", r.MessengerUsername); err != nil {
		return err
	}
	if r.Quantity < MinStars || r.Quantity > MaxStars {
		return invalid("quantity", "must be between %d and %d, got %d", MinStars, MaxStars, r.Quantity)
	}
	return nil
}

// PremiumOrderRequest is the body of POST /messenger/premium/buy.
type PremiumOrderRequest struct {
	// MessengerUsername is the recipient (required).
	MessengerUsername string `json:"messenger_username"`
	// Months is 3, 6 or 12.
	Months int `json:"months"`
}

// Validate checks the request locally.
func (r *PremiumOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("messenger_username", r.MessengerUsername); err != nil {
		return err
	}
	switch r.Months {
	case 3, 6, 12:
		return nil
	}
	return invalid("months", "must be 3, 6 or 12, got %d", r.Months)
}

// StarsPricing returns the price of Stars: GET /messenger/stars.
func (c *Client) StarsPricing(ctx context.Context) (*StarsPricing, error) {
	return getJSON[StarsPricing](ctx, c, "GET /messenger/stars", "/messenger/stars", nil)
}

// BuyStars orders Stars for a messenger user and charges the balance: POST
// /messenger/stars/buy. See Client for the retry rules of order creation.
func (c *Client) BuyStars(ctx context.Context, req *StarsOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /messenger/stars/buy", "/messenger/stars/buy", req)
}

// PremiumPricing returns the Premium plans: GET /messenger/premium.
func (c *Client) PremiumPricing(ctx context.Context) (*PremiumPricing, error) {
	return getJSON[PremiumPricing](ctx, c, "GET /messenger/premium", "/messenger/premium", nil)
}

// BuyPremium orders Premium for a messenger user and charges the balance:
// POST /messenger/premium/buy. See Client for the retry rules of order
// creation.
func (c *Client) BuyPremium(ctx context.Context, req *PremiumOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /messenger/premium/buy", "/messenger/premium/buy", req)
}
