package upstreamorder

import (
	"context"
	"strconv"

	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// premium is messenger Premium for a @username, 3, 6 or 12 months. The
// upstream echoes the username and the months.
var premium = &line{
	id: "premium", typ: reseller.OrderTypeMessengerPremium,
	echoed:    []string{"messenger_username", "months"},
	build:     premiumRequest,
	create:    premiumCreate,
	reprice:   premiumPrice,
	name:      premiumName,
	recipient: true,
}

func premiumName(lang locales.Lang, q *state.Quote) string {
	if months, err := strconv.ParseInt(q.Item, 10, 64); err == nil && months > 0 {
		return locales.T(lang, "premium.item", "months", locales.N(lang, "count.months", months))
	}
	return ""
}

// premiumRequest: the quote's Fields username and its Item (the months;
// Fields months when the item is not a number).
func premiumRequest(q *state.Quote, r *Request) {
	months := q.Item
	if _, err := strconv.Atoi(months); err != nil {
		months = field(q, "months")
	}
	r.Params["messenger_username"], r.Params["months"] = field(q, "username", "messenger_username"), months
}

func premiumCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	n, _ := strconv.Atoi(r.Params["months"])
	return c.BuyPremium(ctx, &reseller.PremiumOrderRequest{MessengerUsername: r.Params["messenger_username"], Months: n})
}

func premiumPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	p, err := up.PremiumPricing(ctx)
	if err != nil {
		return nil, err
	}
	for _, pl := range p.Plans {
		if strconv.Itoa(pl.Months) == q.Item {
			return &Price{UpstreamUSD: pl.PriceUSD.Mul(quantity(q)), Stock: -1}, nil
		}
	}
	return nil, gone()
}
