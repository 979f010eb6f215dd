package checkout

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
	case "games":
		offers, err := up.TopUpOffers(ctx, q.Category)
		if err != nil {
			return nil, err
		}
		for _, o := range offers.Offers {
			if o.OfferID == q.Item {
				return &CurrentPrice{UpstreamUSD: o.PriceUSD.Mul(n), Stock: -1}, nil
			}
		}
		return nil, gone
	case "services":
		offers, err := up.ManualServiceOffers(ctx, q.Category)
		if err != nil {
			return nil, err
		}
		for _, o := range offers.Offers {
			if o.ID == q.Item {
				return &CurrentPrice{UpstreamUSD: o.PriceUSD.Mul(n), Stock: -1}, nil
			}
		}
		return nil, gone
	case "gifts":
		app, err := strconv.ParseInt(q.Category, 10, 64)
		if err != nil {
			return nil, gone
		}
		offers, err := up.StoreGiftOffers(ctx, app)
		if err != nil {
			return nil, err
		}
		for _, ed := range offers.Offers {
			if strconv.FormatInt(ed.SubID, 10) != q.Item {
				continue
			}
			for _, r := range ed.Regions {
				if r.Region == q.Fields["region"] {
					return &CurrentPrice{UpstreamUSD: r.PriceUSD.Mul(n), Stock: -1}, nil
				}
			}
		}
		return nil, gone
	case "topup":
		// The buyer's amount in their currency, converted at today's rate,
		// exactly as the flow quoted it.
		rates, err := up.StoreRates(ctx)
		if err != nil {
			return nil, err
		}
		amount, err := decimal.NewFromString(q.Fields["amount"])
		if err != nil {
			return nil, gone
		}
		rate := decimal.NewFromInt(1)
		if cur := q.Fields["currency"]; cur != string(reseller.USD) {
			r, ok := rates.Rates[reseller.Currency(cur)]
			if !ok || !r.IsPositive() {
				return nil, gone
			}
			rate = r
		}
		return &CurrentPrice{UpstreamUSD: amount.DivRound(rate, 4), Stock: -1}, nil
	}
	return nil, fmt.Errorf("re-price quote %s: line %q has no re-price", q.ID, q.Line)
}
