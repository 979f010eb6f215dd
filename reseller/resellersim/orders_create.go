package resellersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/internal/wire"
	"shopbot/reseller/resellersim/simcatalog"
)

// The order-creating endpoints: each decodes its line's request, checks the
// required fields, has the catalog check what it buys (simcatalog/orders.go)
// and creates the order, charged to the balance (createOrder, orders.go).

func (s *Sim) orderGiftCard(q *wire.Request) (any, error) {
	var in struct {
		CategoryID *string `json:"category_id"`
		CardID     *string `json:"card_id"`
		Quantity   *int    `json:"quantity"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	catID, err := wire.Required(in.CategoryID, "category_id")
	if err != nil {
		return nil, err
	}
	cardID, err := wire.Required(in.CardID, "card_id")
	if err != nil {
		return nil, err
	}
	qty, err := wire.RequiredInt(in.Quantity, "quantity")
	if err != nil {
		return nil, err
	}
	cat, card, err := s.cat.GiftCardOrder(catID, cardID, qty)
	if err != nil {
		return nil, err
	}
	return s.create(q, &order{stock: &card.Stock, OrderSnapshot: OrderSnapshot{
		Type:       LineGiftCard,
		ChargedUSD: card.Price.Mul(decimal.NewFromInt(int64(qty))),
		CategoryID: cat.ID, CategoryName: cat.Name, CardID: card.ID, CardName: card.Name, Quantity: qty,
	}}, card.ID, cat.ID)
}

func (s *Sim) orderGameKey(q *wire.Request) (any, error) {
	var in struct {
		GameID   *string `json:"game_id"`
		KeyID    *string `json:"key_id"`
		Quantity *int    `json:"quantity"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	gameID, err := wire.Required(in.GameID, "game_id")
	if err != nil {
		return nil, err
	}
	keyID, err := wire.Required(in.KeyID, "key_id")
	if err != nil {
		return nil, err
	}
	qty, err := wire.RequiredInt(in.Quantity, "quantity")
	if err != nil {
		return nil, err
	}
	g, k, err := s.cat.GameKeyOrder(gameID, keyID, qty)
	if err != nil {
		return nil, err
	}
	return s.create(q, &order{stock: &k.Stock, OrderSnapshot: OrderSnapshot{
		Type:       LineGameKey,
		ChargedUSD: k.Price.Mul(decimal.NewFromInt(int64(qty))),
		GameID:     g.ID, GameName: g.Name, KeyID: k.ID, KeyName: k.Name, Quantity: qty,
	}}, k.ID, g.ID)
}

func (s *Sim) orderTopUp(q *wire.Request) (any, error) {
	var in struct {
		CategoryID *string            `json:"category_id"`
		OfferID    *string            `json:"offer_id"`
		Fields     *map[string]string `json:"fields"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	catID, err := wire.Required(in.CategoryID, "category_id")
	if err != nil {
		return nil, err
	}
	offerID, err := wire.Required(in.OfferID, "offer_id")
	if err != nil {
		return nil, err
	}
	if in.Fields == nil || *in.Fields == nil {
		return nil, wire.Invalid("fields is required")
	}
	fields := *in.Fields
	cat, offer, err := s.cat.TopUpOrder(catID, offerID, fields)
	if err != nil {
		return nil, err
	}
	return s.create(q, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineGameTopup,
		ChargedUSD: offer.Price,
		CategoryID: cat.ID, CategoryName: cat.Name, OfferID: offer.ID, OfferName: offer.Name,
		Fields: fields,
	}}, offer.ID, cat.ID)
}

func (s *Sim) orderManual(q *wire.Request) (any, error) {
	var in struct {
		ServiceID *string           `json:"service_id"`
		ProductID *string           `json:"product_id"`
		Fields    map[string]string `json:"fields"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	svcID, err := wire.Required(in.ServiceID, "service_id")
	if err != nil {
		return nil, err
	}
	prodID, err := wire.Required(in.ProductID, "product_id")
	if err != nil {
		return nil, err
	}
	svc, offer, err := s.cat.ManualOrder(svcID, prodID, in.Fields)
	if err != nil {
		return nil, err
	}
	deadline := time.Duration(offer.DeliveryMinutes) * time.Minute
	if offer.DeliveryMinutes <= 0 {
		deadline = 24 * time.Hour
	}
	return s.create(q, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineManualService,
		ChargedUSD: offer.Price,
		ServiceID:  svc.ID, ServiceName: svc.Name, ProductID: offer.ID, ProductName: offer.Name,
		ManualKind: svc.Kind, ChatRequired: svc.Chat, DeadlineAt: q.Now.Add(deadline),
		Fields: in.Fields,
	}}, offer.ID, svc.ID)
}

func (s *Sim) orderStoreGift(q *wire.Request) (any, error) {
	var in struct {
		AppID     *int    `json:"app_id"`
		SubID     *int    `json:"sub_id"`
		Region    *string `json:"region"`
		InviteURL *string `json:"invite_url"`
		AppName   *string `json:"app_name"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	appID, err := wire.RequiredInt(in.AppID, "app_id")
	if err != nil {
		return nil, err
	}
	subID, err := wire.RequiredInt(in.SubID, "sub_id")
	if err != nil {
		return nil, err
	}
	region, err := wire.Required(in.Region, "region")
	if err != nil {
		return nil, err
	}
	invite, err := wire.Required(in.InviteURL, "invite_url")
	if err != nil {
		return nil, err
	}
	g, ed, price, err := s.cat.StoreGiftOrder(appID, subID, region, invite)
	if err != nil {
		return nil, err
	}
	name := g.Name
	if in.AppName != nil && *in.AppName != "" {
		name = *in.AppName
	}
	return s.create(q, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineStoreGift,
		ChargedUSD: price.Price,
		AppID:      g.AppID, AppName: name, SubID: ed.SubID, OfferName: ed.Name,
		Region: price.Region, InviteURL: invite,
	}}, strconv.Itoa(ed.SubID), strconv.Itoa(g.AppID))
}

func (s *Sim) orderStars(q *wire.Request) (any, error) {
	var in struct {
		Username *string `json:"messenger_username"`
		Quantity *int    `json:"quantity"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	name, err := simcatalog.CheckUsername(in.Username)
	if err != nil {
		return nil, err
	}
	qty, err := wire.RequiredInt(in.Quantity, "quantity")
	if err != nil {
		return nil, err
	}
	price, err := s.cat.StarsOrder(qty)
	if err != nil {
		return nil, err
	}
	return s.create(q, &order{OrderSnapshot: OrderSnapshot{
		Type:              LineMessengerStars,
		ChargedUSD:        price,
		MessengerUsername: name, Stars: qty,
	}})
}

func (s *Sim) orderPremium(q *wire.Request) (any, error) {
	var in struct {
		Username *string `json:"messenger_username"`
		Months   *int    `json:"months"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	name, err := simcatalog.CheckUsername(in.Username)
	if err != nil {
		return nil, err
	}
	months, err := wire.RequiredInt(in.Months, "months")
	if err != nil {
		return nil, err
	}
	plan, err := s.cat.PremiumOrder(months)
	if err != nil {
		return nil, err
	}
	return s.create(q, &order{OrderSnapshot: OrderSnapshot{
		Type:              LineMessengerPremium,
		ChargedUSD:        plan.Price,
		MessengerUsername: name, Months: months,
	}}, "premium-"+strconv.Itoa(months))
}

func (s *Sim) checkLogin(q *wire.Request) (any, error) {
	var in struct {
		StoreLogin *string `json:"store_login"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	login, err := wire.Required(in.StoreLogin, "store_login")
	if err != nil {
		return nil, err
	}
	return struct {
		Object     string `json:"object"`
		StoreLogin string `json:"store_login"`
		CanRefill  bool   `json:"can_refill"`
	}{"store_login_check", login, simcatalog.CanRefill(login)}, nil
}

func (s *Sim) orderStoreTopup(q *wire.Request) (any, error) {
	var in struct {
		StoreLogin *string `json:"store_login"`
		Currency   *string `json:"currency"`
		Amount     *string `json:"amount"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	login, err := wire.Required(in.StoreLogin, "store_login")
	if err != nil {
		return nil, err
	}
	t, err := s.cat.StoreTopupOrder(login, in.Currency, in.Amount)
	if err != nil {
		return nil, err
	}
	return s.create(q, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineStoreTopup,
		ChargedUSD: t.Charged,
		StoreLogin: login, Currency: t.Currency, Amount: t.Amount, AmountUSD: t.AmountUSD,
	}})
}

// create creates the order o (createOrder) and answers it.
func (s *Sim) create(q *wire.Request, o *order, itemIDs ...string) (any, error) {
	created, err := s.createOrder(q.Now, o, itemIDs...)
	if err != nil {
		return nil, err
	}
	return created.json(false), nil
}

// PlaceOtherClientOrder creates an order in the simulator's store as if
// another client of the same account (another shop, the dashboard, a stale
// replica) had POSTed req (a value that encodes to the JSON body, or a
// []byte or string holding it) to the order-creating path (relative to
// /api/v1, for example "/top-ups/order"; the full path also works). The
// order is validated, charged to the same balance and progresses exactly as
// one created over HTTP, and it shows in GET /orders like any other, but no
// fault, delay, scripted step, rate limit or request hook applies and it is
// not counted by CreateCount. Tests use it to plant a look-alike of their
// own order (same line and offer, other buyer fields) and check that it is
// never adopted. It returns the order, or the error the endpoint would
// answer (for example a 400 for an invalid request or a 403 for a blocked
// account).
func (s *Sim) PlaceOtherClientOrder(path string, req any) (OrderSnapshot, error) {
	var body []byte
	switch b := req.(type) {
	case []byte:
		body = b
	case string:
		body = []byte(b)
	default:
		var err error
		if body, err = json.Marshal(req); err != nil {
			return OrderSnapshot{}, fmt.Errorf("resellersim: encoding the request: %w", err)
		}
	}
	rel := faults.NormPrefix(path)
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	rt, ok := match(http.MethodPost, segs)
	if !ok || !rt.create {
		return OrderSnapshot{}, fmt.Errorf("resellersim: %s is not an order-creating path", path)
	}
	r, err := http.NewRequest(http.MethodPost, "http://resellersim.invalid"+PathPrefix+rel, bytes.NewReader(body))
	if err != nil {
		return OrderSnapshot{}, fmt.Errorf("resellersim: %w", err)
	}
	r.Header.Set("Content-Type", "application/json")

	o, onCreated, err := s.placeOther(rt, r, segs, body)
	if err != nil {
		return OrderSnapshot{}, err
	}
	if onCreated != nil {
		onCreated(o)
	}
	return o, nil
}

// placeOther runs an order-creating handler for PlaceOtherClientOrder under
// the lock and returns the order and the creation hook.
func (s *Sim) placeOther(rt route, r *http.Request, segs []string, body []byte) (OrderSnapshot, func(OrderSnapshot), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt.forbidden && s.status == StatusBlocked {
		return OrderSnapshot{}, nil, &wire.APIError{Status: http.StatusForbidden, Type: "forbidden", Msg: "account suspended"}
	}
	now := s.clock()
	s.advanceLocked(now)
	before := len(s.orders)
	if _, err := rt.h(s, &wire.Request{R: r, Path: segs, Body: body, Now: now, Query: r.URL.Query()}); err != nil {
		return OrderSnapshot{}, nil, err
	}
	if len(s.orders) != before+1 {
		return OrderSnapshot{}, nil, errors.New("resellersim: the endpoint created no order")
	}
	return s.orders[len(s.orders)-1].clone(), s.onCreated, nil
}
