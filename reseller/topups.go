package reseller

import (
	"context"
	"encoding/json"
	"net/url"

	"shopbot/reseller/internal/check"
)

// TopUpCategory is an entry of the in-game top-up categories list.
type TopUpCategory struct {
	// CategoryID identifies the category.
	CategoryID string `json:"category_id"`
	// Name is the category's name.
	Name string `json:"name"`
	// Note is a remark; "" when null.
	Note string `json:"note"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
}

// TopUpField is a buyer input an in-game top-up needs (a player id, a
// server ...).
type TopUpField struct {
	// Key is the key to use in TopUpOrderRequest.Fields.
	Key string `json:"key"`
	// Label is the human label.
	Label string `json:"label"`
	// Type is the input's type as sent ("text", "number", "select", ...).
	Type string `json:"type"`
	// Options are the allowed values of a "select" field when the upstream
	// lists them. The published spec does not show them; nil when absent.
	Options []string `json:"options,omitempty"`
}

// TopUpOffer is one orderable in-game top-up.
type TopUpOffer struct {
	// OfferID identifies the offer.
	OfferID string `json:"offer_id"`
	// Name is the offer's name.
	Name string `json:"name"`
	// PriceUSD includes the reseller's markup.
	PriceUSD Money `json:"price_usd"`
}

// TopUpOffers are a category's offers and required buyer fields (object
// "top_up_offers").
type TopUpOffers struct {
	// Object is "top_up_offers".
	Object string `json:"object"`
	// CategoryID is the category.
	CategoryID string `json:"category_id"`
	// Name is the category's name.
	Name string `json:"name"`
	// Note is a remark; "" when null.
	Note string `json:"note"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
	// Fields are the buyer inputs every order must include.
	Fields []TopUpField `json:"fields"`
	// Offers are the visible offers.
	Offers []TopUpOffer `json:"offers"`
}

// MissingFields returns the keys of Fields that have no non-empty value in
// fields, in the listed order.
func (t *TopUpOffers) MissingFields(fields map[string]string) []string {
	var missing []string
	for _, f := range t.Fields {
		if fields[f.Key] == "" {
			missing = append(missing, f.Key)
		}
	}
	return missing
}

// TopUpSubcategory is a per-region category of a top-up brand.
type TopUpSubcategory struct {
	// CategoryID is the category to browse.
	CategoryID string `json:"category_id"`
	// Name is the category's name.
	Name string `json:"name"`
	// Region is the region (GLOBAL when the supplier gives none).
	Region string `json:"region"`
	// Variant is the delivery mode (for example Auto, Fast, Manual); ""
	// when null.
	Variant string `json:"variant"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
}

// TopUpBrand groups top-up categories by brand.
type TopUpBrand struct {
	// Brand is the brand's name.
	Brand string `json:"brand"`
	// Subcategories are the per-region categories.
	Subcategories []TopUpSubcategory `json:"subcategories"`
}

// TopUpCategoriesOptions are the query of GET /top-ups/categories.
type TopUpCategoriesOptions struct {
	// Q searches by name or id; "" is not sent.
	Q string
	// Limit is 1 to 600 (server default 200); 0 is not sent.
	Limit int
}

// Validate checks the options.
func (o *TopUpCategoriesOptions) Validate() error {
	if o == nil {
		return nil
	}
	return check.Limit(o.Limit, 600)
}

// TopUpBrandsOptions are the query of GET /top-ups/brands.
type TopUpBrandsOptions struct {
	// Q searches brands; "" is not sent.
	Q string
}

// TopUpOrderRequest is the body of POST /top-ups/order.
type TopUpOrderRequest struct {
	// CategoryID is the category (required).
	CategoryID string `json:"category_id"`
	// OfferID is the offer (required).
	OfferID string `json:"offer_id"`
	// Fields maps the category's field keys to the buyer's values
	// (required; sent as {} when nil, see TopUpOffers.MissingFields).
	Fields map[string]string `json:"fields"`
}

// Validate checks the request locally.
func (r *TopUpOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("category_id", r.CategoryID); err != nil {
		return err
	}
	if err := check.Required("offer_id", r.OfferID); err != nil {
		return err
	}
	return check.Fields(r.Fields)
}

// MarshalJSON writes the wire form, with fields as {} when nil.
func (r TopUpOrderRequest) MarshalJSON() ([]byte, error) {
	type plain TopUpOrderRequest
	p := plain(r)
	if p.Fields == nil {
		p.Fields = map[string]string{}
	}
	return json.Marshal(p)
}

// TopUpCategories lists visible in-game top-up categories: GET
// /top-ups/categories. opts may be nil. The list carries Total.
func (c *Client) TopUpCategories(ctx context.Context, opts *TopUpCategoriesOptions) (*List[TopUpCategory], error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	q := url.Values{}
	if opts != nil {
		setQ(q, opts.Q)
		setLimit(q, opts.Limit)
	}
	return getJSON[List[TopUpCategory]](ctx, c, "GET /top-ups/categories", "/top-ups/categories", q)
}

// TopUpOffers returns a category's offers and required buyer fields: GET
// /top-ups/categories/{id}/offers.
func (c *Client) TopUpOffers(ctx context.Context, categoryID string) (*TopUpOffers, error) {
	id, err := check.PathID("category_id", categoryID)
	if err != nil {
		return nil, err
	}
	return getJSON[TopUpOffers](ctx, c, "GET /top-ups/categories/{id}/offers", "/top-ups/categories/"+id+"/offers", nil)
}

// TopUpBrands lists top-up categories grouped by brand: GET
// /top-ups/brands. opts may be nil.
func (c *Client) TopUpBrands(ctx context.Context, opts *TopUpBrandsOptions) (*List[TopUpBrand], error) {
	q := url.Values{}
	if opts != nil {
		setQ(q, opts.Q)
	}
	return getJSON[List[TopUpBrand]](ctx, c, "GET /top-ups/brands", "/top-ups/brands", q)
}

// CreateTopUpOrder orders an in-game top-up and charges the balance: POST
// /top-ups/order. Delivery goes straight to the player (no codes); poll
// Client.Order until completed. See Client for the retry rules of order
// creation.
func (c *Client) CreateTopUpOrder(ctx context.Context, req *TopUpOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /top-ups/order", "/top-ups/order", req)
}
