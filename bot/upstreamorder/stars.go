package upstreamorder

import (
	"context"
	"strconv"

	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// stars is messenger Stars for a @username. The upstream echoes the
// username and the quantity (as "stars").
var stars = &line{
	id: "stars", typ: reseller.OrderTypeMessengerStars,
	echoed:       []string{"messenger_username", "quantity"},
	responseKeys: map[string]string{"quantity": "stars"},
	build:        starsRequest,
	create:       starsCreate,
	reprice:      starsPrice,
	name:         starsName,
	recipient:    true,
}

func starsName(lang locales.Lang, q *state.Quote) string {
	if q.Quantity > 0 {
		return locales.N(lang, "count.stars", int64(q.Quantity))
	}
	return ""
}

// starsRequest: the quote's Fields username and its Quantity.
func starsRequest(q *state.Quote, r *Request) {
	r.Params["messenger_username"], r.Params["quantity"] = field(q, "username", "messenger_username"), strconv.Itoa(q.Quantity)
}

func starsCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	n, _ := strconv.Atoi(r.Params["quantity"])
	return c.BuyStars(ctx, &reseller.StarsOrderRequest{MessengerUsername: r.Params["messenger_username"], Quantity: n})
}

func starsPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	p, err := up.StarsPricing(ctx)
	if err != nil {
		return nil, err
	}
	return &Price{UpstreamUSD: p.PricePerStar.Mul(quantity(q)), Stock: -1}, nil
}
