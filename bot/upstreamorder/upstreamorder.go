package upstreamorder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// line is one product line's upstream side; each has its own file.
type line struct {
	id  string             // the shop's line id, as flows/lines names it
	typ reseller.OrderType // its upstream order type
	// echoed lists the request params the upstream's order object echoes
	// (reseller-api.md "Order"), in the order Kind hashes them: the slot
	// names running shops stored depend on it.
	echoed []string
	// responseKeys names the echoed params the order object calls
	// otherwise than the request.
	responseKeys map[string]string
	// build fills the create request's params and fields from the quote.
	build func(q *state.Quote, r *Request)
	// create POSTs the request to the line's endpoint.
	create func(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error)
	// reprice reads the current upstream price of the quote's item.
	reprice func(ctx context.Context, up Prices, q *state.Quote) (*Price, error)
	// name, when set, writes the item's name in the buyer's language (the
	// shop named it, not the upstream); "" falls back to the quote's name.
	name func(lang locales.Lang, q *state.Quote) string
	// recipient says the quote names who receives the order (a username,
	// a store login, an invite link), which the buyer's order shows again.
	// The field answers of services and in-game top-ups (which may hold a
	// password) are never repeated.
	recipient bool
}

// all are the eight lines.
var all = []*line{topup, stars, premium, services, gifts, giftcards, keys, games}

var byID, byType = index(all)

func index(list []*line) (map[string]*line, map[reseller.OrderType]*line) {
	ids, types := map[string]*line{}, map[reseller.OrderType]*line{}
	for _, l := range list {
		ids[l.id], types[l.typ] = l, l
	}
	return ids, types
}

// TypeOf is the upstream order type of a product line ("" for none).
func TypeOf(line string) reseller.OrderType {
	if l := byID[line]; l != nil {
		return l.typ
	}
	return ""
}

// Request is the exact create request, stored on the order before the
// POST: its type, its wire params and the buyer fields. Its JSON is what
// running shops keep in Redis.
type Request struct {
	Type   reseller.OrderType `json:"type"`
	Params map[string]string  `json:"params"`
	Fields map[string]string  `json:"fields,omitempty"`
}

// Build turns a quote into the upstream request of its line.
func Build(q *state.Quote) (*Request, error) {
	l, ok := byID[q.Line]
	if !ok {
		return nil, fmt.Errorf("unknown product line %q", q.Line)
	}
	r := &Request{Type: l.typ, Params: map[string]string{}}
	l.build(q, r)
	return r, nil
}

// Stored reads the request stored on an order; ok is false when there is
// none or it is unreadable.
func Stored(o *state.Order) (r *Request, ok bool) {
	if len(o.Request) == 0 {
		return nil, false
	}
	r = &Request{}
	if err := json.Unmarshal(o.Request, r); err != nil {
		return nil, false
	}
	return r, true
}

// Create POSTs the request to its line's endpoint.
func Create(ctx context.Context, c *reseller.Client, r *Request) (*reseller.Order, error) {
	l, ok := byType[r.Type]
	if !ok {
		return nil, fmt.Errorf("unknown order type %q", r.Type)
	}
	return l.create(ctx, c, r)
}

// echoed lists the params the upstream echoes for orders of type t.
func echoed(t reseller.OrderType) []string {
	if l := byType[t]; l != nil {
		return l.echoed
	}
	return nil
}

// responseKey names a request param in the upstream order object.
func responseKey(t reseller.OrderType, k string) string {
	if l := byType[t]; l != nil {
		if v, ok := l.responseKeys[k]; ok {
			return v
		}
	}
	return k
}

// Kind is the request's placement slot name: its type and a hash of the
// params the upstream echoes (no buyer value is readable from it).
func (r *Request) Kind() string {
	var b strings.Builder
	for _, k := range echoed(r.Type) {
		fmt.Fprintf(&b, "%s=%s\x00", k, norm(k, r.Params[k]))
	}
	sum := sha256.Sum256([]byte(b.String()))
	return strings.ToLower(string(r.Type)) + ":" + hex.EncodeToString(sum[:8])
}

// Fungible reports whether the upstream echoes everything the request
// sends: two unclaimed orders of its kind are then the same purchase, and
// either may serve either buyer.
//
// Gift cards are: their codes leave only once the order's claim is older
// than what a Redis crash can lose (fulfil's Config.CodeSettle), so an
// unclaimed gift-card order's codes never reached anyone, and identical
// cards serve any buyer of that card. Game keys echo nothing, so two are
// never provably the same purchase.
func (r *Request) Fungible() bool {
	if len(r.Fields) > 0 {
		return false
	}
	for k := range r.Params {
		if !slices.Contains(echoed(r.Type), k) {
			return false
		}
	}
	return true
}

// Signature is the request's identity: a hash of the type, the buyer
// fields, the item and the quantity (no buyer value is readable from it).
func (r *Request) Signature() string {
	var b strings.Builder
	b.WriteString(string(r.Type))
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		fmt.Fprintf(&b, "\x00%s=%s", k, norm(k, r.Params[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Fields)) {
		fmt.Fprintf(&b, "\x00f.%s=%s", k, strings.TrimSpace(r.Fields[k]))
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// Match says how an upstream order compares with a request.
type Match int

const (
	// NoMatch: the type or an echoed param differs.
	NoMatch Match = iota
	// PossibleMatch: nothing differs, but an echoed param is missing.
	PossibleMatch
	// FullMatch: every echoed param present and equal.
	FullMatch
)

// Match compares an upstream order with the request on the type and every
// echoed param.
func (r *Request) Match(u *reseller.Order) Match {
	if !u.Type.Is(r.Type) {
		return NoMatch
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(u.Raw, &m); err != nil {
		return NoMatch
	}
	res := FullMatch
	for _, k := range echoed(r.Type) {
		want, sent := r.Params[k]
		if !sent {
			continue
		}
		raw, ok := m[responseKey(r.Type, k)]
		if !ok || string(raw) == "null" {
			res = PossibleMatch
			continue
		}
		if norm(k, scalar(raw)) != norm(k, want) {
			return NoMatch
		}
	}
	return res
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

// scalar is a JSON value as text: a string's contents, anything else as
// written.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// field is the first of the quote's buyer fields named that is set.
func field(q *state.Quote, names ...string) string {
	for _, n := range names {
		if v := q.Fields[n]; v != "" {
			return v
		}
	}
	return ""
}

// Prices is what re-pricing reads of the reseller (reseller.Client
// implements it).
type Prices interface {
	GiftCardOffers(ctx context.Context, categoryID string) (*reseller.GiftCardOffers, error)
	GameKeyOffers(ctx context.Context, gameID string) (*reseller.GameKeyOffers, error)
	StarsPricing(ctx context.Context) (*reseller.StarsPricing, error)
	PremiumPricing(ctx context.Context) (*reseller.PremiumPricing, error)
	TopUpOffers(ctx context.Context, categoryID string) (*reseller.TopUpOffers, error)
	ManualServiceOffers(ctx context.Context, serviceID string) (*reseller.ManualOffers, error)
	StoreGiftOffers(ctx context.Context, appID int64) (*reseller.StoreGiftOffers, error)
	StoreRates(ctx context.Context) (*reseller.StoreRates, error)
}

// Price is what a quote's item costs upstream now.
type Price struct {
	UpstreamUSD decimal.Decimal // for the quote's whole quantity
	Stock       int             // units available; -1 when the line has no stock
}

// Reprice reads the current upstream price (uncached) of q's item for q's
// quantity. An item that is gone is a *reseller.Error with status 404. A
// line without a re-price is an error: it cannot be checked, so it cannot
// be paid.
func Reprice(ctx context.Context, up Prices, q *state.Quote) (*Price, error) {
	l, ok := byID[q.Line]
	if !ok || l.reprice == nil {
		return nil, fmt.Errorf("re-price quote %s: line %q has no re-price", q.ID, q.Line)
	}
	return l.reprice(ctx, up, q)
}

// gone is the answer for a quoted item the upstream no longer offers.
func gone() error {
	return &reseller.Error{Status: 404, Type: reseller.ErrorTypeNotFound, Message: "item no longer offered"}
}

// quantity is the quote's quantity, to multiply a unit price by.
func quantity(q *state.Quote) decimal.Decimal { return decimal.NewFromInt(int64(q.Quantity)) }
