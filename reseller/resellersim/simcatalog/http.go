package simcatalog

import (
	"encoding/json"
	"slices"
	"strings"

	"shopbot/reseller/resellersim/internal/wire"
)

// GetRates answers GET /store-topup/rates: the store top-up currencies and the minimum.
func (st *Store) GetRates(q *wire.Request) (any, error) {
	rates := make(map[string]json.Number, len(st.Cat.Rates))
	for c, r := range st.Cat.Rates {
		rates[c] = json.Number(r.String())
	}
	return struct {
		Object      string                 `json:"object"`
		Base        string                 `json:"base"`
		Rates       map[string]json.Number `json:"rates"`
		MinTopupUSD string                 `json:"min_topup_usd"`
		UpdatedAt   string                 `json:"updated_at"`
	}{"store_rates", "USD", rates, wire.USD(st.Cat.MinTopupUSD), wire.TS(st.Since)}, nil
}

// GetStars answers GET /messenger/stars: the price of a Star and the quantity bounds.
func (st *Store) GetStars(q *wire.Request) (any, error) {
	return struct {
		Object       string `json:"object"`
		PricePerStar string `json:"price_per_star"`
		Min          int    `json:"min"`
		Max          int    `json:"max"`
		UpdatedAt    string `json:"updated_at"`
	}{"messenger_stars_pricing", wire.USD(st.Cat.PricePerStar), st.Cat.StarsMin, st.Cat.StarsMax, wire.TS(st.Since)}, nil
}

// GetPremium answers GET /messenger/premium: the Premium plans.
func (st *Store) GetPremium(q *wire.Request) (any, error) {
	type plan struct {
		Months   int    `json:"months"`
		PriceUSD string `json:"price_usd"`
	}
	plans := []plan{}
	for _, p := range st.Cat.PremiumPlans {
		plans = append(plans, plan{p.Months, wire.USD(p.Price)})
	}
	return struct {
		Object    string `json:"object"`
		Plans     []plan `json:"plans"`
		UpdatedAt string `json:"updated_at"`
	}{"messenger_premium_pricing", plans, wire.TS(st.Since)}, nil
}

// Manual services.

type manualServiceJSON struct {
	Object string  `json:"object"`
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	Chat   bool    `json:"chat"`
	Info   *string `json:"info"`
	Image  *string `json:"image"`
}

// ListManualServices answers GET /manual-services.
func (st *Store) ListManualServices(q *wire.Request) (any, error) {
	data := []manualServiceJSON{}
	for _, m := range st.Cat.ManualServices {
		if m.Hidden {
			continue
		}
		data = append(data, manualServiceJSON{"manual_service", m.ID, m.Name, m.Kind, m.Chat, wire.NullString(m.Info), q.Image(m.Image)})
	}
	return wire.List{Object: "list", Data: data, Total: len(data)}, nil
}

// GetManualOffers answers GET /manual-services/{id}/offers: a service with its fields and offers.
func (st *Store) GetManualOffers(q *wire.Request) (any, error) {
	m, ok := st.By.Manual[q.Path[1]]
	if !ok || m.Hidden {
		return nil, wire.NotFound("manual service %q not found", q.Path[1])
	}
	type field struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	type offer struct {
		ID              string  `json:"id"`
		Name            string  `json:"name"`
		PriceUSD        string  `json:"price_usd"`
		DeliveryMinutes *int    `json:"delivery_minutes"`
		Note            *string `json:"note"`
	}
	fields := []field{}
	for _, f := range m.Fields {
		fields = append(fields, field(f))
	}
	offers := []offer{}
	for _, o := range m.Offers {
		if o.Hidden {
			continue
		}
		var dm *int
		if o.DeliveryMinutes > 0 {
			dm = wire.Ptr(o.DeliveryMinutes)
		}
		offers = append(offers, offer{o.ID, o.Name, wire.USD(o.Price), dm, wire.NullString(o.Note)})
	}
	return struct {
		Object    string  `json:"object"`
		ServiceID string  `json:"service_id"`
		Name      *string `json:"name"`
		Kind      *string `json:"kind"`
		Chat      bool    `json:"chat"`
		Info      *string `json:"info"`
		Fields    []field `json:"fields"`
		Offers    []offer `json:"offers"`
	}{"manual_offers", m.ID, wire.NullString(m.Name), wire.NullString(m.Kind), m.Chat, wire.NullString(m.Info), fields, offers}, nil
}

// limitedList answers a catalog list whose size the limit parameter bounds
// (default def, 1 to hi): the entries of the items that entry keeps, in
// catalog order, at most limit of them, with the total before the limit.
func limitedList[T, E any](q *wire.Request, def, hi int, items []T, entry func(*T) (E, bool)) (any, error) {
	limit, err := q.Int("limit", def, 1, hi)
	if err != nil {
		return nil, err
	}
	var data []E
	for i := range items {
		if e, ok := entry(&items[i]); ok {
			data = append(data, e)
		}
	}
	return wire.List{Object: "list", Data: wire.ApplyLimit(data, limit), Total: len(data)}, nil
}

// Store gifts.

// ListStoreGames answers GET /store-gifts/games.
func (st *Store) ListStoreGames(q *wire.Request) (any, error) {
	type entry struct {
		Object string `json:"object"`
		AppID  int    `json:"app_id"`
		Name   string `json:"name"`
	}
	return limitedList(q, 100, 500, st.Cat.StoreGames, func(g *StoreGame) (entry, bool) {
		return entry{"store_game", g.AppID, g.Name}, !g.Hidden
	})
}

// GetStoreGame answers GET /store-gifts/games/{app_id}: a game's editions with their regional prices.
func (st *Store) GetStoreGame(q *wire.Request) (any, error) {
	id, err := wire.PathNumber(q.Path[2], "app")
	if err != nil {
		return nil, err
	}
	g, ok := st.By.StoreGames[id]
	if !ok || g.Hidden {
		return nil, wire.NotFound("app %d not found", id)
	}
	type region struct {
		Region   string `json:"region"`
		PriceUSD string `json:"price_usd"`
	}
	type offer struct {
		SubID   int      `json:"sub_id"`
		Name    string   `json:"name"`
		Regions []region `json:"regions"`
	}
	offers := []offer{}
	for _, e := range g.Editions {
		o := offer{SubID: e.SubID, Name: e.Name, Regions: []region{}}
		for _, p := range e.Prices {
			o.Regions = append(o.Regions, region{p.Region, wire.USD(p.Price)})
		}
		offers = append(offers, o)
	}
	return struct {
		Object string  `json:"object"`
		AppID  int     `json:"app_id"`
		Offers []offer `json:"offers"`
	}{"store_gift_offers", g.AppID, offers}, nil
}

// Gift cards.

// ListGiftCategories answers GET /gift-cards/categories.
func (st *Store) ListGiftCategories(q *wire.Request) (any, error) {
	search := strings.ToLower(q.String("q"))
	type entry struct {
		Object     string  `json:"object"`
		CategoryID string  `json:"category_id"`
		Name       string  `json:"name"`
		Image      *string `json:"image"`
	}
	return limitedList(q, 200, 600, st.Cat.GiftCategories, func(c *GiftCategory) (entry, bool) {
		return entry{"gift_category", c.ID, c.Name, q.Image(c.Image)}, !c.Hidden && matchQ(search, c.ID, c.Name)
	})
}

// GetGiftCards answers GET /gift-cards/categories/{id}/cards.
func (st *Store) GetGiftCards(q *wire.Request) (any, error) {
	c, ok := st.By.GiftCategories[q.Path[2]]
	if !ok || c.Hidden {
		return nil, wire.NotFound("gift card category %q not found", q.Path[2])
	}
	type card struct {
		CardID      string `json:"card_id"`
		Name        string `json:"name"`
		PriceUSD    string `json:"price_usd"`
		Stock       int    `json:"stock"`
		MinQuantity int    `json:"min_quantity"`
		MaxQuantity int    `json:"max_quantity"`
	}
	offers := []card{}
	for _, k := range c.Cards {
		if !k.Hidden {
			offers = append(offers, card{k.ID, k.Name, wire.USD(k.Price), max(k.Stock, 0), k.MinQuantity, k.MaxQuantity})
		}
	}
	return struct {
		Object     string  `json:"object"`
		CategoryID string  `json:"category_id"`
		Name       string  `json:"name"`
		Image      *string `json:"image"`
		Offers     []card  `json:"offers"`
	}{"gift_card_offers", c.ID, c.Name, q.Image(c.Image), offers}, nil
}

// groupBrands groups visible items by brand in catalog order. An item is
// kept when the brand or the item matches the search.
func groupBrands[T any](items []T, brandOf func(T) string, keep func(T) bool, match func(T) bool, search string) ([]string, map[string][]T) {
	var order []string
	groups := map[string][]T{}
	for _, it := range items {
		b := brandOf(it)
		if !keep(it) || !(matchQ(search, b) || match(it)) {
			continue
		}
		if _, ok := groups[b]; !ok {
			order = append(order, b)
		}
		groups[b] = append(groups[b], it)
	}
	return order, groups
}

// ListGiftBrands answers GET /gift-cards/brands: the categories grouped by brand.
func (st *Store) ListGiftBrands(q *wire.Request) (any, error) {
	search := strings.ToLower(q.String("q"))
	type sub struct {
		CategoryID string  `json:"category_id"`
		Region     *string `json:"region"`
		Image      *string `json:"image"`
	}
	type brand struct {
		Object        string `json:"object"`
		Brand         string `json:"brand"`
		Subcategories []sub  `json:"subcategories"`
	}
	order, groups := groupBrands(st.Cat.GiftCategories,
		func(c GiftCategory) string { return c.Brand },
		func(c GiftCategory) bool { return !c.Hidden },
		func(c GiftCategory) bool { return matchQ(search, c.ID, c.Name) }, search)
	data := []brand{}
	for _, b := range order {
		e := brand{Object: "gift_brand", Brand: b}
		for _, c := range groups[b] {
			e.Subcategories = append(e.Subcategories, sub{c.ID, wire.NullString(c.Region), q.Image(c.Image)})
		}
		data = append(data, e)
	}
	return wire.List{Object: "list", Data: data, Total: len(data)}, nil
}

// Game keys.

type gameJSON struct {
	Object            string  `json:"object,omitempty"`
	GameID            string  `json:"game_id"`
	Name              string  `json:"name"`
	Region            string  `json:"region"`
	Platform          string  `json:"platform"`
	RegionRestriction bool    `json:"region_restriction"`
	Image             *string `json:"image"`
}

func (g *Game) json(q *wire.Request, object string) gameJSON {
	return gameJSON{object, g.ID, g.Name, g.Region, g.Platform, g.RegionRestriction, q.Image(g.Image)}
}

// ListGames answers GET /game-keys.
func (st *Store) ListGames(q *wire.Request) (any, error) {
	search := strings.ToLower(q.String("q"))
	region, platform := q.String("region"), q.String("platform")
	return limitedList(q, 200, 500, st.Cat.Games, func(g *Game) (gameJSON, bool) {
		return g.json(q, "game"), !g.Hidden && matchQ(search, g.ID, g.Name) &&
			(region == "" || strings.EqualFold(region, g.Region)) &&
			(platform == "" || strings.EqualFold(platform, g.Platform))
	})
}

func (st *Store) pathGame(id string) (*Game, error) {
	g, ok := st.By.Games[id]
	if !ok || g.Hidden {
		return nil, wire.NotFound("game %q not found", id)
	}
	return g, nil
}

// GetGameKeys answers GET /game-keys/{id}/keys.
func (st *Store) GetGameKeys(q *wire.Request) (any, error) {
	g, err := st.pathGame(q.Path[1])
	if err != nil {
		return nil, err
	}
	type key struct {
		KeyID       string `json:"key_id"`
		Name        string `json:"name"`
		PriceUSD    string `json:"price_usd"`
		Stock       int    `json:"stock"`
		MinQuantity int    `json:"min_quantity"`
		MaxQuantity int    `json:"max_quantity"`
	}
	keys := []key{}
	for _, k := range g.Keys {
		if !k.Hidden {
			keys = append(keys, key{k.ID, k.Name, wire.USD(k.Price), max(k.Stock, 0), k.MinQuantity, k.MaxQuantity})
		}
	}
	return struct {
		gameJSON
		Keys []key `json:"keys"`
	}{g.json(q, "game_key_offers"), keys}, nil
}

// GetRegionRestriction answers GET /game-keys/{id}/region-restriction.
func (st *Store) GetRegionRestriction(q *wire.Request) (any, error) {
	g, err := st.pathGame(q.Path[1])
	if err != nil {
		return nil, err
	}
	type country struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	conv := func(cs []Country) []country {
		out := []country{}
		for _, c := range cs {
			out = append(out, country(c))
		}
		return out
	}
	return struct {
		Object          string    `json:"object"`
		GameID          string    `json:"game_id"`
		Region          string    `json:"region"`
		HasAvailability bool      `json:"has_availability"`
		Available       []country `json:"available"`
		Unavailable     []country `json:"unavailable"`
	}{"region_restriction", g.ID, g.Region, len(g.Available) > 0, conv(g.Available), conv(g.Unavailable)}, nil
}

// Game top-ups.

// ListTopUpCategories answers GET /top-ups/categories.
func (st *Store) ListTopUpCategories(q *wire.Request) (any, error) {
	search := strings.ToLower(q.String("q"))
	type entry struct {
		Object     string  `json:"object"`
		CategoryID string  `json:"category_id"`
		Name       string  `json:"name"`
		Note       *string `json:"note"`
		Image      *string `json:"image"`
	}
	return limitedList(q, 200, 600, st.Cat.TopUpCategories, func(c *TopUpCategory) (entry, bool) {
		return entry{"top_up_category", c.ID, c.Name, wire.NullString(c.Note), q.Image(c.Image)}, !c.Hidden && matchQ(search, c.ID, c.Name)
	})
}

// GetTopUpOffers answers GET /top-ups/categories/{id}/offers: a category with its fields and offers.
func (st *Store) GetTopUpOffers(q *wire.Request) (any, error) {
	c, ok := st.By.TopUps[q.Path[2]]
	if !ok || c.Hidden {
		return nil, wire.NotFound("top-up category %q not found", q.Path[2])
	}
	type field struct {
		Key     string   `json:"key"`
		Label   string   `json:"label"`
		Type    string   `json:"type"`
		Options []string `json:"options,omitempty"`
	}
	type offer struct {
		OfferID  string `json:"offer_id"`
		Name     string `json:"name"`
		PriceUSD string `json:"price_usd"`
	}
	fields := []field{}
	for _, f := range c.Fields {
		fields = append(fields, field{f.Key, f.Label, f.Type, slices.Clone(f.Options)})
	}
	offers := []offer{}
	for _, o := range c.Offers {
		if !o.Hidden {
			offers = append(offers, offer{o.ID, o.Name, wire.USD(o.Price)})
		}
	}
	return struct {
		Object     string  `json:"object"`
		CategoryID string  `json:"category_id"`
		Name       string  `json:"name"`
		Note       *string `json:"note"`
		Image      *string `json:"image"`
		Fields     []field `json:"fields"`
		Offers     []offer `json:"offers"`
	}{"top_up_offers", c.ID, c.Name, wire.NullString(c.Note), q.Image(c.Image), fields, offers}, nil
}

// ListTopUpBrands answers GET /top-ups/brands: the categories grouped by brand.
func (st *Store) ListTopUpBrands(q *wire.Request) (any, error) {
	search := strings.ToLower(q.String("q"))
	type sub struct {
		CategoryID string  `json:"category_id"`
		Name       string  `json:"name"`
		Region     string  `json:"region"`
		Variant    *string `json:"variant"`
		Image      *string `json:"image"`
	}
	type brand struct {
		Object        string `json:"object"`
		Brand         string `json:"brand"`
		Subcategories []sub  `json:"subcategories"`
	}
	brandOf := func(c TopUpCategory) string {
		if c.Brand == "" {
			return c.Name
		}
		return c.Brand
	}
	order, groups := groupBrands(st.Cat.TopUpCategories, brandOf,
		func(c TopUpCategory) bool { return !c.Hidden },
		func(c TopUpCategory) bool { return matchQ(search, c.ID, c.Name) }, search)
	data := []brand{}
	for _, b := range order {
		e := brand{Object: "top_up_brand", Brand: b}
		for _, c := range groups[b] {
			region := c.Region
			if region == "" {
				region = "GLOBAL"
			}
			e.Subcategories = append(e.Subcategories, sub{c.ID, c.Name, region, wire.NullString(c.Variant), q.Image(c.Image)})
		}
		data = append(data, e)
	}
	return wire.List{Object: "list", Data: data, Total: len(data)}, nil
}
