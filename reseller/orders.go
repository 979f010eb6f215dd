package reseller

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/internal/check"
	"shopbot/reseller/internal/rawjson"
	"shopbot/reseller/internal/transport"
)

// OrderType is an order's product line. Responses use the lowercase forms
// below; the /orders filter uses the uppercase form (see Filter). A value
// not listed here is kept as given.
type OrderType string

// Product lines as they appear in responses.
const (
	OrderTypeStoreTopup       OrderType = "store_topup"
	OrderTypeMessengerStars   OrderType = "messenger_stars"
	OrderTypeMessengerPremium OrderType = "messenger_premium"
	OrderTypeManualService    OrderType = "manual_service"
	OrderTypeStoreGift        OrderType = "store_gift"
	OrderTypeGiftCard         OrderType = "gift_card"
	OrderTypeGameKey          OrderType = "game_key"
	OrderTypeGameTopup        OrderType = "game_topup"
)

// Filter returns the uppercase form used by the GET /orders type filter,
// for example "GIFT_CARD".
func (t OrderType) Filter() string { return strings.ToUpper(string(t)) }

// Is reports whether t and u name the same product line, ignoring case.
func (t OrderType) Is(u OrderType) bool { return strings.EqualFold(string(t), string(u)) }

// OrderStatus is an order's state. Responses use the lowercase forms below;
// the /orders filter uses the uppercase form (see Filter).
type OrderStatus string

// Order states as they appear in responses.
const (
	OrderCreated    OrderStatus = "created"
	OrderProcessing OrderStatus = "processing"
	OrderCompleted  OrderStatus = "completed"
	OrderFailed     OrderStatus = "failed"
	OrderRefund     OrderStatus = "refund"
)

// Filter returns the uppercase form used by the GET /orders status filter,
// for example "COMPLETED".
func (s OrderStatus) Filter() string { return strings.ToUpper(string(s)) }

// Is reports whether s and u name the same state, ignoring case.
func (s OrderStatus) Is(u OrderStatus) bool { return strings.EqualFold(string(s), string(u)) }

// Terminal reports whether the order will not change any more: completed,
// failed or refund.
func (s OrderStatus) Terminal() bool {
	return s.Is(OrderCompleted) || s.Is(OrderFailed) || s.Is(OrderRefund)
}

var orderTypeFilters = map[string]bool{
	"STORE_TOPUP": true, "MESSENGER_STARS": true, "MESSENGER_PREMIUM": true, "MANUAL_SERVICE": true,
	"STORE_GIFT": true, "GIFT_CARD": true, "GAME_KEY": true, "GAME_TOPUP": true,
}

var orderStatusFilters = map[string]bool{
	"CREATED": true, "PROCESSING": true, "COMPLETED": true, "FAILED": true, "REFUND": true,
}

// StatusChange is one entry of an order's status history.
type StatusChange struct {
	// Status is the state entered.
	Status OrderStatus `json:"status"`
	// Reason is why; "" when null.
	Reason string `json:"reason"`
	// At is when.
	At time.Time `json:"at"`
}

// Order is an upstream order (object "order"), as returned by the
// order-creating endpoints, by GET /orders/{number} and inside OrderList.
//
// Fields of other product lines are null or absent upstream. Here a null or
// absent string is "", a null or absent integer is 0 (no valid value is 0),
// and the fields where null carries meaning are pointers: Amount, AmountUSD,
// ChatRequired and DeadlineAt. Raw keeps the whole object, including any
// fields of in-game top-up orders, which the spec does not show (do not rely
// on them: the order object of an in-game top-up or a game-key order is not
// documented to echo any request field, and a manual-service order does not
// echo the buyer's fields).
type Order struct {
	// Object is "order".
	Object string `json:"object"`
	// Number identifies the order.
	Number int64 `json:"number"`
	// Type is the product line, lowercase (for example "gift_card").
	Type OrderType `json:"type"`
	// Status is created, processing, completed, failed or refund.
	Status OrderStatus `json:"status"`
	// StatusReason explains the status; "" when null.
	StatusReason string `json:"status_reason"`
	// ChargedUSD is what was taken from the balance.
	ChargedUSD Money `json:"charged_usd"`
	// CreatedAt is when the order was placed.
	CreatedAt time.Time `json:"created_at"`
	// StatusHistory is present only on GET /orders/{number}.
	StatusHistory []StatusChange `json:"status_history"`

	// StoreLogin is the store account topped up (store top-up).
	StoreLogin string `json:"store_login"`
	// Currency is USD, RUB, UAH or KZT (store top-up).
	Currency Currency `json:"currency"`
	// Amount is the top-up in Currency (store top-up); nil otherwise.
	Amount *Money `json:"amount"`
	// AmountUSD is the top-up in USD (store top-up); nil otherwise.
	AmountUSD *Money `json:"amount_usd"`

	// MessengerUsername is the recipient (messenger Stars and Premium).
	MessengerUsername string `json:"messenger_username"`
	// Stars is the quantity of Stars (messenger Stars).
	Stars int `json:"stars"`
	// Months is the Premium duration (messenger Premium).
	Months int `json:"months"`

	// ServiceID is the manual service (manual service).
	ServiceID string `json:"service_id"`
	// ServiceName is the manual service's name (manual service).
	ServiceName string `json:"service_name"`
	// ProductID is the offer ordered (manual service).
	ProductID string `json:"product_id"`
	// ProductName is the offer's name (manual service).
	ProductName string `json:"product_name"`
	// ManualKind is transfer or replenishment (manual service).
	ManualKind string `json:"manual_kind"`
	// ChatRequired says whether the order chat is needed (manual service);
	// nil when null or absent.
	ChatRequired *bool `json:"chat_required"`
	// DeadlineAt is the fulfilment deadline (manual service); nil when null.
	DeadlineAt *time.Time `json:"deadline_at"`

	// AppID is the store game (store gift).
	AppID int64 `json:"app_id"`
	// AppName is the store game's name (store gift).
	AppName string `json:"app_name"`
	// SubID is the edition (store gift).
	SubID int64 `json:"sub_id"`
	// OfferName is the edition's name (store gift).
	OfferName string `json:"offer_name"`
	// Region is the price region (store gift).
	Region string `json:"region"`
	// InviteURL is the friend-invite URL that receives the gift (store gift).
	InviteURL string `json:"invite_url"`

	// CategoryID is the gift-card category (gift card).
	CategoryID string `json:"category_id"`
	// CategoryName is the category's name (gift card).
	CategoryName string `json:"category_name"`
	// CardID is the card (gift card).
	CardID string `json:"card_id"`
	// CardName is the card's name (gift card).
	CardName string `json:"card_name"`
	// Quantity is the number of codes or keys ordered (gift card).
	Quantity int `json:"quantity"`
	// Codes are the delivered gift-card codes, filled once completed. Items
	// that are not strings are turned into text as DeliveredKeys does.
	Codes []string `json:"codes"`

	// Keys are the delivered game keys as received (item shape not shown by
	// the spec): one raw JSON value per item. The spec places them on the
	// order fetched by number (Client.Order); a listed or just-created order
	// may lack them. See DeliveredKeys.
	Keys RawList `json:"keys"`

	// Raw is the whole order object as received. It is not written by
	// json.Marshal.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes an order, keeps the raw object in Raw and tolerates
// codes that are not plain strings. JSON null leaves o unchanged.
func (o *Order) UnmarshalJSON(data []byte) error {
	if rawjson.IsNull(data) {
		return nil
	}
	type plain Order
	var p struct {
		plain
		Codes RawList `json:"codes"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*o = Order(p.plain)
	o.Codes = nil
	for _, item := range p.Codes {
		if s := rawjson.ItemText(item); s != "" {
			o.Codes = append(o.Codes, s)
		}
	}
	o.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// DeliveredKeys returns the delivered game keys as text a buyer can use:
// a string item as it is; for an object the first of key, code, value,
// serial, serial_number, activation_key, activation_code, license,
// license_key, cd_key or text, followed by a pin or password when the object
// has one; otherwise the compact JSON of the item. Empty and null items are
// skipped.
func (o *Order) DeliveredKeys() []string {
	var out []string
	for _, item := range o.Keys {
		if s := rawjson.ItemText(item); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// DeliverableCodes returns everything a buyer should receive: Codes, then
// DeliveredKeys, without duplicates, in order.
func (o *Order) DeliverableCodes() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range append(append([]string(nil), o.Codes...), o.DeliveredKeys()...) {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// RawField returns the raw JSON of a top-level field of the order as
// received (for example the fields of in-game top-up orders, which the spec
// does not show), and whether it was present.
func (o *Order) RawField(name string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(o.Raw, &m); err != nil {
		return nil, false
	}
	v, ok := m[name]
	return v, ok
}

// OrderList is one page of orders (object "list"), newest first.
type OrderList struct {
	// Object is "list".
	Object string `json:"object"`
	// Data holds the page's orders.
	Data []Order `json:"data"`
	// Limit is the page size applied.
	Limit int `json:"limit"`
	// HasMore says whether older orders follow.
	HasMore bool `json:"has_more"`
	// NextCursor is the cursor of the next page; nil on the last page.
	NextCursor *int64 `json:"next_cursor"`
}

// OrdersOptions filters GET /orders. Zero fields are not sent.
type OrdersOptions struct {
	// Limit is the page size, 1 to 100 (server default 20).
	Limit int
	// Cursor returns orders older than this order number (at least 1).
	Cursor int64
	// Status filters by state; either case is accepted (sent uppercase).
	Status OrderStatus
	// Type filters by product line; either case is accepted (sent uppercase).
	Type OrderType
}

// Validate checks the options against the spec's ranges and values.
func (o *OrdersOptions) Validate() error {
	if o == nil {
		return nil
	}
	if err := checkPage(o.Limit, o.Cursor); err != nil {
		return err
	}
	if o.Status != "" && !orderStatusFilters[o.Status.Filter()] {
		return invalid("status", "unknown order status %q", o.Status)
	}
	if o.Type != "" && !orderTypeFilters[o.Type.Filter()] {
		return invalid("type", "unknown order type %q", o.Type)
	}
	return nil
}

func (o *OrdersOptions) query() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := pageQuery(o.Limit, o.Cursor)
	if o.Status != "" {
		q.Set("status", o.Status.Filter())
	}
	if o.Type != "" {
		q.Set("type", o.Type.Filter())
	}
	return q
}

// Orders returns one page of orders, newest first: GET /orders. opts may be
// nil.
func (c *Client) Orders(ctx context.Context, opts *OrdersOptions) (*OrderList, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return getJSON[OrderList](ctx, c, "GET /orders", "/orders", opts.query())
}

// AllOrders iterates over every order matching opts, newest first,
// following next_cursor from page to page (opts.Cursor is the starting
// point, opts.Limit the page size). An error is yielded once, as the last
// element.
//
// The caller may stop at any time by breaking out of the loop: no further
// page is fetched after that. Order numbers grow with newness, so a caller
// looking for the orders above a watermark number can break at the first
// order whose number is at or below it; OrdersAbove does exactly that.
func (c *Client) AllOrders(ctx context.Context, opts *OrdersOptions) iter.Seq2[Order, error] {
	var o OrdersOptions
	if opts != nil {
		o = *opts
	}
	return transport.Paginate(ctx, o.Cursor, func(ctx context.Context, cursor int64) ([]Order, bool, *int64, error) {
		page := o
		page.Cursor = cursor
		l, err := c.Orders(ctx, &page)
		if err != nil {
			return nil, false, nil, err
		}
		return l.Data, l.HasMore, l.NextCursor, nil
	})
}

// OrdersAbove iterates, newest first, over the orders matching opts whose
// number is greater than watermark (for example a number returned by
// NewestOrderNumber before a create), and stops at the first order at or
// below it without fetching a further page. watermark 0 lists every order.
// opts may be nil; opts.Cursor, when set, is the starting point as in
// AllOrders. An error is yielded once, as the last element.
func (c *Client) OrdersAbove(ctx context.Context, watermark int64, opts *OrdersOptions) iter.Seq2[Order, error] {
	return func(yield func(Order, error) bool) {
		if watermark < 0 {
			yield(Order{}, invalid("watermark", "must be at least 0, got %d", watermark))
			return
		}
		for o, err := range c.AllOrders(ctx, opts) {
			if err != nil {
				yield(Order{}, err)
				return
			}
			if o.Number <= watermark {
				return
			}
			if !yield(o, nil) {
				return
			}
		}
	}
}

// NewestOrderNumber returns the number of the newest upstream order, of
// type typ when typ is not empty, or 0 when there is none: one GET
// /orders?limit=1 (with &type=... for a type). Order numbers grow with
// newness, so a number read before a create is a watermark: an order that
// create made, if any, has a greater number (see OrdersAbove).
func (c *Client) NewestOrderNumber(ctx context.Context, typ OrderType) (int64, error) {
	l, err := c.Orders(ctx, &OrdersOptions{Limit: 1, Type: typ})
	if err != nil {
		return 0, err
	}
	if len(l.Data) == 0 {
		return 0, nil
	}
	return l.Data[0].Number, nil
}

// Order returns one order with its status history and delivered codes or
// keys: GET /orders/{number}.
func (c *Client) Order(ctx context.Context, number int64) (*Order, error) {
	if err := check.Number("number", number); err != nil {
		return nil, err
	}
	path := "/orders/" + strconv.FormatInt(number, 10)
	return getJSON[Order](ctx, c, "GET /orders/{number}", path, nil)
}

// RawList is a JSON array kept as one raw JSON value per item. It also
// accepts a single non-array value (as one item) and null (as empty).
type RawList []json.RawMessage

// UnmarshalJSON keeps each item's raw JSON.
func (l *RawList) UnmarshalJSON(data []byte) error {
	items, err := rawjson.List(data)
	if err != nil {
		return err
	}
	*l = items
	return nil
}
