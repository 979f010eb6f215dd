package reseller

import (
	"context"
	"encoding/json"

	"shopbot/reseller/internal/check"
)

// ManualService is an entry of the manual services list.
type ManualService struct {
	// ID identifies the service.
	ID string `json:"id"`
	// Name is the service's name.
	Name string `json:"name"`
	// Kind is the kind of service (for example transfer or replenishment).
	Kind string `json:"kind"`
	// Chat says whether orders use the order chat.
	Chat bool `json:"chat"`
	// Info is a description; "" when null.
	Info string `json:"info"`
	// Image is an image URL; "" when null.
	Image string `json:"image"`
}

// ManualField is a buyer input a manual service needs.
type ManualField struct {
	// Code is the key to use in ManualServiceOrderRequest.Fields.
	Code string `json:"code"`
	// Name is the human label.
	Name string `json:"name"`
}

// ManualOffer is one orderable product of a manual service.
type ManualOffer struct {
	// ID is the product id to order.
	ID string `json:"id"`
	// Name is the product's name.
	Name string `json:"name"`
	// PriceUSD includes the reseller's markup.
	PriceUSD Money `json:"price_usd"`
	// DeliveryMinutes is the expected delivery time; nil when null.
	DeliveryMinutes *int `json:"delivery_minutes"`
	// Note is a remark; "" when null.
	Note string `json:"note"`
}

// ManualOffers are a manual service's products and required buyer fields
// (object "manual_offers").
type ManualOffers struct {
	// Object is "manual_offers".
	Object string `json:"object"`
	// ServiceID is the service.
	ServiceID string `json:"service_id"`
	// Name is the service's name; "" when null.
	Name string `json:"name"`
	// Kind is the kind of service; "" when null.
	Kind string `json:"kind"`
	// Chat says whether orders use the order chat.
	Chat bool `json:"chat"`
	// Info is a description; "" when null.
	Info string `json:"info"`
	// Fields are the buyer inputs every order must include.
	Fields []ManualField `json:"fields"`
	// Offers are the products.
	Offers []ManualOffer `json:"offers"`
}

// MissingFields returns the codes of Fields that have no non-empty value in
// fields, in the listed order.
func (m *ManualOffers) MissingFields(fields map[string]string) []string {
	var missing []string
	for _, f := range m.Fields {
		if v := fields[f.Code]; v == "" {
			missing = append(missing, f.Code)
		}
	}
	return missing
}

// ManualServiceOrderRequest is the body of POST /manual-services/order.
type ManualServiceOrderRequest struct {
	// ServiceID is the service (required).
	ServiceID string `json:"service_id"`
	// ProductID is the offer's id (required).
	ProductID string `json:"product_id"`
	// Fields maps every field code listed by the offers endpoint to the
	// buyer's value. Always sent ({} when nil).
	Fields map[string]string `json:"fields"`
}

// Validate checks the request locally. Whether Fields covers the service's
// field codes is checked with ManualOffers.MissingFields.
func (r *ManualServiceOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("service_id", r.ServiceID); err != nil {
		return err
	}
	if err := check.Required("product_id", r.ProductID); err != nil {
		return err
	}
	return check.Fields(r.Fields)
}

// MarshalJSON writes the wire form, with fields as {} when nil.
func (r ManualServiceOrderRequest) MarshalJSON() ([]byte, error) {
	type plain ManualServiceOrderRequest
	p := plain(r)
	if p.Fields == nil {
		p.Fields = map[string]string{}
	}
	return json.Marshal(p)
}

// ManualServices lists the manual services: GET /manual-services.
func (c *Client) ManualServices(ctx context.Context) (*List[ManualService], error) {
	return getJSON[List[ManualService]](ctx, c, "GET /manual-services", "/manual-services", nil)
}

// ManualServiceOffers returns a service's offers and required buyer fields:
// GET /manual-services/{id}/offers.
func (c *Client) ManualServiceOffers(ctx context.Context, serviceID string) (*ManualOffers, error) {
	id, err := check.PathID("service_id", serviceID)
	if err != nil {
		return nil, err
	}
	return getJSON[ManualOffers](ctx, c, "GET /manual-services/{id}/offers", "/manual-services/"+id+"/offers", nil)
}

// CreateManualServiceOrder orders a manual service and charges the balance:
// POST /manual-services/order. See Client for the retry rules of order
// creation.
func (c *Client) CreateManualServiceOrder(ctx context.Context, req *ManualServiceOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /manual-services/order", "/manual-services/order", req)
}
