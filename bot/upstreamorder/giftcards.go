package upstreamorder

import (
	"context"
	"strconv"

	"shopbot/reseller"
	"shopbot/state"
)

// giftcards is a number of gift cards of a category, delivered as codes.
// The upstream echoes the category, the card and the quantity.
var giftcards = &line{
	id: "giftcards", typ: reseller.OrderTypeGiftCard,
	echoed:  []string{"category_id", "card_id", "quantity"},
	build:   giftcardsRequest,
	create:  giftcardsCreate,
	reprice: giftcardsPrice,
}

// giftcardsRequest: the quote's Category, Item (the card) and Quantity.
func giftcardsRequest(q *state.Quote, r *Request) {
	r.Params["category_id"], r.Params["card_id"], r.Params["quantity"] = q.Category, q.Item, strconv.Itoa(q.Quantity)
}

func giftcardsCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	n, _ := strconv.Atoi(r.Params["quantity"])
	return c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: r.Params["category_id"], CardID: r.Params["card_id"], Quantity: n})
}

// giftcardsPrice is the card's price and stock.
func giftcardsPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	offers, err := up.GiftCardOffers(ctx, q.Category)
	if err != nil {
		return nil, err
	}
	for _, o := range offers.Offers {
		if o.CardID == q.Item {
			return &Price{UpstreamUSD: o.PriceUSD.Mul(quantity(q)), Stock: o.Stock}, nil
		}
	}
	return nil, gone()
}
