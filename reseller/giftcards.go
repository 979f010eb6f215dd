package reseller

import (
	"context"
	"net/url"

	"shopbot/reseller/internal/check"
)

// Per-order quantity bounds of gift-card and game-key orders.
const (
	MinOrderQuantity = check.MinOrderQuantity
	MaxOrderQuantity = check.MaxOrderQuantity
)

// GiftCategory is an entry of the gift-card categories list.
type GiftCategory struct {
	// CategoryID identifies the category.
	CategoryID string `json:"category_id"`
	// Name is the category's name.
	Name string `json:"name"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
}

// GiftCardOffer is one orderable card of a category.
type GiftCardOffer struct {
	// CardID identifies the card.
	CardID string `json:"card_id"`
	// Name is the card's name.
	Name string `json:"name"`
	// PriceUSD is the unit price, markup included.
	PriceUSD Money `json:"price_usd"`
	// Stock is the number of units available.
	Stock int `json:"stock"`
	// MinQuantity is the smallest quantity per order.
	MinQuantity int `json:"min_quantity"`
	// MaxQuantity is the largest quantity per order.
	MaxQuantity int `json:"max_quantity"`
}

// CheckQuantity reports, as a *ValidationError on "quantity", whether q
// units cannot be ordered: outside 1..100, outside the offer's
// min_quantity..max_quantity, or above its stock.
func (o *GiftCardOffer) CheckQuantity(q int) error {
	return check.OfferQuantity(q, o.MinQuantity, o.MaxQuantity, o.Stock)
}

// GiftCardOffers are a category's cards (object "gift_card_offers").
type GiftCardOffers struct {
	// Object is "gift_card_offers".
	Object string `json:"object"`
	// CategoryID is the category.
	CategoryID string `json:"category_id"`
	// Name is the category's name.
	Name string `json:"name"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
	// Offers are the visible cards.
	Offers []GiftCardOffer `json:"offers"`
}

// GiftCardSubcategory is a per-region category of a brand.
type GiftCardSubcategory struct {
	// CategoryID is the category to browse.
	CategoryID string `json:"category_id"`
	// Region is the category's region; "" when null.
	Region string `json:"region"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
}

// GiftCardBrand groups gift-card categories by brand.
type GiftCardBrand struct {
	// Brand is the brand's name.
	Brand string `json:"brand"`
	// Subcategories are the per-region categories.
	Subcategories []GiftCardSubcategory `json:"subcategories"`
}

// GiftCardCategoriesOptions are the query of GET /gift-cards/categories.
type GiftCardCategoriesOptions struct {
	// Q searches by name or id; "" is not sent.
	Q string
	// Limit is 1 to 600 (server default 200); 0 is not sent.
	Limit int
}

// Validate checks the options.
func (o *GiftCardCategoriesOptions) Validate() error {
	if o == nil {
		return nil
	}
	return check.Limit(o.Limit, 600)
}

// GiftCardBrandsOptions are the query of GET /gift-cards/brands.
type GiftCardBrandsOptions struct {
	// Q searches brands; "" is not sent.
	Q string
}

// GiftCardOrderRequest is the body of POST /gift-cards/order.
type GiftCardOrderRequest struct {
	// CategoryID is the category (required).
	CategoryID string `json:"category_id"`
	// CardID is the card (required).
	CardID string `json:"card_id"`
	// Quantity is 1 to 100 (and within the offer's bounds, see
	// GiftCardOffer.CheckQuantity).
	Quantity int `json:"quantity"`
}

// Validate checks the request locally.
func (r *GiftCardOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("category_id", r.CategoryID); err != nil {
		return err
	}
	if err := check.Required("card_id", r.CardID); err != nil {
		return err
	}
	return check.Quantity(r.Quantity)
}

// GiftCardCategories lists visible gift-card categories: GET
// /gift-cards/categories. opts may be nil. The list carries Total.
func (c *Client) GiftCardCategories(ctx context.Context, opts *GiftCardCategoriesOptions) (*List[GiftCategory], error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts != nil {
		setQ(q, opts.Q)
		setLimit(q, opts.Limit)
	}
	return getJSON[List[GiftCategory]](ctx, c, "GET /gift-cards/categories", "/gift-cards/categories", q)
}

// GiftCardOffers returns a category's visible cards: GET
// /gift-cards/categories/{id}/cards.
func (c *Client) GiftCardOffers(ctx context.Context, categoryID string) (*GiftCardOffers, error) {
	id, err := check.PathID("category_id", categoryID)
	if err != nil {
		return nil, err
	}
	return getJSON[GiftCardOffers](ctx, c, "GET /gift-cards/categories/{id}/cards", "/gift-cards/categories/"+id+"/cards", nil)
}

// CreateGiftCardOrder orders gift-card codes and charges the balance: POST
// /gift-cards/order. The codes arrive in Order.Codes once completed. See
// Client for the retry rules of order creation.
func (c *Client) CreateGiftCardOrder(ctx context.Context, req *GiftCardOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /gift-cards/order", "/gift-cards/order", req)
}

// GiftCardBrands lists gift-card categories grouped by brand: GET
// /gift-cards/brands. opts may be nil.
func (c *Client) GiftCardBrands(ctx context.Context, opts *GiftCardBrandsOptions) (*List[GiftCardBrand], error) {
	q := url.Values{}
	if opts != nil {
		setQ(q, opts.Q)
	}
	return getJSON[List[GiftCardBrand]](ctx, c, "GET /gift-cards/brands", "/gift-cards/brands", q)
}
