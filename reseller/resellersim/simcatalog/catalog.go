package simcatalog

import (
	"slices"
	"strconv"
	"strings"
	"time"

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

// Clone returns a deep copy of c.
func (c *Catalog) Clone() *Catalog {
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

// Index finds catalog entries by id. Its pointers point into one Catalog,
// whose slices must never grow.
type Index struct {
	GiftCategories map[string]*GiftCategory
	GiftCards      map[string]*GiftCard
	Games          map[string]*Game
	GameKeys       map[string]*GameKey
	TopUps         map[string]*TopUpCategory
	TopUpOffers    map[string]*TopUpOffer
	Manual         map[string]*ManualService
	ManualOffers   map[string]*ManualOffer
	StoreGames     map[int]*StoreGame
	StoreSubs      map[int]*StoreEdition
}

// NewIndex indexes the entries of c.
func NewIndex(c *Catalog) Index {
	x := Index{
		GiftCategories: map[string]*GiftCategory{},
		GiftCards:      map[string]*GiftCard{},
		Games:          map[string]*Game{},
		GameKeys:       map[string]*GameKey{},
		TopUps:         map[string]*TopUpCategory{},
		TopUpOffers:    map[string]*TopUpOffer{},
		Manual:         map[string]*ManualService{},
		ManualOffers:   map[string]*ManualOffer{},
		StoreGames:     map[int]*StoreGame{},
		StoreSubs:      map[int]*StoreEdition{},
	}
	for i := range c.GiftCategories {
		cat := &c.GiftCategories[i]
		x.GiftCategories[cat.ID] = cat
		for j := range cat.Cards {
			x.GiftCards[cat.Cards[j].ID] = &cat.Cards[j]
		}
	}
	for i := range c.Games {
		g := &c.Games[i]
		x.Games[g.ID] = g
		for j := range g.Keys {
			x.GameKeys[g.Keys[j].ID] = &g.Keys[j]
		}
	}
	for i := range c.TopUpCategories {
		t := &c.TopUpCategories[i]
		x.TopUps[t.ID] = t
		for j := range t.Offers {
			x.TopUpOffers[t.Offers[j].ID] = &t.Offers[j]
		}
	}
	for i := range c.ManualServices {
		m := &c.ManualServices[i]
		x.Manual[m.ID] = m
		for j := range m.Offers {
			x.ManualOffers[m.Offers[j].ID] = &m.Offers[j]
		}
	}
	for i := range c.StoreGames {
		g := &c.StoreGames[i]
		x.StoreGames[g.AppID] = g
		for j := range g.Editions {
			x.StoreSubs[g.Editions[j].SubID] = &g.Editions[j]
		}
	}
	return x
}

// Store is the catalog a simulator serves: its own copy of a Catalog,
// indexed by id, which tests change (SetPrice, SetStock, SetHidden) and
// orders take stock from. It is not safe for concurrent use: the Sim
// holds its lock around every use.
type Store struct {
	// Cat is the catalog as served.
	Cat *Catalog
	// By finds Cat's entries by id.
	By Index
	// Since is when the simulator started: the updated_at of the store
	// top-up rates and the messenger prices.
	Since time.Time
}

// NewStore returns a store serving a copy of c.
func NewStore(c *Catalog, since time.Time) *Store {
	st := &Store{Cat: c.Clone(), Since: since}
	st.By = NewIndex(st.Cat)
	return st
}

// SetPrice sets the USD price of an item: a card_id, key_id, top-up offer_id,
// manual product id, a store sub_id (every region; "subID:REGION" for one
// region), "stars" (the price per star) or "premium-N" (the N-month plan).
// It reports whether the item exists.
func (st *Store) SetPrice(itemID string, price decimal.Decimal) bool {
	x := &st.By
	found := false
	if c, ok := x.GiftCards[itemID]; ok {
		c.Price, found = price, true
	}
	if k, ok := x.GameKeys[itemID]; ok {
		k.Price, found = price, true
	}
	if o, ok := x.TopUpOffers[itemID]; ok {
		o.Price, found = price, true
	}
	if o, ok := x.ManualOffers[itemID]; ok {
		o.Price, found = price, true
	}
	sub, region, _ := strings.Cut(itemID, ":")
	if id, err := strconv.Atoi(sub); err == nil {
		if e, ok := x.StoreSubs[id]; ok {
			for i := range e.Prices {
				if region == "" || e.Prices[i].Region == region {
					e.Prices[i].Price, found = price, true
				}
			}
		}
	}
	if itemID == "stars" {
		st.Cat.PricePerStar, found = price, true
	}
	if m, ok := strings.CutPrefix(itemID, "premium-"); ok {
		for i := range st.Cat.PremiumPlans {
			if strconv.Itoa(st.Cat.PremiumPlans[i].Months) == m {
				st.Cat.PremiumPlans[i].Price, found = price, true
			}
		}
	}
	return found
}

// SetStock sets the stock of a gift card (card_id) or game key (key_id) and
// reports whether the item exists.
func (st *Store) SetStock(itemID string, n int) bool {
	if c, ok := st.By.GiftCards[itemID]; ok {
		c.Stock = n
		return true
	}
	if k, ok := st.By.GameKeys[itemID]; ok {
		k.Stock = n
		return true
	}
	return false
}

// SetHidden hides or shows an item: a gift category or card, a game or key,
// a top-up category or offer, a manual service or offer, or a store game
// (app_id as a string). Hidden items are never listed, answer 404 where
// fetched by id and cannot be ordered. It reports whether the item exists.
func (st *Store) SetHidden(itemID string, hidden bool) bool {
	x := &st.By
	found := false
	if v, ok := x.GiftCategories[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.GiftCards[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.Games[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.GameKeys[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.TopUps[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.TopUpOffers[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.Manual[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if v, ok := x.ManualOffers[itemID]; ok {
		v.Hidden, found = hidden, true
	}
	if id, err := strconv.Atoi(itemID); err == nil {
		if g, ok := x.StoreGames[id]; ok {
			g.Hidden, found = hidden, true
		}
	}
	return found
}

// HasImage reports whether the catalog names the image (an Image that is
// a name the Sim serves, not a URL).
func (st *Store) HasImage(name string) bool {
	c := st.Cat
	for _, x := range c.GiftCategories {
		if x.Image == name {
			return true
		}
	}
	for _, x := range c.Games {
		if x.Image == name {
			return true
		}
	}
	for _, x := range c.TopUpCategories {
		if x.Image == name {
			return true
		}
	}
	for _, x := range c.ManualServices {
		if x.Image == name {
			return true
		}
	}
	return false
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
