package resellersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/internal/wire"
)

var (
	amountRe   = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	usernameRe = regexp.MustCompile(`^@?[A-Za-z0-9_]{1,32}$`)
	digitsRe   = regexp.MustCompile(`^[0-9]+$`)
)

// required returns the value of a required string field.
func required(v *string, name string) (string, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return "", wire.Invalid("%s is required", name)
	}
	return *v, nil
}

// requiredInt returns the value of a required integer field.
func requiredInt(v *int, name string) (int, error) {
	if v == nil {
		return 0, wire.Invalid("%s is required", name)
	}
	return *v, nil
}

// checkQuantity validates a quantity against the line's 1..100, the offer's
// bounds and its stock.
func checkQuantity(qty, lo, hi, stock int) error {
	lo, hi = max(lo, 1), min(hi, 100)
	if hi < lo {
		hi = lo
	}
	if qty < lo || qty > hi {
		return wire.Invalid("quantity must be from %d to %d", lo, hi)
	}
	if stock <= 0 {
		return wire.Invalid("out of stock")
	}
	if qty > stock {
		return wire.Invalid("not enough stock: %d available", stock)
	}
	return nil
}

// checkFields validates buyer fields against the expected keys: every key
// present with a non-empty value, no other key.
func checkFields(got map[string]string, want []string) error {
	for _, k := range want {
		if strings.TrimSpace(got[k]) == "" {
			return wire.Invalid("fields.%s is required", k)
		}
	}
	for k := range got {
		if !slices.Contains(want, k) {
			return wire.Invalid("fields.%s is not a field of this item", k)
		}
	}
	return nil
}

func (s *Sim) orderGiftCard(q *wire.Request) (any, error) {
	var in struct {
		CategoryID *string `json:"category_id"`
		CardID     *string `json:"card_id"`
		Quantity   *int    `json:"quantity"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	catID, err := required(in.CategoryID, "category_id")
	if err != nil {
		return nil, err
	}
	cardID, err := required(in.CardID, "card_id")
	if err != nil {
		return nil, err
	}
	qty, err := requiredInt(in.Quantity, "quantity")
	if err != nil {
		return nil, err
	}
	cat, ok := s.cat.By.GiftCategories[catID]
	if !ok || cat.Hidden {
		return nil, wire.Invalid("unknown category_id %q", catID)
	}
	i := slices.IndexFunc(cat.Cards, func(c GiftCard) bool { return c.ID == cardID && !c.Hidden })
	if i < 0 {
		return nil, wire.Invalid("unknown card_id %q in category %q", cardID, catID)
	}
	card := &cat.Cards[i]
	if err := checkQuantity(qty, card.MinQuantity, card.MaxQuantity, card.Stock); err != nil {
		return nil, err
	}
	o, err := s.createOrder(q.Now, &order{stock: &card.Stock, OrderSnapshot: OrderSnapshot{
		Type:       LineGiftCard,
		ChargedUSD: card.Price.Mul(decimal.NewFromInt(int64(qty))),
		CategoryID: cat.ID, CategoryName: cat.Name, CardID: card.ID, CardName: card.Name, Quantity: qty,
	}}, card.ID, cat.ID)
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
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
	gameID, err := required(in.GameID, "game_id")
	if err != nil {
		return nil, err
	}
	keyID, err := required(in.KeyID, "key_id")
	if err != nil {
		return nil, err
	}
	qty, err := requiredInt(in.Quantity, "quantity")
	if err != nil {
		return nil, err
	}
	g, ok := s.cat.By.Games[gameID]
	if !ok || g.Hidden {
		return nil, wire.Invalid("unknown game_id %q", gameID)
	}
	i := slices.IndexFunc(g.Keys, func(k GameKey) bool { return k.ID == keyID && !k.Hidden })
	if i < 0 {
		return nil, wire.Invalid("unknown key_id %q for game %q", keyID, gameID)
	}
	k := &g.Keys[i]
	if err := checkQuantity(qty, k.MinQuantity, k.MaxQuantity, k.Stock); err != nil {
		return nil, err
	}
	o, err := s.createOrder(q.Now, &order{stock: &k.Stock, OrderSnapshot: OrderSnapshot{
		Type:       LineGameKey,
		ChargedUSD: k.Price.Mul(decimal.NewFromInt(int64(qty))),
		GameID:     g.ID, GameName: g.Name, KeyID: k.ID, KeyName: k.Name, Quantity: qty,
	}}, k.ID, g.ID)
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
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
	catID, err := required(in.CategoryID, "category_id")
	if err != nil {
		return nil, err
	}
	offerID, err := required(in.OfferID, "offer_id")
	if err != nil {
		return nil, err
	}
	if in.Fields == nil || *in.Fields == nil {
		return nil, wire.Invalid("fields is required")
	}
	cat, ok := s.cat.By.TopUps[catID]
	if !ok || cat.Hidden {
		return nil, wire.Invalid("unknown category_id %q", catID)
	}
	i := slices.IndexFunc(cat.Offers, func(o TopUpOffer) bool { return o.ID == offerID && !o.Hidden })
	if i < 0 {
		return nil, wire.Invalid("unknown offer_id %q in category %q", offerID, catID)
	}
	offer := cat.Offers[i]
	fields := *in.Fields
	want := make([]string, 0, len(cat.Fields))
	for _, f := range cat.Fields {
		want = append(want, f.Key)
	}
	if err := checkFields(fields, want); err != nil {
		return nil, err
	}
	for _, f := range cat.Fields {
		v := fields[f.Key]
		switch {
		case f.Type == "number" && !digitsRe.MatchString(v):
			return nil, wire.Invalid("fields.%s must be a number", f.Key)
		case f.Type == "select" && !slices.Contains(f.Options, v):
			return nil, wire.Invalid("fields.%s must be one of %s", f.Key, strings.Join(f.Options, "; "))
		}
	}
	o, err := s.createOrder(q.Now, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineGameTopup,
		ChargedUSD: offer.Price,
		CategoryID: cat.ID, CategoryName: cat.Name, OfferID: offer.ID, OfferName: offer.Name,
		Fields: fields,
	}}, offer.ID, cat.ID)
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
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
	svcID, err := required(in.ServiceID, "service_id")
	if err != nil {
		return nil, err
	}
	prodID, err := required(in.ProductID, "product_id")
	if err != nil {
		return nil, err
	}
	svc, ok := s.cat.By.Manual[svcID]
	if !ok || svc.Hidden {
		return nil, wire.Invalid("unknown service_id %q", svcID)
	}
	i := slices.IndexFunc(svc.Offers, func(o ManualOffer) bool { return o.ID == prodID && !o.Hidden })
	if i < 0 {
		return nil, wire.Invalid("unknown product_id %q for service %q", prodID, svcID)
	}
	offer := svc.Offers[i]
	want := make([]string, 0, len(svc.Fields))
	for _, f := range svc.Fields {
		want = append(want, f.Code)
	}
	if err := checkFields(in.Fields, want); err != nil {
		return nil, err
	}
	deadline := time.Duration(offer.DeliveryMinutes) * time.Minute
	if offer.DeliveryMinutes <= 0 {
		deadline = 24 * time.Hour
	}
	o, err := s.createOrder(q.Now, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineManualService,
		ChargedUSD: offer.Price,
		ServiceID:  svc.ID, ServiceName: svc.Name, ProductID: offer.ID, ProductName: offer.Name,
		ManualKind: svc.Kind, ChatRequired: svc.Chat, DeadlineAt: q.Now.Add(deadline),
		Fields: in.Fields,
	}}, offer.ID, svc.ID)
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
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
	appID, err := requiredInt(in.AppID, "app_id")
	if err != nil {
		return nil, err
	}
	subID, err := requiredInt(in.SubID, "sub_id")
	if err != nil {
		return nil, err
	}
	region, err := required(in.Region, "region")
	if err != nil {
		return nil, err
	}
	invite, err := required(in.InviteURL, "invite_url")
	if err != nil {
		return nil, err
	}
	if u, err := url.Parse(invite); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, wire.Invalid("invite_url must be an http(s) URL")
	}
	g, ok := s.cat.By.StoreGames[appID]
	if !ok || g.Hidden {
		return nil, wire.Invalid("unknown app_id %d", appID)
	}
	i := slices.IndexFunc(g.Editions, func(e StoreEdition) bool { return e.SubID == subID })
	if i < 0 {
		return nil, wire.Invalid("unknown sub_id %d for app %d", subID, appID)
	}
	ed := g.Editions[i]
	j := slices.IndexFunc(ed.Prices, func(p RegionPrice) bool { return strings.EqualFold(p.Region, region) })
	if j < 0 {
		return nil, wire.Invalid("region %q is not sold for sub_id %d", region, subID)
	}
	name := g.Name
	if in.AppName != nil && *in.AppName != "" {
		name = *in.AppName
	}
	o, err := s.createOrder(q.Now, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineStoreGift,
		ChargedUSD: ed.Prices[j].Price,
		AppID:      g.AppID, AppName: name, SubID: ed.SubID, OfferName: ed.Name,
		Region: ed.Prices[j].Region, InviteURL: invite,
	}}, strconv.Itoa(ed.SubID), strconv.Itoa(g.AppID))
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
}

// checkUsername validates a messenger username.
func checkUsername(v *string) (string, error) {
	name, err := required(v, "messenger_username")
	if err != nil {
		return "", err
	}
	if !usernameRe.MatchString(name) {
		return "", wire.Invalid("messenger_username is not a valid username")
	}
	return name, nil
}

func (s *Sim) orderStars(q *wire.Request) (any, error) {
	var in struct {
		Username *string `json:"messenger_username"`
		Quantity *int    `json:"quantity"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	name, err := checkUsername(in.Username)
	if err != nil {
		return nil, err
	}
	qty, err := requiredInt(in.Quantity, "quantity")
	if err != nil {
		return nil, err
	}
	if qty < s.cat.Cat.StarsMin || qty > s.cat.Cat.StarsMax {
		return nil, wire.Invalid("quantity must be from %d to %d", s.cat.Cat.StarsMin, s.cat.Cat.StarsMax)
	}
	o, err := s.createOrder(q.Now, &order{OrderSnapshot: OrderSnapshot{
		Type:              LineMessengerStars,
		ChargedUSD:        s.cat.Cat.PricePerStar.Mul(decimal.NewFromInt(int64(qty))).Round(4),
		MessengerUsername: name, Stars: qty,
	}})
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
}

func (s *Sim) orderPremium(q *wire.Request) (any, error) {
	var in struct {
		Username *string `json:"messenger_username"`
		Months   *int    `json:"months"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	name, err := checkUsername(in.Username)
	if err != nil {
		return nil, err
	}
	months, err := requiredInt(in.Months, "months")
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(s.cat.Cat.PremiumPlans, func(p PremiumPlan) bool { return p.Months == months })
	if i < 0 {
		var ms []string
		for _, p := range s.cat.Cat.PremiumPlans {
			ms = append(ms, strconv.Itoa(p.Months))
		}
		return nil, wire.Invalid("months must be one of %s", strings.Join(ms, ", "))
	}
	o, err := s.createOrder(q.Now, &order{OrderSnapshot: OrderSnapshot{
		Type:              LineMessengerPremium,
		ChargedUSD:        s.cat.Cat.PremiumPlans[i].Price,
		MessengerUsername: name, Months: months,
	}}, "premium-"+strconv.Itoa(months))
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
}

// canRefill reports whether a store login can receive a top-up: every login
// can, except those containing "invalid".
func canRefill(login string) bool {
	return !strings.Contains(strings.ToLower(login), "invalid")
}

func (s *Sim) checkLogin(q *wire.Request) (any, error) {
	var in struct {
		StoreLogin *string `json:"store_login"`
	}
	if err := q.DecodeJSON(&in); err != nil {
		return nil, err
	}
	login, err := required(in.StoreLogin, "store_login")
	if err != nil {
		return nil, err
	}
	return struct {
		Object     string `json:"object"`
		StoreLogin string `json:"store_login"`
		CanRefill  bool   `json:"can_refill"`
	}{"store_login_check", login, canRefill(login)}, nil
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
	login, err := required(in.StoreLogin, "store_login")
	if err != nil {
		return nil, err
	}
	currency := "USD"
	if in.Currency != nil {
		currency = *in.Currency
	}
	rate, ok := s.cat.Cat.Rates[currency]
	if !ok {
		return nil, wire.Invalid("currency must be one of USD, RUB, UAH, KZT")
	}
	raw, err := required(in.Amount, "amount")
	if err != nil {
		return nil, err
	}
	if !amountRe.MatchString(raw) {
		return nil, wire.Invalid("amount must be a decimal string such as \"10.00\"")
	}
	amount := decimal.RequireFromString(raw)
	if !amount.IsPositive() {
		return nil, wire.Invalid("amount must be positive")
	}
	if _, frac, _ := strings.Cut(raw, "."); currency == "USD" && len(frac) > 2 {
		return nil, wire.Invalid("a USD amount allows at most 2 decimals")
	}
	amountUSD := amount.DivRound(rate, 4)
	if amountUSD.LessThan(s.cat.Cat.MinTopupUSD) {
		return nil, wire.Invalid("the minimum top-up is %s USD", wire.USD(s.cat.Cat.MinTopupUSD))
	}
	if !canRefill(login) {
		return nil, wire.Invalid("store login %q cannot be refilled", login)
	}
	charged := amountUSD.Mul(decimal.NewFromInt(1).Sub(s.cat.Cat.TopupDiscount)).Round(4)
	o, err := s.createOrder(q.Now, &order{OrderSnapshot: OrderSnapshot{
		Type:       LineStoreTopup,
		ChargedUSD: charged,
		StoreLogin: login, Currency: currency, Amount: amount, AmountUSD: amountUSD,
	}})
	if err != nil {
		return nil, err
	}
	return o.json(false), nil
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
