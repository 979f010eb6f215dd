package upstreamorder

import (
	"context"
	"maps"

	"shopbot/reseller"
	"shopbot/state"
)

// services is a manual service's offer with the buyer's answers to its
// fields. The upstream echoes the service and the offer, not the answers.
var services = &line{
	id: "services", typ: reseller.OrderTypeManualService,
	echoed:  []string{"service_id", "product_id"},
	build:   servicesRequest,
	create:  servicesCreate,
	reprice: servicesPrice,
}

// servicesRequest: the quote's Category (the service) and Item (the
// offer), with its Fields.
func servicesRequest(q *state.Quote, r *Request) {
	r.Params["service_id"], r.Params["product_id"] = q.Category, q.Item
	r.Fields = maps.Clone(q.Fields)
}

func servicesCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	return c.CreateManualServiceOrder(ctx, &reseller.ManualServiceOrderRequest{ServiceID: r.Params["service_id"], ProductID: r.Params["product_id"], Fields: r.Fields})
}

func servicesPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	offers, err := up.ManualServiceOffers(ctx, q.Category)
	if err != nil {
		return nil, err
	}
	for _, o := range offers.Offers {
		if o.ID == q.Item {
			return &Price{UpstreamUSD: o.PriceUSD.Mul(quantity(q)), Stock: -1}, nil
		}
	}
	return nil, gone()
}
