package fulfil

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"shopbot/reseller"
	"shopbot/state"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// upstreamRequest is the exact create request, stored on the order before
// the POST: its type, its wire parameters and the buyer fields.
type upstreamRequest struct {
	Type   reseller.OrderType `json:"type"`
	Params map[string]string  `json:"params"`
	Fields map[string]string  `json:"fields,omitempty"`
}

// lineTypes maps the shop's product lines to upstream order types.
var lineTypes = map[string]reseller.OrderType{
	"topup": reseller.OrderTypeStoreTopup, "stars": reseller.OrderTypeMessengerStars,
	"premium": reseller.OrderTypeMessengerPremium, "services": reseller.OrderTypeManualService,
	"gifts": reseller.OrderTypeStoreGift, "giftcards": reseller.OrderTypeGiftCard,
	"keys": reseller.OrderTypeGameKey, "games": reseller.OrderTypeGameTopup,
}

// QuoteOf decodes the quote an order was bought from.
func QuoteOf(o *state.Order) (*state.Quote, error) {
	var q state.Quote
	if err := json.Unmarshal(o.Item, &q); err != nil {
		return nil, fmt.Errorf("order %d: decode quote: %w", o.ID, err)
	}
	if q.Line == "" {
		q.Line = o.Line
	}
	return &q, nil
}

// buildRequest turns a quote into the upstream request. The quote's fields
// per line: topup Fields store_login (or login), currency, amount; stars
// Fields username and Quantity; premium Fields username and Item (months);
// services Category (service) and Item (offer) with Fields; gifts Category
// (app id), Item (sub id), Fields region and invite_url; giftcards and keys
// Category and Item with Quantity; games Category and Item (offer) with
// Fields.
func buildRequest(q *state.Quote) (*upstreamRequest, error) {
	t, ok := lineTypes[q.Line]
	if !ok {
		return nil, fmt.Errorf("unknown product line %q", q.Line)
	}
	r := &upstreamRequest{Type: t, Params: map[string]string{}}
	qty := strconv.Itoa(q.Quantity)
	field := func(names ...string) string {
		for _, n := range names {
			if v := q.Fields[n]; v != "" {
				return v
			}
		}
		return ""
	}
	switch t {
	case reseller.OrderTypeStoreTopup:
		cur := field("currency")
		if cur == "" {
			cur = "USD"
		}
		r.Params["store_login"], r.Params["currency"], r.Params["amount"] = field("store_login", "login"), cur, field("amount")
	case reseller.OrderTypeMessengerStars:
		r.Params["messenger_username"], r.Params["quantity"] = field("username", "messenger_username"), qty
	case reseller.OrderTypeMessengerPremium:
		months := q.Item
		if _, err := strconv.Atoi(months); err != nil {
			months = field("months")
		}
		r.Params["messenger_username"], r.Params["months"] = field("username", "messenger_username"), months
	case reseller.OrderTypeManualService:
		r.Params["service_id"], r.Params["product_id"] = q.Category, q.Item
		r.Fields = maps.Clone(q.Fields)
	case reseller.OrderTypeStoreGift:
		r.Params["app_id"], r.Params["sub_id"] = q.Category, q.Item
		r.Params["region"], r.Params["invite_url"] = field("region"), field("invite_url")
	case reseller.OrderTypeGiftCard:
		r.Params["category_id"], r.Params["card_id"], r.Params["quantity"] = q.Category, q.Item, qty
	case reseller.OrderTypeGameKey:
		r.Params["game_id"], r.Params["key_id"], r.Params["quantity"] = q.Category, q.Item, qty
	case reseller.OrderTypeGameTopup:
		r.Params["category_id"], r.Params["offer_id"] = q.Category, q.Item
		r.Fields = maps.Clone(q.Fields)
	}
	return r, nil
}

// norm makes a request or response value comparable.
func norm(key, v string) string {
	v = strings.TrimSpace(v)
	switch key {
	case "messenger_username":
		return strings.ToLower(strings.TrimPrefix(v, "@"))
	case "amount":
		if d, err := decimal.NewFromString(v); err == nil {
			return d.String()
		}
	case "currency", "region":
		return strings.ToUpper(v)
	}
	return v
}

// create POSTs the request to its endpoint.
func (f *Fulfiller) create(ctx context.Context, r *upstreamRequest) (*reseller.Order, error) {
	p, c := r.Params, f.up
	num := func(k string) int { n, _ := strconv.Atoi(p[k]); return n }
	num64 := func(k string) int64 { n, _ := strconv.ParseInt(p[k], 10, 64); return n }
	switch r.Type {
	case reseller.OrderTypeStoreTopup:
		amount, err := decimal.NewFromString(p["amount"])
		if err != nil {
			return nil, &reseller.ValidationError{Field: "amount", Reason: "not a decimal"}
		}
		return c.CreateStoreTopupOrder(ctx, &reseller.StoreTopupOrderRequest{
			StoreLogin: p["store_login"], Currency: reseller.Currency(p["currency"]), Amount: amount})
	case reseller.OrderTypeMessengerStars:
		return c.BuyStars(ctx, &reseller.StarsOrderRequest{MessengerUsername: p["messenger_username"], Quantity: num("quantity")})
	case reseller.OrderTypeMessengerPremium:
		return c.BuyPremium(ctx, &reseller.PremiumOrderRequest{MessengerUsername: p["messenger_username"], Months: num("months")})
	case reseller.OrderTypeManualService:
		return c.CreateManualServiceOrder(ctx, &reseller.ManualServiceOrderRequest{ServiceID: p["service_id"], ProductID: p["product_id"], Fields: r.Fields})
	case reseller.OrderTypeStoreGift:
		return c.CreateStoreGiftOrder(ctx, &reseller.StoreGiftOrderRequest{AppID: num64("app_id"), SubID: num64("sub_id"), Region: p["region"], InviteURL: p["invite_url"]})
	case reseller.OrderTypeGiftCard:
		return c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: p["category_id"], CardID: p["card_id"], Quantity: num("quantity")})
	case reseller.OrderTypeGameKey:
		return c.CreateGameKeyOrder(ctx, &reseller.GameKeyOrderRequest{GameID: p["game_id"], KeyID: p["key_id"], Quantity: num("quantity")})
	case reseller.OrderTypeGameTopup:
		return c.CreateTopUpOrder(ctx, &reseller.TopUpOrderRequest{CategoryID: p["category_id"], OfferID: p["offer_id"], Fields: r.Fields})
	}
	return nil, fmt.Errorf("unknown order type %q", r.Type)
}

func newAttemptID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
