package upstreamorder

import (
	"context"
	"maps"

	"shopbot/reseller"
	"shopbot/state"
)

// games is an in-game top-up: an offer of a category with the buyer's
// answers to its fields (player id ...). What its orders carry is "not
// shown" in the spec, so nothing is relied on as echoed.
var games = &line{
	id: "games", typ: reseller.OrderTypeGameTopup,
	build:   gamesRequest,
	create:  gamesCreate,
	reprice: gamesPrice,
}

// gamesRequest: the quote's Category and Item (the offer), with its Fields.
func gamesRequest(q *state.Quote, r *Request) {
	r.Params["category_id"], r.Params["offer_id"] = q.Category, q.Item
	r.Fields = maps.Clone(q.Fields)
}

func gamesCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	return c.CreateTopUpOrder(ctx, &reseller.TopUpOrderRequest{CategoryID: r.Params["category_id"], OfferID: r.Params["offer_id"], Fields: r.Fields})
}

func gamesPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	offers, err := up.TopUpOffers(ctx, q.Category)
	if err != nil {
		return nil, err
	}
	for _, o := range offers.Offers {
		if o.OfferID == q.Item {
			return &Price{UpstreamUSD: o.PriceUSD.Mul(quantity(q)), Stock: -1}, nil
		}
	}
	return nil, gone()
}
