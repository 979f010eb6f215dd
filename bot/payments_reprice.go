package bot

import (
	"context"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"

	"shopbot/reseller"
	"shopbot/state"
)

// CurrentPrice is what a quote's item costs upstream now.
type CurrentPrice struct {
	UpstreamUSD decimal.Decimal // for the quote's whole quantity
	Stock       int             // units available; -1 when the line has no stock
}

// Reprice reads the current upstream price (uncached) of q's item for q's
// quantity. An item that is gone is a *reseller.Error with status 404. A
// line without a re-price here is an error: it cannot be checked, so it
// cannot be paid.
func Reprice(ctx context.Context, up Upstream, q *state.Quote) (*CurrentPrice, error) {
	n := decimal.NewFromInt(int64(q.Quantity))
	gone := &reseller.Error{Status: 404, Type: reseller.ErrorTypeNotFound, Message: "item no longer offered"}
	switch q.Line {
	case "giftcards":
		offers, err := up.GiftCardOffers(ctx, q.Category)
		if err != nil {
			return nil, err
		}
		for _, o := range offers.Offers {
			if o.CardID == q.Item {
				return &CurrentPrice{UpstreamUSD: o.PriceUSD.Mul(n), Stock: o.Stock}, nil
			}
		}
		return nil, gone
	case "keys":
		offers, err := up.GameKeyOffers(ctx, q.Category)
		if err != nil {
			return nil, err
		}
		for _, o := range offers.Keys {
			if o.KeyID == q.Item {
				return &CurrentPrice{UpstreamUSD: o.PriceUSD.Mul(n), Stock: o.Stock}, nil
			}
		}
		return nil, gone
	case "stars":
		p, err := up.StarsPricing(ctx)
		if err != nil {
			return nil, err
		}
		return &CurrentPrice{UpstreamUSD: p.PricePerStar.Mul(n), Stock: -1}, nil
	case "premium":
		p, err := up.PremiumPricing(ctx)
		if err != nil {
			return nil, err
		}
		for _, pl := range p.Plans {
			if strconv.Itoa(pl.Months) == q.Item {
				return &CurrentPrice{UpstreamUSD: pl.PriceUSD.Mul(n), Stock: -1}, nil
			}
		}
		return nil, gone
	}
	return nil, fmt.Errorf("re-price quote %s: line %q has no re-price", q.ID, q.Line)
}
