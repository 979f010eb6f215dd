package resellersim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/resellersim/chat"
	"shopbot/reseller/resellersim/internal/wire"

	"github.com/shopspring/decimal"
)

// Product lines, in the lowercase form of an order's type.
const (
	LineStoreTopup       = "store_topup"
	LineMessengerStars   = "messenger_stars"
	LineMessengerPremium = "messenger_premium"
	LineManualService    = "manual_service"
	LineStoreGift        = "store_gift"
	LineGiftCard         = "gift_card"
	LineGameKey          = "game_key"
	LineGameTopup        = "game_topup"
)

// Order statuses.
const (
	OrderCreated    = "created"
	OrderProcessing = "processing"
	OrderCompleted  = "completed"
	OrderFailed     = "failed"
	OrderRefund     = "refund"
)

const (
	defaultFailReason   = "The supplier could not fulfil the order"
	defaultRefundReason = "The order was refunded by the supplier"
)

// StatusChange is one entry of an order's status history.
type StatusChange struct {
	Status string
	Reason string
	At     time.Time
}

// DeliveredKey is a game key delivered on a completed game-key order.
type DeliveredKey struct {
	Key  string
	Name string
}

// OrderSnapshot is a copy of an order's state. Only the fields of the
// order's line are set.
type OrderSnapshot struct {
	Number       int
	Type         string // one of the Line constants
	Status       string // one of the Order status constants
	StatusReason string
	ChargedUSD   decimal.Decimal
	CreatedAt    time.Time
	History      []StatusChange

	// Store top-up.
	StoreLogin string
	Currency   string
	Amount     decimal.Decimal
	AmountUSD  decimal.Decimal

	// Messenger Stars and Premium.
	MessengerUsername string
	Stars             int
	Months            int

	// Manual services.
	ServiceID    string
	ServiceName  string
	ProductID    string
	ProductName  string
	ManualKind   string
	ChatRequired bool
	DeadlineAt   time.Time

	// Store gifts.
	AppID     int
	AppName   string
	SubID     int
	Region    string
	InviteURL string

	// Gift cards and game top-ups.
	CategoryID   string
	CategoryName string
	// Gift cards.
	CardID   string
	CardName string
	// Game keys.
	GameID   string
	GameName string
	KeyID    string
	KeyName  string
	// Game top-ups; OfferName is also the store-gift edition name.
	OfferID   string
	OfferName string

	// Quantity of gift-card and game-key orders.
	Quantity int
	// Fields are the buyer fields of game top-up and manual service orders.
	Fields map[string]string
	// Codes are the delivered gift-card codes.
	Codes []string
	// Keys are the delivered game keys.
	Keys []DeliveredKey
}

func (o OrderSnapshot) clone() OrderSnapshot {
	o.History = slices.Clone(o.History)
	o.Fields = maps.Clone(o.Fields)
	o.Codes = slices.Clone(o.Codes)
	o.Keys = slices.Clone(o.Keys)
	return o
}

// final reports whether the status is an end state.
func final(status string) bool {
	return status == OrderCompleted || status == OrderFailed || status == OrderRefund
}

type order struct {
	OrderSnapshot
	behavior Behavior
	reads    int  // reads by number (Behavior.CompleteOnRead)
	stock    *int // catalog stock taken by the order, restored on failure
	chat     *chat.Chat
}

// behaviorFor resolves the behavior of a new order from its keys, most
// specific first.
func (s *Sim) behaviorFor(keys []string) Behavior {
	for _, k := range keys {
		if b, ok := s.behaviors[k]; ok {
			return b
		}
	}
	return s.defaultBeh
}

// createOrder charges the balance and records o. keys name the order's
// items, most specific first; the line is added.
func (s *Sim) createOrder(now time.Time, o *order, keys ...string) (*order, error) {
	if o.ChargedUSD.GreaterThan(s.balance) {
		return nil, wire.Invalid("insufficient balance: the order costs %s USD, the balance is %s USD",
			wire.USD(o.ChargedUSD), wire.USD(s.balance))
	}
	o.Number = s.nextOrder
	s.nextOrder++
	o.Status = OrderCreated
	o.CreatedAt = now
	o.History = []StatusChange{{Status: OrderCreated, At: now}}
	switch o.Type {
	case LineMessengerStars:
		keys = append(keys, "stars")
	case LineMessengerPremium:
		keys = append(keys, "premium")
	}
	o.behavior = s.behaviorFor(append(keys, o.Type))
	if o.stock != nil {
		*o.stock -= max(o.Quantity, 1)
	}
	s.balance = s.balance.Sub(o.ChargedUSD)
	s.totalOrders++
	s.totalSpent = s.totalSpent.Add(o.ChargedUSD)
	s.record(selfAccount, "DEBIT", "ORDER", "COMPLETED", o.ChargedUSD, s.balance,
		fmt.Sprintf("Order #%d (%s)", o.Number, o.Type), now)
	if o.Type == LineManualService {
		o.chat = &chat.Chat{}
		if o.ChatRequired {
			s.openChat(o, now)
		}
	}
	s.orders = append(s.orders, o)
	s.ordersByNum[o.Number] = o
	return o, nil
}

// advanceLocked applies every transition due at now.
func (s *Sim) advanceLocked(now time.Time) {
	for _, o := range s.orders {
		if !final(o.Status) {
			s.progress(o, now)
		}
	}
}

// progress moves o along its behavior up to now.
func (s *Sim) progress(o *order, now time.Time) {
	b := o.behavior
	procAt := o.CreatedAt.Add(max(b.ProcessingAfter, 0))
	if o.Status == OrderCreated && !now.Before(procAt) {
		s.setStatus(o, OrderProcessing, "", procAt)
	}
	if b.Mode == Stay || o.Status != OrderProcessing || b.CompleteOnRead > 0 {
		return
	}
	finalAt := o.CreatedAt.Add(max(b.CompleteAfter, b.ProcessingAfter, 0))
	if !now.Before(finalAt) {
		s.finish(o, b.Mode, b.Reason, finalAt)
	}
}

func (s *Sim) setStatus(o *order, status, reason string, at time.Time) {
	o.Status, o.StatusReason = status, reason
	o.History = append(o.History, StatusChange{Status: status, Reason: reason, At: at})
}

// finish ends o: completed with its delivery, or failed/refund with the
// charge credited back.
func (s *Sim) finish(o *order, mode Mode, reason string, at time.Time) {
	if o.Status == OrderCreated {
		s.setStatus(o, OrderProcessing, "", at)
	}
	switch mode {
	case Fail, Refund:
		status, def := OrderFailed, defaultFailReason
		if mode == Refund {
			status, def = OrderRefund, defaultRefundReason
		}
		if reason == "" {
			reason = def
		}
		s.setStatus(o, status, reason, at)
		s.balance = s.balance.Add(o.ChargedUSD)
		s.totalSpent = s.totalSpent.Sub(o.ChargedUSD)
		s.record(selfAccount, "CREDIT", "ORDER", "COMPLETED", o.ChargedUSD, s.balance,
			fmt.Sprintf("Refund for order #%d", o.Number), at)
		if o.stock != nil {
			*o.stock += max(o.Quantity, 1)
		}
	default:
		s.deliver(o)
		s.setStatus(o, OrderCompleted, "", at)
	}
}

const codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// deliver fills the codes or keys of a completed order, deterministically
// from the Sim's seed and the order number.
func (s *Sim) deliver(o *order) {
	rng := rand.New(rand.NewPCG(uint64(s.seed), uint64(o.Number)))
	code := func(groups, size int) string {
		var b strings.Builder
		for g := range groups {
			if g > 0 {
				b.WriteByte('-')
			}
			for range size {
				b.WriteByte(codeAlphabet[rng.IntN(len(codeAlphabet))])
			}
		}
		return b.String()
	}
	switch o.Type {
	case LineGiftCard:
		o.Codes = make([]string, o.Quantity)
		for i := range o.Codes {
			o.Codes[i] = code(4, 4)
		}
	case LineGameKey:
		o.Keys = make([]DeliveredKey, o.Quantity)
		for i := range o.Keys {
			o.Keys[i] = DeliveredKey{Key: code(3, 5), Name: o.KeyName}
		}
	}
}

// endOrder ends order n by hand.
func (s *Sim) endOrder(n int, mode Mode, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	s.advanceLocked(now)
	o, ok := s.ordersByNum[n]
	if !ok {
		return fmt.Errorf("order %d not found", n)
	}
	if final(o.Status) {
		return fmt.Errorf("order %d is already %s", n, o.Status)
	}
	s.finish(o, mode, reason, now)
	return nil
}

// CompleteOrder completes order n now, delivering its codes or keys. It
// fails when the order does not exist or has already ended.
func (s *Sim) CompleteOrder(n int) error { return s.endOrder(n, Complete, "") }

// FailOrder fails order n now with reason and credits its charge back.
func (s *Sim) FailOrder(n int, reason string) error { return s.endOrder(n, Fail, reason) }

// RefundOrder moves order n to the refund status now and credits its charge back.
func (s *Sim) RefundOrder(n int, reason string) error { return s.endOrder(n, Refund, reason) }

// Orders returns every order, oldest first, after applying due transitions.
func (s *Sim) Orders() []OrderSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.clock())
	out := make([]OrderSnapshot, 0, len(s.orders))
	for _, o := range s.orders {
		out = append(out, o.clone())
	}
	return out
}

// Order returns order n after applying due transitions, and whether it exists.
func (s *Sim) Order(n int) (OrderSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.clock())
	o, ok := s.ordersByNum[n]
	if !ok {
		return OrderSnapshot{}, false
	}
	return o.clone(), true
}

type historyJSON struct {
	Status string  `json:"status"`
	Reason *string `json:"reason"`
	At     string  `json:"at"`
}

type keyJSON struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

// orderJSON is the wire Order. Line-specific fields are omitted when they do
// not apply to the order's line, and so is every request field the spec's
// Order table does not list (see (*order).json).
type orderJSON struct {
	Object            string         `json:"object"`
	Number            int            `json:"number"`
	Type              string         `json:"type"`
	Status            string         `json:"status"`
	StoreLogin        *string        `json:"store_login,omitempty"`
	Currency          *string        `json:"currency,omitempty"`
	Amount            *string        `json:"amount,omitempty"`
	AmountUSD         *string        `json:"amount_usd,omitempty"`
	MessengerUsername *string        `json:"messenger_username,omitempty"`
	Stars             *int           `json:"stars,omitempty"`
	Months            *int           `json:"months,omitempty"`
	ServiceID         *string        `json:"service_id,omitempty"`
	ServiceName       *string        `json:"service_name,omitempty"`
	ProductID         *string        `json:"product_id,omitempty"`
	ProductName       *string        `json:"product_name,omitempty"`
	ManualKind        *string        `json:"manual_kind,omitempty"`
	ChatRequired      *bool          `json:"chat_required,omitempty"`
	DeadlineAt        *string        `json:"deadline_at,omitempty"`
	AppID             *int           `json:"app_id,omitempty"`
	AppName           *string        `json:"app_name,omitempty"`
	SubID             *int           `json:"sub_id,omitempty"`
	Region            *string        `json:"region,omitempty"`
	InviteURL         *string        `json:"invite_url,omitempty"`
	CategoryID        *string        `json:"category_id,omitempty"`
	CategoryName      *string        `json:"category_name,omitempty"`
	CardID            *string        `json:"card_id,omitempty"`
	CardName          *string        `json:"card_name,omitempty"`
	OfferName         *string        `json:"offer_name,omitempty"`
	Quantity          *int           `json:"quantity,omitempty"`
	Codes             *[]string      `json:"codes,omitempty"`
	Keys              *[]keyJSON     `json:"keys,omitempty"`
	ChargedUSD        string         `json:"charged_usd"`
	StatusReason      *string        `json:"status_reason"`
	CreatedAt         string         `json:"created_at"`
	StatusHistory     *[]historyJSON `json:"status_history,omitempty"`
}

// formatAmount formats a top-up amount in its currency: at least 2 decimals.
func formatAmount(d decimal.Decimal) string {
	if d.Exponent() < -2 {
		return d.String()
	}
	return d.StringFixed(2)
}

// json renders the order object; withHistory is the single-order form (GET
// /orders/{number}) with status_history and the delivered game keys.
//
// Which request fields each line's order object echoes: the simulator follows the spec's Order table strictly: a request field is
// echoed only where the table lists it for that line, so code that matches
// an upstream order against a request it sent must not rely on anything
// else. Per line (request fields -> order object):
//
//   - store_topup: store_login, currency, amount all echoed (amount in the
//     currency with at least 2 decimals; amount_usd added).
//   - messenger_stars: messenger_username echoed as sent; quantity echoed
//     as stars.
//   - messenger_premium: messenger_username echoed as sent; months echoed.
//   - manual_service: service_id and product_id echoed (with service_name,
//     product_name, manual_kind, chat_required, deadline_at); the buyer's
//     fields are NOT echoed.
//   - store_gift: app_id, sub_id, region, invite_url echoed; app_name
//     echoed when sent (otherwise the catalog name); offer_name added.
//   - gift_card: category_id, card_id, quantity echoed (with category_name,
//     card_name); codes once completed.
//   - game_key: NOTHING of the request is echoed: no game_id, key_id or
//     quantity (the table has no game-key rows). The delivered keys are in
//     "keys" only on the order fetched by number (GET /orders/{number}),
//     never in the list or the create answer.
//   - game_topup: NOTHING of the request is echoed: no category_id,
//     offer_id or buyer fields (the spec: "Fields specific to in-game top-up
//     orders (category, offer, buyer fields): not shown"), and no codes.
//
// Every line carries object, number, type, status, status_reason,
// charged_usd and created_at; status_history only when fetched by number.
// The simulator keeps every request field in its store (OrderSnapshot), so
// tests can still tell which buyer an order belongs to.
func (o *order) json(withHistory bool) orderJSON {
	j := orderJSON{
		Object:       "order",
		Number:       o.Number,
		Type:         o.Type,
		Status:       o.Status,
		ChargedUSD:   wire.USD(o.ChargedUSD),
		StatusReason: wire.NullString(o.StatusReason),
		CreatedAt:    wire.TS(o.CreatedAt),
	}
	switch o.Type {
	case LineStoreTopup:
		j.StoreLogin, j.Currency = wire.Ptr(o.StoreLogin), wire.Ptr(o.Currency)
		j.Amount, j.AmountUSD = wire.Ptr(formatAmount(o.Amount)), wire.Ptr(wire.USD(o.AmountUSD))
	case LineMessengerStars:
		j.MessengerUsername, j.Stars = wire.Ptr(o.MessengerUsername), wire.Ptr(o.Stars)
	case LineMessengerPremium:
		j.MessengerUsername, j.Months = wire.Ptr(o.MessengerUsername), wire.Ptr(o.Months)
	case LineManualService:
		j.ServiceID, j.ServiceName = wire.Ptr(o.ServiceID), wire.Ptr(o.ServiceName)
		j.ProductID, j.ProductName = wire.Ptr(o.ProductID), wire.Ptr(o.ProductName)
		j.ManualKind, j.ChatRequired = wire.Ptr(o.ManualKind), wire.Ptr(o.ChatRequired)
		j.DeadlineAt = wire.Ptr(wire.TS(o.DeadlineAt))
	case LineStoreGift:
		j.AppID, j.AppName, j.SubID = wire.Ptr(o.AppID), wire.Ptr(o.AppName), wire.Ptr(o.SubID)
		j.OfferName, j.Region, j.InviteURL = wire.Ptr(o.OfferName), wire.Ptr(o.Region), wire.Ptr(o.InviteURL)
	case LineGiftCard:
		j.CategoryID, j.CategoryName = wire.Ptr(o.CategoryID), wire.Ptr(o.CategoryName)
		j.CardID, j.CardName, j.Quantity = wire.Ptr(o.CardID), wire.Ptr(o.CardName), wire.Ptr(o.Quantity)
		j.Codes = wire.Ptr(append([]string{}, o.Codes...))
	case LineGameKey:
		if withHistory {
			keys := make([]keyJSON, 0, len(o.Keys))
			for _, k := range o.Keys {
				keys = append(keys, keyJSON(k))
			}
			j.Keys = &keys
		}
	case LineGameTopup:
		// Nothing: see the doc comment of json.
	}
	if withHistory {
		h := make([]historyJSON, 0, len(o.History))
		for _, c := range o.History {
			h = append(h, historyJSON{Status: c.Status, Reason: wire.NullString(c.Reason), At: wire.TS(c.At)})
		}
		j.StatusHistory = &h
	}
	return j
}

var orderTypes = []string{"STORE_TOPUP", "MESSENGER_STARS", "MESSENGER_PREMIUM", "MANUAL_SERVICE",
	"STORE_GIFT", "GIFT_CARD", "GAME_KEY", "GAME_TOPUP"}

func (s *Sim) listOrders(q *wire.Request) (any, error) {
	limit, cursor, err := pageParams(q)
	if err != nil {
		return nil, err
	}
	status, err := q.Enum("status", "CREATED", "PROCESSING", "COMPLETED", "FAILED", "REFUND")
	if err != nil {
		return nil, err
	}
	typ, err := q.Enum("type", orderTypes...)
	if err != nil {
		return nil, err
	}
	status, typ = strings.ToLower(status), strings.ToLower(typ)
	keep := func(o *order) bool { return (status == "" || o.Status == status) && (typ == "" || o.Type == typ) }
	list := func(o *order) orderJSON { return o.json(false) }
	return newestPage(s.orders, limit, cursor, func(o *order) int { return o.Number }, keep, list), nil
}

func (s *Sim) getOrder(q *wire.Request) (any, error) {
	o, err := s.pathOrder(q.Path[1])
	if err != nil {
		return nil, err
	}
	if o.reads++; o.behavior.CompleteOnRead > 0 && o.reads >= o.behavior.CompleteOnRead && !final(o.Status) && o.behavior.Mode != Stay {
		s.finish(o, o.behavior.Mode, o.behavior.Reason, s.clock())
	}
	return o.json(true), nil
}

// pathOrder finds the order named by a path segment.
func (s *Sim) pathOrder(seg string) (*order, error) {
	n, err := wire.PathNumber(seg, "order")
	if err != nil {
		return nil, err
	}
	o, ok := s.ordersByNum[n]
	if !ok {
		return nil, wire.NotFound("order %s not found", strconv.Itoa(n))
	}
	return o, nil
}
