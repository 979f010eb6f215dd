package upstreamorder

import (
	"context"
	"strconv"

	"shopbot/reseller"
	"shopbot/state"
)

// gifts is a store game sent as a gift: an edition of a game in a region,
// to the buyer's friend-invite link. The upstream echoes all of it.
var gifts = &line{
	id: "gifts", typ: reseller.OrderTypeStoreGift,
	echoed:    []string{"app_id", "sub_id", "region", "invite_url"},
	build:     giftsRequest,
	create:    giftsCreate,
	reprice:   giftsPrice,
	recipient: true,
}

// giftsRequest: the quote's Category (the app id), Item (the sub id) and
// Fields region and invite_url.
func giftsRequest(q *state.Quote, r *Request) {
	r.Params["app_id"], r.Params["sub_id"] = q.Category, q.Item
	r.Params["region"], r.Params["invite_url"] = field(q, "region"), field(q, "invite_url")
}

func giftsCreate(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	p := r.Params
	app, _ := strconv.ParseInt(p["app_id"], 10, 64)
	sub, _ := strconv.ParseInt(p["sub_id"], 10, 64)
	return c.CreateStoreGiftOrder(ctx, &reseller.StoreGiftOrderRequest{AppID: app, SubID: sub, Region: p["region"], InviteURL: p["invite_url"]})
}

// giftsPrice is the edition's price in the quote's region.
func giftsPrice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	app, err := strconv.ParseInt(q.Category, 10, 64)
	if err != nil {
		return nil, gone()
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
				return &Price{UpstreamUSD: r.PriceUSD.Mul(quantity(q)), Stock: -1}, nil
			}
		}
	}
	return nil, gone()
}
