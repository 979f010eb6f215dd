package upstreamorder

import (
	"context"
	"strconv"

	"shopbot/reseller"
	"shopbot/state"
)

// keys is a number of game keys, delivered as keys. The spec shows no
// request field on game key orders, so nothing is relied on as echoed:
// two are never provably the same purchase.
var keys = &line{
	id: "keys", typ: reseller.OrderTypeGameKey,
	build:   keysRequest,
	create:  keysCreate,
	reprice: keysPrice,
}

// keysRequest: the quote's Category (the game), Item (the key) and
// Quantity.
func keysRequest(q *state.Quote, r *Request) {
	r.Params["game_id"], r.Params["key_id"], r.Params["quantity"] = q.Category, q.Item, strconv.Itoa(q.Quantity)
}

func keysCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	n, _ := strconv.Atoi(r.Params["quantity"])
	return c.CreateGameKeyOrder(ctx, &reseller.GameKeyOrderRequest{GameID: r.Params["game_id"], KeyID: r.Params["key_id"], Quantity: n})
}

// keysPrice is the key's price and stock.
func keysPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	offers, err := up.GameKeyOffers(ctx, q.Category)
	if err != nil {
		return nil, err
	}
	for _, o := range offers.Keys {
		if o.KeyID == q.Item {
			return &Price{UpstreamUSD: o.PriceUSD.Mul(quantity(q)), Stock: o.Stock}, nil
		}
	}
	return nil, gone()
}
