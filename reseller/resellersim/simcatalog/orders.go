package simcatalog

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/reseller/resellersim/internal/wire"
)

// What an order may buy: each product line's create request checked against
// the catalog. Every check answers the 400 invalid_request error
// (wire.Invalid) the API gives; the caller (resellersim) has decoded the
// body and checked the required fields, and creates and charges the order.

var (
	amountRe   = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	usernameRe = regexp.MustCompile(`^@?[A-Za-z0-9_]{1,32}$`)
	digitsRe   = regexp.MustCompile(`^[0-9]+$`)
)

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

// GiftCardOrder finds the visible card cardID of the visible category
// catID and checks qty against its bounds and stock. The card points into
// the store, so an order can take its stock.
func (st *Store) GiftCardOrder(catID, cardID string, qty int) (*GiftCategory, *GiftCard, error) {
	cat, ok := st.By.GiftCategories[catID]
	if !ok || cat.Hidden {
		return nil, nil, wire.Invalid("unknown category_id %q", catID)
	}
	i := slices.IndexFunc(cat.Cards, func(c GiftCard) bool { return c.ID == cardID && !c.Hidden })
	if i < 0 {
		return nil, nil, wire.Invalid("unknown card_id %q in category %q", cardID, catID)
	}
	card := &cat.Cards[i]
	if err := checkQuantity(qty, card.MinQuantity, card.MaxQuantity, card.Stock); err != nil {
		return nil, nil, err
	}
	return cat, card, nil
}

// GameKeyOrder finds the visible key keyID of the visible game gameID and
// checks qty against its bounds and stock. The key points into the store,
// so an order can take its stock.
func (st *Store) GameKeyOrder(gameID, keyID string, qty int) (*Game, *GameKey, error) {
	g, ok := st.By.Games[gameID]
	if !ok || g.Hidden {
		return nil, nil, wire.Invalid("unknown game_id %q", gameID)
	}
	i := slices.IndexFunc(g.Keys, func(k GameKey) bool { return k.ID == keyID && !k.Hidden })
	if i < 0 {
		return nil, nil, wire.Invalid("unknown key_id %q for game %q", keyID, gameID)
	}
	k := &g.Keys[i]
	if err := checkQuantity(qty, k.MinQuantity, k.MaxQuantity, k.Stock); err != nil {
		return nil, nil, err
	}
	return g, k, nil
}

// TopUpOrder finds the visible offer offerID of the visible top-up
// category catID and checks the buyer fields: exactly the category's
// fields, numbers as digits, selects among their options.
func (st *Store) TopUpOrder(catID, offerID string, fields map[string]string) (*TopUpCategory, TopUpOffer, error) {
	cat, ok := st.By.TopUps[catID]
	if !ok || cat.Hidden {
		return nil, TopUpOffer{}, wire.Invalid("unknown category_id %q", catID)
	}
	i := slices.IndexFunc(cat.Offers, func(o TopUpOffer) bool { return o.ID == offerID && !o.Hidden })
	if i < 0 {
		return nil, TopUpOffer{}, wire.Invalid("unknown offer_id %q in category %q", offerID, catID)
	}
	want := make([]string, 0, len(cat.Fields))
	for _, f := range cat.Fields {
		want = append(want, f.Key)
	}
	if err := checkFields(fields, want); err != nil {
		return nil, TopUpOffer{}, err
	}
	for _, f := range cat.Fields {
		v := fields[f.Key]
		switch {
		case f.Type == "number" && !digitsRe.MatchString(v):
			return nil, TopUpOffer{}, wire.Invalid("fields.%s must be a number", f.Key)
		case f.Type == "select" && !slices.Contains(f.Options, v):
			return nil, TopUpOffer{}, wire.Invalid("fields.%s must be one of %s", f.Key, strings.Join(f.Options, "; "))
		}
	}
	return cat, cat.Offers[i], nil
}

// ManualOrder finds the visible offer prodID of the visible manual service
// svcID and checks the buyer fields: exactly the service's fields.
func (st *Store) ManualOrder(svcID, prodID string, fields map[string]string) (*ManualService, ManualOffer, error) {
	svc, ok := st.By.Manual[svcID]
	if !ok || svc.Hidden {
		return nil, ManualOffer{}, wire.Invalid("unknown service_id %q", svcID)
	}
	i := slices.IndexFunc(svc.Offers, func(o ManualOffer) bool { return o.ID == prodID && !o.Hidden })
	if i < 0 {
		return nil, ManualOffer{}, wire.Invalid("unknown product_id %q for service %q", prodID, svcID)
	}
	want := make([]string, 0, len(svc.Fields))
	for _, f := range svc.Fields {
		want = append(want, f.Code)
	}
	if err := checkFields(fields, want); err != nil {
		return nil, ManualOffer{}, err
	}
	return svc, svc.Offers[i], nil
}

// StoreGiftOrder checks the invite URL and finds the visible store game
// appID, its edition subID and that edition's price in region (any case).
func (st *Store) StoreGiftOrder(appID, subID int, region, invite string) (*StoreGame, StoreEdition, RegionPrice, error) {
	if u, err := url.Parse(invite); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, StoreEdition{}, RegionPrice{}, wire.Invalid("invite_url must be an http(s) URL")
	}
	g, ok := st.By.StoreGames[appID]
	if !ok || g.Hidden {
		return nil, StoreEdition{}, RegionPrice{}, wire.Invalid("unknown app_id %d", appID)
	}
	i := slices.IndexFunc(g.Editions, func(e StoreEdition) bool { return e.SubID == subID })
	if i < 0 {
		return nil, StoreEdition{}, RegionPrice{}, wire.Invalid("unknown sub_id %d for app %d", subID, appID)
	}
	ed := g.Editions[i]
	j := slices.IndexFunc(ed.Prices, func(p RegionPrice) bool { return strings.EqualFold(p.Region, region) })
	if j < 0 {
		return nil, StoreEdition{}, RegionPrice{}, wire.Invalid("region %q is not sold for sub_id %d", region, subID)
	}
	return g, ed, ed.Prices[j], nil
}

// CheckUsername validates a messenger username.
func CheckUsername(v *string) (string, error) {
	name, err := wire.Required(v, "messenger_username")
	if err != nil {
		return "", err
	}
	if !usernameRe.MatchString(name) {
		return "", wire.Invalid("messenger_username is not a valid username")
	}
	return name, nil
}

// StarsOrder checks a number of Stars against the catalog's bounds and
// returns their USD price.
func (st *Store) StarsOrder(qty int) (decimal.Decimal, error) {
	if qty < st.Cat.StarsMin || qty > st.Cat.StarsMax {
		return decimal.Decimal{}, wire.Invalid("quantity must be from %d to %d", st.Cat.StarsMin, st.Cat.StarsMax)
	}
	return st.Cat.PricePerStar.Mul(decimal.NewFromInt(int64(qty))).Round(4), nil
}

// PremiumOrder finds the Premium plan of months months.
func (st *Store) PremiumOrder(months int) (PremiumPlan, error) {
	i := slices.IndexFunc(st.Cat.PremiumPlans, func(p PremiumPlan) bool { return p.Months == months })
	if i < 0 {
		var ms []string
		for _, p := range st.Cat.PremiumPlans {
			ms = append(ms, strconv.Itoa(p.Months))
		}
		return PremiumPlan{}, wire.Invalid("months must be one of %s", strings.Join(ms, ", "))
	}
	return st.Cat.PremiumPlans[i], nil
}

// CanRefill reports whether a store login can receive a top-up: every login
// can, except those containing "invalid".
func CanRefill(login string) bool {
	return !strings.Contains(strings.ToLower(login), "invalid")
}

// StoreTopup is a checked store top-up: the amount as asked, in its
// currency, the same in USD and the USD charged after the discount.
type StoreTopup struct {
	Currency  string
	Amount    decimal.Decimal
	AmountUSD decimal.Decimal
	Charged   decimal.Decimal
}

// StoreTopupOrder checks a store top-up of amount (a required decimal
// string) in currency ("" is USD) for login: a known currency, a positive
// amount with at most 2 decimals in USD, at least the minimum, a login that
// can be refilled.
func (st *Store) StoreTopupOrder(login string, currency *string, amount *string) (StoreTopup, error) {
	t := StoreTopup{Currency: "USD"}
	if currency != nil {
		t.Currency = *currency
	}
	rate, ok := st.Cat.Rates[t.Currency]
	if !ok {
		return StoreTopup{}, wire.Invalid("currency must be one of USD, RUB, UAH, KZT")
	}
	raw, err := wire.Required(amount, "amount")
	if err != nil {
		return StoreTopup{}, err
	}
	if !amountRe.MatchString(raw) {
		return StoreTopup{}, wire.Invalid("amount must be a decimal string such as \"10.00\"")
	}
	t.Amount = decimal.RequireFromString(raw)
	if !t.Amount.IsPositive() {
		return StoreTopup{}, wire.Invalid("amount must be positive")
	}
	if _, frac, _ := strings.Cut(raw, "."); t.Currency == "USD" && len(frac) > 2 {
		return StoreTopup{}, wire.Invalid("a USD amount allows at most 2 decimals")
	}
	t.AmountUSD = t.Amount.DivRound(rate, 4)
	if t.AmountUSD.LessThan(st.Cat.MinTopupUSD) {
		return StoreTopup{}, wire.Invalid("the minimum top-up is %s USD", wire.USD(st.Cat.MinTopupUSD))
	}
	if !CanRefill(login) {
		return StoreTopup{}, wire.Invalid("store login %q cannot be refilled", login)
	}
	t.Charged = t.AmountUSD.Mul(decimal.NewFromInt(1).Sub(st.Cat.TopupDiscount)).Round(4)
	return t, nil
}
