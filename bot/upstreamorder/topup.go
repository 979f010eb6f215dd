package upstreamorder

import (
	"context"

	"github.com/shopspring/decimal"

	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// topup is the store wallet top-up: the buyer's store login, a currency and
// an amount in it. The upstream echoes all three.
var topup = &line{
	id: "topup", typ: reseller.OrderTypeStoreTopup,
	echoed:    []string{"store_login", "currency", "amount"},
	build:     topupRequest,
	create:    topupCreate,
	reprice:   topupPrice,
	name:      topupName,
	recipient: true,
}

func topupName(lang locales.Lang, q *state.Quote) string {
	if amount, err := decimal.NewFromString(q.Fields["amount"]); err == nil && q.Fields["currency"] != "" {
		return locales.T(lang, "topup.item", "amount", locales.Decimal(lang, amount, 2)+"\u00a0"+q.Fields["currency"])
	}
	return ""
}

// topupRequest: the quote's Fields store_login (or login), currency (USD
// when none) and amount.
func topupRequest(q *state.Quote, r *Request) {
	cur := field(q, "currency")
	if cur == "" {
		cur = "USD"
	}
	r.Params["store_login"], r.Params["currency"], r.Params["amount"] = field(q, "store_login", "login"), cur, field(q, "amount")
}

func topupCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	p := r.Params
	amount, err := decimal.NewFromString(p["amount"])
	if err != nil {
		return nil, &reseller.ValidationError{Field: "amount", Reason: "not a decimal"}
	}
	return c.CreateStoreTopupOrder(ctx, &reseller.StoreTopupOrderRequest{
		StoreLogin: p["store_login"], Currency: reseller.Currency(p["currency"]), Amount: amount})
}

// topupPrice is the buyer's amount in their currency, converted at today's
// rate, exactly as the flow quoted it.
func topupPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	rates, err := up.StoreRates(ctx)
	if err != nil {
		return nil, err
	}
	amount, err := decimal.NewFromString(q.Fields["amount"])
	if err != nil {
		return nil, gone()
	}
	rate := decimal.NewFromInt(1)
	if cur := q.Fields["currency"]; cur != string(reseller.USD) {
		r, ok := rates.Rates[reseller.Currency(cur)]
		if !ok || !r.IsPositive() {
			return nil, gone()
		}
		rate = r
	}
	return &Price{UpstreamUSD: amount.DivRound(rate, 4), Stock: -1}, nil
}
