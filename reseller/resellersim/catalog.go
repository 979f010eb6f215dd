package resellersim

import (
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// Catalog is the product catalog a Sim serves. Prices are in USD and already
// include the reseller's markup. Empty strings are served as null where the
// spec allows null. An Image is an absolute URL or the name of an image the
// Sim serves itself (images.go).
type Catalog struct {
	GiftCategories  []GiftCategory
	Games           []Game
	TopUpCategories []TopUpCategory
	ManualServices  []ManualService
	// StoreGames is the store-gift top games list, in list order.
	StoreGames []StoreGame
	// Rates maps each store top-up currency (USD, RUB, UAH, KZT) to units per USD.
	Rates map[string]decimal.Decimal
	// MinTopupUSD is the minimum store top-up in USD.
	MinTopupUSD decimal.Decimal
	// TopupDiscount is the reseller's discount on store top-ups, a fraction (0.03 = 3%).
	TopupDiscount decimal.Decimal
	// PricePerStar is the USD price of one messenger Star.
	PricePerStar decimal.Decimal
	// StarsMin and StarsMax bound a Stars order's quantity.
	StarsMin, StarsMax int
	// PremiumPlans are the messenger Premium plans.
	PremiumPlans []PremiumPlan
}

// GiftCategory is a gift-card category: one brand in one region.
type GiftCategory struct {
	ID     string
	Name   string
	Brand  string
	Region string
	Image  string
	Hidden bool
	Cards  []GiftCard
}

// GiftCard is one gift-card denomination.
type GiftCard struct {
	ID          string
	Name        string
	Price       decimal.Decimal
	Stock       int
	MinQuantity int
	MaxQuantity int
	Hidden      bool
}

// Country is a country in a region restriction.
type Country struct {
	Code string
	Name string
}

// Game is a game-key catalog entry: one game for one region and platform.
type Game struct {
	ID                string
	Name              string
	Region            string
	Platform          string
	Image             string
	RegionRestriction bool
	// Available lists the countries where the key activates (an allow-list);
	// Unavailable lists countries where it does not.
	Available   []Country
	Unavailable []Country
	Hidden      bool
	Keys        []GameKey
}

// GameKey is one purchasable key (edition) of a Game.
type GameKey struct {
	ID          string
	Name        string
	Price       decimal.Decimal
	Stock       int
	MinQuantity int
	MaxQuantity int
	Hidden      bool
}

// TopUpCategory is an in-game top-up category with the buyer fields it needs.
type TopUpCategory struct {
	ID    string
	Name  string
	Note  string
	Image string
	// Brand groups categories on the brands endpoint.
	Brand string
	// Region is served as GLOBAL when empty.
	Region string
	// Variant is the delivery mode (Auto, Fast, Manual) or empty for null.
	Variant string
	Hidden  bool
	Fields  []TopUpField
	Offers  []TopUpOffer
}

// TopUpField is a buyer input of a top-up category.
type TopUpField struct {
	Key   string
	Label string
	// Type is "text", "number" or "select".
	Type string
	// Options are the allowed values of a "select" field, served as "options".
	Options []string
}

// TopUpOffer is one in-game top-up package.
type TopUpOffer struct {
	ID     string
	Name   string
	Price  decimal.Decimal
	Hidden bool
}

// ManualService is a manually fulfilled service.
type ManualService struct {
	ID     string
	Name   string
	Kind   string // transfer or replenishment
	Info   string
	Image  string
	Chat   bool
	Hidden bool
	Fields []ManualField
	Offers []ManualOffer
}

// ManualField is a buyer input of a manual service.
type ManualField struct {
	Code string
	Name string
}

// ManualOffer is one product of a manual service.
type ManualOffer struct {
	ID    string
	Name  string
	Price decimal.Decimal
	// DeliveryMinutes is the promised delivery time; 0 is served as null and
	// gives a one-day deadline.
	DeliveryMinutes int
	Note            string
	Hidden          bool
}

// StoreGame is a store-gift game with its editions.
type StoreGame struct {
	AppID    int
	Name     string
	Hidden   bool
	Editions []StoreEdition
}

// StoreEdition is one edition (package) of a StoreGame.
type StoreEdition struct {
	SubID  int
	Name   string
	Prices []RegionPrice
}

// RegionPrice is an edition's price in one store region.
type RegionPrice struct {
	Region string
	Price  decimal.Decimal
}

// PremiumPlan is a messenger Premium plan.
type PremiumPlan struct {
	Months int
	Price  decimal.Decimal
}

// clone returns a deep copy of c.
func (c *Catalog) clone() *Catalog {
	n := *c
	n.GiftCategories = slices.Clone(c.GiftCategories)
	for i := range n.GiftCategories {
		n.GiftCategories[i].Cards = slices.Clone(n.GiftCategories[i].Cards)
	}
	n.Games = slices.Clone(c.Games)
	for i := range n.Games {
		g := &n.Games[i]
		g.Available = slices.Clone(g.Available)
		g.Unavailable = slices.Clone(g.Unavailable)
		g.Keys = slices.Clone(g.Keys)
	}
	n.TopUpCategories = slices.Clone(c.TopUpCategories)
	for i := range n.TopUpCategories {
		t := &n.TopUpCategories[i]
		t.Fields = slices.Clone(t.Fields)
		for j := range t.Fields {
			t.Fields[j].Options = slices.Clone(t.Fields[j].Options)
		}
		t.Offers = slices.Clone(t.Offers)
	}
	n.ManualServices = slices.Clone(c.ManualServices)
	for i := range n.ManualServices {
		m := &n.ManualServices[i]
		m.Fields = slices.Clone(m.Fields)
		m.Offers = slices.Clone(m.Offers)
	}
	n.StoreGames = slices.Clone(c.StoreGames)
	for i := range n.StoreGames {
		g := &n.StoreGames[i]
		g.Editions = slices.Clone(g.Editions)
		for j := range g.Editions {
			g.Editions[j].Prices = slices.Clone(g.Editions[j].Prices)
		}
	}
	if c.Rates != nil {
		n.Rates = make(map[string]decimal.Decimal, len(c.Rates))
		for k, v := range c.Rates {
			n.Rates[k] = v
		}
	}
	n.PremiumPlans = slices.Clone(c.PremiumPlans)
	return &n
}

// catalogIndex finds catalog entries by id. Its pointers point into the
// Sim's own catalog copy, whose slices never grow.
type catalogIndex struct {
	giftCats     map[string]*GiftCategory
	giftCards    map[string]*GiftCard
	games        map[string]*Game
	gameKeys     map[string]*GameKey
	topUps       map[string]*TopUpCategory
	topUpOffers  map[string]*TopUpOffer
	manual       map[string]*ManualService
	manualOffers map[string]*ManualOffer
	storeGames   map[int]*StoreGame
	storeSubs    map[int]*StoreEdition
}

func buildIndex(c *Catalog) catalogIndex {
	x := catalogIndex{
		giftCats:     map[string]*GiftCategory{},
		giftCards:    map[string]*GiftCard{},
		games:        map[string]*Game{},
		gameKeys:     map[string]*GameKey{},
		topUps:       map[string]*TopUpCategory{},
		topUpOffers:  map[string]*TopUpOffer{},
		manual:       map[string]*ManualService{},
		manualOffers: map[string]*ManualOffer{},
		storeGames:   map[int]*StoreGame{},
		storeSubs:    map[int]*StoreEdition{},
	}
	for i := range c.GiftCategories {
		cat := &c.GiftCategories[i]
		x.giftCats[cat.ID] = cat
		for j := range cat.Cards {
			x.giftCards[cat.Cards[j].ID] = &cat.Cards[j]
		}
	}
	for i := range c.Games {
		g := &c.Games[i]
		x.games[g.ID] = g
		for j := range g.Keys {
			x.gameKeys[g.Keys[j].ID] = &g.Keys[j]
		}
	}
	for i := range c.TopUpCategories {
		t := &c.TopUpCategories[i]
		x.topUps[t.ID] = t
		for j := range t.Offers {
			x.topUpOffers[t.Offers[j].ID] = &t.Offers[j]
		}
	}
	for i := range c.ManualServices {
		m := &c.ManualServices[i]
		x.manual[m.ID] = m
		for j := range m.Offers {
			x.manualOffers[m.Offers[j].ID] = &m.Offers[j]
		}
	}
	for i := range c.StoreGames {
		g := &c.StoreGames[i]
		x.storeGames[g.AppID] = g
		for j := range g.Editions {
			x.storeSubs[g.Editions[j].SubID] = &g.Editions[j]
		}
	}
	return x
}

// SetPrice sets the USD price of an item: a card_id, key_id, top-up offer_id,
// manual product id, a store sub_id (every region; "subID:REGION" for one
// region), "stars" (the price per star) or "premium-N" (the N-month plan).
// It reports whether the item exists.
func (s *Sim) SetPrice(itemID string, price decimal.Decimal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &s.idx
	found := false
	if c, ok := x.giftCards[itemID]; ok {
		c.Price, found = price, true
	}
	if k, ok := x.gameKeys[itemID]; ok {
		k.Price, found = price, true
	}
	if o, ok := x.topUpOffers[itemID]; ok {
		o.Price, found = price, true
	}
	if o, ok := x.manualOffers[itemID]; ok {
		o.Price, found = price, true
	}
	sub, region, _ := strings.Cut(itemID, ":")
	if id, err := strconv.Atoi(sub); err == nil {
		if e, ok := x.storeSubs[id]; ok {
			for i := range e.Prices {
				if region == "" || e.Prices[i].Region == region {
					e.Prices[i].Price, found = price, true
				}
			}
		}
	}
	if itemID == "stars" {
		s.cat.PricePerStar, found = price, true
	}
	if m, ok := strings.CutPrefix(itemID, "premium-"); ok {
		for i := range s.cat.PremiumPlans {
			if strconv.Itoa(s.cat.PremiumPlans[i].Months) == m {
				s.cat.PremiumPlans[i].Price, found = price, true
			}
		}
	}
	return found
}

// SetStock sets the stock of a gift card (card_id) or game key (key_id) and
// reports whether the item exists.
func (s *Sim) SetStock(itemID string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.idx.giftCards[itemID]; ok {
		c.Stock = n
		return true
	}
	if k, ok := s.idx.gameKeys[itemID]; ok {
		k.Stock = n
		return true
	}
	return false
}

// SetHidden hides or shows an item: a gift category or card, a game or key,
// a top-up category or offer, a manual service or offer, or a store game
// (app_id as a string). Hidden items are never listed, answer 404 where
// fetched by id and cannot be ordered. It reports whether the item exists.
func (s *Sim) SetHidden(itemID string, hidden bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &s.idx
	found := false
	if v, ok := x.giftCats[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.giftCards[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.games[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.gameKeys[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.topUps[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.topUpOffers[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.manual[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.manualOffers[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if id, err := strconv.Atoi(itemID); err == nil {
		if g, ok := x.storeGames[id]; ok {
			g.Hidden, found = hidden, true
		}
	}
	return found
}

// Catalog returns a copy of the catalog as currently served (with changes
// made by SetPrice, SetStock and SetHidden, and stock taken by orders).
func (s *Sim) Catalog() *Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.clone()
}

// matchQ reports whether q (already lowercased) is empty or a substring of
// one of the values, case-insensitively.
func matchQ(q string, values ...string) bool {
	if q == "" {
		return true
	}
	for _, v := range values {
		if strings.Contains(strings.ToLower(v), q) {
			return true
		}
	}
	return false
}
