package simcatalog

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/shopspring/decimal"
)

// Well-known ids of the default catalog, for tests and the demo.
const (
	// DemoGiftCategory is a visible gift-card category (Apple, US).
	DemoGiftCategory = "apple-us"
	// DemoGiftCard is a card of DemoGiftCategory with stock 250, quantity 1..50.
	DemoGiftCard = "apple-us-10"
	// DemoGiftCardLowStock is a card of DemoGiftCategory with stock 3.
	DemoGiftCardLowStock = "apple-us-25"
	// DemoGiftCardOutOfStock is a card of DemoGiftCategory with stock 0.
	DemoGiftCardOutOfStock = "apple-us-5"
	// DemoGiftCardHidden is a hidden card of DemoGiftCategory.
	DemoGiftCardHidden = "apple-us-500"
	// DemoGiftCategoryHidden is a hidden gift-card category.
	DemoGiftCategoryHidden = "apple-in"
	// DemoGiftCardMinQuantity is a card (category "steam-us") with min_quantity 5.
	DemoGiftCardMinQuantity = "steam-us-5"

	// DemoGame is a game-key entry without region restriction.
	DemoGame = "elden-ring-global-steam"
	// DemoGameKey is a key of DemoGame with stock 120, quantity 1..20.
	DemoGameKey = "elden-ring-global-steam-std"
	// DemoGameKeyOutOfStock is a key of DemoGame with stock 0.
	DemoGameKeyOutOfStock = "elden-ring-global-steam-dlx"
	// DemoGameKeyHidden is a hidden key of DemoGame.
	DemoGameKeyHidden = "elden-ring-global-steam-col"
	// DemoGameRestricted is a region-restricted game (CIS allow-list).
	DemoGameRestricted = "elden-ring-cis-steam"
	// DemoGameRestrictedDeny is a region-restricted game (EU, deny-list RU and BY).
	DemoGameRestrictedDeny = "elden-ring-eu-steam"
	// DemoGameHidden is a hidden game-key entry.
	DemoGameHidden = "gta-v-ru-rockstar"

	// DemoTopUpCategory is PUBG Mobile (GLOBAL, Auto) with one field, player_id.
	DemoTopUpCategory = "pubg-mobile-global"
	// DemoTopUpOffer is the 60 UC offer of DemoTopUpCategory.
	DemoTopUpOffer = "pubg-mobile-global-60"
	// DemoTopUpCategorySelect is Genshin Impact: fields uid and server (a select).
	DemoTopUpCategorySelect = "genshin-impact"
	// DemoTopUpCategoryTwoFields is Mobile Legends: fields user_id and zone_id.
	DemoTopUpCategoryTwoFields = "mobile-legends-global"
	// DemoTopUpCategoryHidden is a hidden top-up category.
	DemoTopUpCategoryHidden = "valorant-tr"

	// DemoManualService is a manual service with chat (replenishment), fields login and password.
	DemoManualService = "psn-tr-topup"
	// DemoManualOffer is an offer of DemoManualService delivered in 60 minutes.
	DemoManualOffer = "psn-tr-topup-500"
	// DemoManualServiceNoChat is a manual service without chat (transfer), field trade_url.
	DemoManualServiceNoChat = "cs2-skins-transfer"
	// DemoManualOfferNoChat is an offer of DemoManualServiceNoChat.
	DemoManualOfferNoChat = "cs2-skins-transfer-10"

	// DemoStoreApp is a store-gift game (ELDEN RING) with editions.
	DemoStoreApp = 1245620
	// DemoStoreSub is the Standard edition of DemoStoreApp, sold in every store region.
	DemoStoreSub = 12456201
)

// storeRegions are the store-gift regions of the default catalog and their price factors.
var storeRegions = []struct {
	code   string
	factor string
}{{"US", "1.00"}, {"EU", "1.00"}, {"UK", "0.92"}, {"TR", "0.45"}, {"KZ", "0.55"}, {"UA", "0.50"}}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// hashN returns a stable number in [0, n) derived from s.
func hashN(s string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}

// seedStock is the stock item id starts with: the one demo gives it if
// any, else none for about one item in soldOutOneIn, else base plus a
// stable number below spread.
func seedStock(id string, base, spread, soldOutOneIn int, demo map[string]int) int {
	if n, ok := demo[id]; ok {
		return n
	}
	if hashN(id, soldOutOneIn) == 0 {
		return 0
	}
	return base + hashN(id, spread)
}

// Default returns the built-in catalog: deterministic, looking like the
// real service, with out-of-stock and hidden items (see the Demo* constants).
func Default() *Catalog {
	return &Catalog{
		GiftCategories:  defaultGiftCategories(),
		Games:           defaultGames(),
		TopUpCategories: defaultTopUps(),
		ManualServices:  defaultManualServices(),
		StoreGames:      defaultStoreGames(),
		Rates: map[string]decimal.Decimal{
			"USD": dec("1"), "RUB": dec("92.5"), "UAH": dec("41.2"), "KZT": dec("510"),
		},
		MinTopupUSD:   dec("0.15"),
		TopupDiscount: dec("0.03"),
		PricePerStar:  dec("0.015"),
		StarsMin:      50,
		StarsMax:      10000,
		PremiumPlans: []PremiumPlan{
			{Months: 3, Price: dec("11.99")},
			{Months: 6, Price: dec("15.99")},
			{Months: 12, Price: dec("28.99")},
		},
	}
}

type regionMoney struct {
	currency string
	usdPer   string // USD per unit of currency
	denoms   []int
}

var giftRegions = map[string]regionMoney{
	"US": {"USD", "1", []int{5, 10, 25, 50, 100}},
	"EU": {"EUR", "1.08", []int{5, 10, 25, 50, 100}},
	"UK": {"GBP", "1.27", []int{5, 10, 25, 50, 100}},
	"TR": {"TRY", "0.031", []int{25, 50, 100, 250, 500}},
	"IN": {"INR", "0.012", []int{100, 500, 1000, 2000}},
	"KZ": {"KZT", "0.00196", []int{2000, 5000, 10000}},
	"BR": {"BRL", "0.18", []int{20, 50, 100}},
}

func defaultGiftCategories() []GiftCategory {
	brands := []struct {
		slug, brand, name string
		regions           []string
	}{
		{"apple", "Apple", "Apple Gift Card", []string{"US", "UK", "EU", "TR", "IN"}},
		{"google-play", "Google Play", "Google Play Gift Card", []string{"US", "EU", "UK", "TR", "IN", "BR"}},
		{"steam", "Steam Wallet", "Steam Wallet Code", []string{"US", "EU", "UK", "KZ", "IN", "BR"}},
		{"psn", "PlayStation", "PlayStation Store Gift Card", []string{"US", "EU", "UK", "TR", "IN"}},
		{"xbox", "Xbox", "Xbox Gift Card", []string{"US", "EU", "UK", "TR", "BR"}},
		{"netflix", "Netflix", "Netflix Gift Card", []string{"US", "EU", "TR"}},
		{"amazon", "Amazon", "Amazon Gift Card", []string{"US", "UK", "EU"}},
		{"razer-gold", "Razer Gold", "Razer Gold PIN", []string{"US", "TR"}},
	}
	stock := map[string]int{DemoGiftCard: 250, DemoGiftCardLowStock: 3, DemoGiftCardOutOfStock: 0}
	markup := dec("1.035")
	var cats []GiftCategory
	for _, b := range brands {
		for _, region := range b.regions {
			rm := giftRegions[region]
			id := b.slug + "-" + strings.ToLower(region)
			cat := GiftCategory{
				ID:     id,
				Name:   fmt.Sprintf("%s (%s)", b.name, region),
				Brand:  b.brand,
				Region: region,
				Hidden: id == DemoGiftCategoryHidden,
			}
			if hashN(id, 5) != 0 {
				cat.Image = "gift/" + b.slug + ".png"
			}
			denoms := rm.denoms
			if id == DemoGiftCategory {
				denoms = []int{2, 5, 10, 25, 50, 100, 500}
			}
			for _, d := range denoms {
				cid := fmt.Sprintf("%s-%d", id, d)
				card := GiftCard{
					ID:          cid,
					Name:        fmt.Sprintf("%s %d %s", b.name, d, rm.currency),
					Price:       decimal.NewFromInt(int64(d)).Mul(dec(rm.usdPer)).Mul(markup).Round(2),
					Stock:       seedStock(cid, 20, 480, 9, stock),
					MinQuantity: 1,
					MaxQuantity: 50,
					Hidden:      cid == DemoGiftCardHidden,
				}
				if card.Price.GreaterThan(dec("90")) {
					card.MaxQuantity = 10
				}
				if cid == DemoGiftCardMinQuantity {
					card.MinQuantity, card.MaxQuantity, card.Stock = 5, 100, 400
				}
				cat.Cards = append(cat.Cards, card)
			}
			cats = append(cats, cat)
		}
	}
	return cats
}

var (
	cisCountries = []Country{
		{"RU", "Russia"}, {"KZ", "Kazakhstan"}, {"BY", "Belarus"}, {"AM", "Armenia"}, {"AZ", "Azerbaijan"},
		{"KG", "Kyrgyzstan"}, {"MD", "Moldova"}, {"TJ", "Tajikistan"}, {"UZ", "Uzbekistan"},
	}
	euDenied = []Country{{"RU", "Russia"}, {"BY", "Belarus"}}
	usOnly   = []Country{{"US", "United States"}}
)

func defaultGames() []Game {
	type variant struct{ region, platform string }
	games := []struct {
		slug, name string
		usd        string // standard edition
		deluxe     string // "" when there is no deluxe edition
		variants   []variant
	}{
		{"elden-ring", "ELDEN RING", "59.99", "79.99", []variant{{"GLOBAL", "Steam"}, {"CIS", "Steam"}, {"EU", "Steam"}, {"US", "Xbox"}}},
		{"cyberpunk-2077", "Cyberpunk 2077", "59.99", "79.99", []variant{{"GLOBAL", "GOG"}, {"GLOBAL", "Steam"}, {"US", "Xbox"}, {"EU", "PlayStation"}}},
		{"baldurs-gate-3", "Baldur's Gate 3", "59.99", "79.99", []variant{{"GLOBAL", "Steam"}, {"CIS", "Steam"}}},
		{"red-dead-redemption-2", "Red Dead Redemption 2", "59.99", "", []variant{{"GLOBAL", "Rockstar"}, {"EU", "Xbox"}}},
		{"ea-sports-fc-25", "EA SPORTS FC 25", "69.99", "99.99", []variant{{"GLOBAL", "EA app"}, {"US", "PlayStation"}, {"GLOBAL", "Xbox"}}},
		{"minecraft", "Minecraft: Java & Bedrock Edition", "29.99", "", []variant{{"GLOBAL", "Microsoft"}}},
		{"forza-horizon-5", "Forza Horizon 5", "59.99", "99.99", []variant{{"GLOBAL", "Xbox"}, {"GLOBAL", "Steam"}}},
		{"hogwarts-legacy", "Hogwarts Legacy", "59.99", "69.99", []variant{{"GLOBAL", "Steam"}, {"EU", "PlayStation"}, {"US", "Xbox"}}},
		{"diablo-iv", "Diablo IV", "69.99", "89.99", []variant{{"GLOBAL", "Battle.net"}, {"GLOBAL", "Xbox"}}},
		{"assassins-creed-mirage", "Assassin's Creed Mirage", "49.99", "59.99", []variant{{"EU", "Ubisoft Connect"}, {"CIS", "Ubisoft Connect"}}},
		{"the-witcher-3", "The Witcher 3: Wild Hunt", "39.99", "", []variant{{"GLOBAL", "GOG"}}},
		{"zelda-totk", "The Legend of Zelda: Tears of the Kingdom", "69.99", "", []variant{{"EU", "Nintendo"}, {"US", "Nintendo"}}},
		{"helldivers-2", "HELLDIVERS 2", "39.99", "59.99", []variant{{"GLOBAL", "Steam"}}},
		{"gta-v", "Grand Theft Auto V", "29.99", "", []variant{{"GLOBAL", "Rockstar"}, {"RU", "Rockstar"}}},
		{"hades-ii", "Hades II", "29.99", "", []variant{{"GLOBAL", "Epic Games"}, {"GLOBAL", "Steam"}}},
	}
	factor := map[string]string{"GLOBAL": "1.00", "EU": "0.95", "US": "1.00", "CIS": "0.55", "RU": "0.50"}
	stock := map[string]int{DemoGameKey: 120, DemoGameKeyOutOfStock: 0}
	var out []Game
	for _, g := range games {
		for _, v := range g.variants {
			id := fmt.Sprintf("%s-%s-%s", g.slug, strings.ToLower(v.region), slug(v.platform))
			game := Game{
				ID:       id,
				Name:     g.name,
				Region:   v.region,
				Platform: v.platform,
				Hidden:   id == DemoGameHidden,
			}
			if hashN(id, 4) != 0 {
				game.Image = "keys/" + g.slug + ".png"
			}
			switch {
			case v.region == "CIS":
				game.RegionRestriction, game.Available = true, cisCountries
			case v.region == "EU":
				game.RegionRestriction, game.Unavailable = true, euDenied
			case v.region == "US" && v.platform == "Xbox":
				game.RegionRestriction, game.Available = true, usOnly
			}
			f := dec(factor[v.region])
			editions := []struct{ suffix, name, usd string }{{"std", "Standard Edition", g.usd}}
			if g.deluxe != "" {
				editions = append(editions, struct{ suffix, name, usd string }{"dlx", "Deluxe Edition", g.deluxe})
			}
			if id == DemoGame {
				editions = append(editions, struct{ suffix, name, usd string }{"col", "Collector's Bundle", "149.99"})
			}
			for _, e := range editions {
				kid := id + "-" + e.suffix
				k := GameKey{
					ID:          kid,
					Name:        fmt.Sprintf("%s %s (%s, %s)", g.name, e.name, v.platform, v.region),
					Price:       dec(e.usd).Mul(f).Round(2),
					Stock:       seedStock(kid, 5, 300, 7, stock),
					MinQuantity: 1,
					MaxQuantity: 20,
					Hidden:      kid == DemoGameKeyHidden,
				}
				game.Keys = append(game.Keys, k)
			}
			out = append(out, game)
		}
	}
	return out
}

func slug(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer(" ", "-", ".", "", "'", "", ":", "", "&", "and").Replace(s)
	return s
}

func defaultTopUps() []TopUpCategory {
	type offer struct{ suffix, name, usd string }
	mk := func(id string, offers []offer) []TopUpOffer {
		out := make([]TopUpOffer, 0, len(offers))
		for _, o := range offers {
			out = append(out, TopUpOffer{ID: id + "-" + o.suffix, Name: o.name, Price: dec(o.usd)})
		}
		return out
	}
	playerID := []TopUpField{{Key: "player_id", Label: "Player ID", Type: "text"}}
	pubg := []offer{{"60", "60 UC", "0.99"}, {"325", "300 + 25 UC", "4.89"}, {"660", "600 + 60 UC", "9.59"},
		{"1800", "1500 + 300 UC", "23.99"}, {"3850", "3000 + 850 UC", "47.49"}, {"8100", "6000 + 2100 UC", "94.99"}}
	genshinServer := []TopUpField{
		{Key: "uid", Label: "UID", Type: "number"},
		{Key: "server", Label: "Server", Type: "select", Options: []string{"America", "Europe", "Asia", "TW, HK, MO"}},
	}
	cats := []TopUpCategory{
		{ID: DemoTopUpCategory, Name: "PUBG Mobile UC (Global)", Brand: "PUBG Mobile", Region: "GLOBAL", Variant: "Auto",
			Note: "Delivered to the player ID within minutes.", Image: "topup/pubg.png",
			Fields: playerID, Offers: mk(DemoTopUpCategory, pubg)},
		{ID: "pubg-mobile-global-manual", Name: "PUBG Mobile UC (Global, manual)", Brand: "PUBG Mobile", Region: "GLOBAL", Variant: "Manual",
			Note: "Delivered by an operator within 24 hours.", Fields: playerID, Offers: mk("pubg-mobile-global-manual", pubg[1:])},
		{ID: DemoTopUpCategorySelect, Name: "Genshin Impact Genesis Crystals", Brand: "Genshin Impact", Variant: "Fast",
			Image: "topup/genshin.png", Fields: genshinServer,
			Offers: mk(DemoTopUpCategorySelect, []offer{{"60", "60 Genesis Crystals", "0.95"}, {"330", "300 + 30 Genesis Crystals", "4.79"},
				{"1090", "980 + 110 Genesis Crystals", "14.49"}, {"2240", "1980 + 260 Genesis Crystals", "28.99"},
				{"3880", "3280 + 600 Genesis Crystals", "47.99"}, {"8080", "6480 + 1600 Genesis Crystals", "94.99"},
				{"welkin", "Blessing of the Welkin Moon", "4.79"}})},
		{ID: "honkai-star-rail", Name: "Honkai: Star Rail Oneiric Shards", Brand: "Honkai: Star Rail", Variant: "Fast",
			Fields: []TopUpField{
				{Key: "uid", Label: "UID", Type: "number"},
				{Key: "server", Label: "Server", Type: "select", Options: []string{"America", "Europe", "Asia", "TW, HK, MO"}},
			},
			Offers: mk("honkai-star-rail", []offer{{"60", "60 Oneiric Shards", "0.95"}, {"330", "300 + 30 Oneiric Shards", "4.79"},
				{"express", "Express Supply Pass", "4.79"}})},
		{ID: DemoTopUpCategoryTwoFields, Name: "Mobile Legends Diamonds", Brand: "Mobile Legends", Region: "GLOBAL", Variant: "Auto",
			Image: "topup/mlbb.png",
			Fields: []TopUpField{
				{Key: "user_id", Label: "User ID", Type: "number"},
				{Key: "zone_id", Label: "Zone ID", Type: "number"},
			},
			Offers: mk(DemoTopUpCategoryTwoFields, []offer{{"86", "86 Diamonds", "1.49"}, {"172", "172 Diamonds", "2.95"},
				{"257", "257 Diamonds", "4.39"}, {"706", "706 Diamonds", "11.49"}, {"2195", "2195 Diamonds", "34.99"},
				{"weekly", "Weekly Diamond Pass", "1.79"}})},
		{ID: "mobile-legends-ph", Name: "Mobile Legends Diamonds (PH)", Brand: "Mobile Legends", Region: "PH",
			Fields: []TopUpField{
				{Key: "user_id", Label: "User ID", Type: "number"},
				{Key: "zone_id", Label: "Zone ID", Type: "number"},
			},
			Offers: mk("mobile-legends-ph", []offer{{"56", "56 Diamonds", "0.99"}, {"278", "278 Diamonds", "4.79"}})},
		{ID: "free-fire", Name: "Free Fire Diamonds", Brand: "Free Fire", Variant: "Auto", Fields: playerID,
			Offers: mk("free-fire", []offer{{"100", "100 Diamonds", "0.99"}, {"310", "310 Diamonds", "2.99"},
				{"520", "520 Diamonds", "4.89"}, {"1060", "1060 Diamonds", "9.69"}})},
		{ID: "clash-royale", Name: "Clash Royale Gems", Brand: "Supercell", Region: "GLOBAL", Variant: "Manual",
			Note:   "Requires the account email; the code arrives by email from Supercell.",
			Fields: []TopUpField{{Key: "email", Label: "Supercell ID email", Type: "text"}},
			Offers: mk("clash-royale", []offer{{"80", "80 Gems", "0.99"}, {"500", "500 Gems", "4.89"}, {"1200", "1200 Gems", "9.69"}})},
		{ID: DemoTopUpCategoryHidden, Name: "Valorant Points (TR)", Brand: "Valorant", Region: "TR", Hidden: true,
			Fields: []TopUpField{{Key: "riot_id", Label: "Riot ID", Type: "text"}},
			Offers: mk(DemoTopUpCategoryHidden, []offer{{"475", "475 VP", "3.99"}})},
	}
	// One hidden offer in the demo category.
	cats[0].Offers = append(cats[0].Offers, TopUpOffer{ID: DemoTopUpCategory + "-16200", Name: "16200 UC", Price: dec("189.99"), Hidden: true})
	return cats
}

func defaultManualServices() []ManualService {
	return []ManualService{
		{ID: DemoManualService, Name: "PlayStation Store TR account top-up", Kind: "replenishment", Chat: true,
			Info:   "An operator logs in to your Turkish PSN account and adds funds. Keep your 2FA codes at hand.",
			Image:  "manual/psn.png",
			Fields: []ManualField{{Code: "login", Name: "PSN login (email)"}, {Code: "password", Name: "PSN password"}},
			Offers: []ManualOffer{
				{ID: DemoManualService + "-250", Name: "250 TRY", Price: dec("8.90"), DeliveryMinutes: 60},
				{ID: DemoManualOffer, Name: "500 TRY", Price: dec("17.40"), DeliveryMinutes: 60},
				{ID: DemoManualService + "-1000", Name: "1000 TRY", Price: dec("34.20"), DeliveryMinutes: 120, Note: "Large amounts may need a second login."},
			}},
		{ID: "xbox-game-pass", Name: "Xbox Game Pass Ultimate activation", Kind: "replenishment", Chat: true,
			Fields: []ManualField{{Code: "email", Name: "Microsoft account email"}, {Code: "password", Name: "Microsoft account password"}},
			Offers: []ManualOffer{
				{ID: "xbox-game-pass-1m", Name: "1 month", Price: dec("9.80"), DeliveryMinutes: 30},
				{ID: "xbox-game-pass-3m", Name: "3 months", Price: dec("27.50"), DeliveryMinutes: 30},
				{ID: "xbox-game-pass-12m", Name: "12 months", Price: dec("99.00"), Note: "Delivered within one business day."},
			}},
		{ID: "nintendo-eshop-topup", Name: "Nintendo eShop balance top-up", Kind: "replenishment",
			Info:   "Funds are added through a gift code redeemed by our operator.",
			Fields: []ManualField{{Code: "email", Name: "Nintendo account email"}},
			Offers: []ManualOffer{
				{ID: "nintendo-eshop-topup-20", Name: "20 USD", Price: dec("21.50"), DeliveryMinutes: 240},
				{ID: "nintendo-eshop-topup-50", Name: "50 USD", Price: dec("52.90"), DeliveryMinutes: 240},
			}},
		{ID: DemoManualServiceNoChat, Name: "CS2 skins transfer", Kind: "transfer",
			Info:   "Items are sent as a trade offer to the given trade URL.",
			Fields: []ManualField{{Code: "trade_url", Name: "Trade offer URL"}},
			Offers: []ManualOffer{
				{ID: DemoManualOfferNoChat, Name: "Skins worth 10 USD", Price: dec("9.20"), DeliveryMinutes: 15},
				{ID: "cs2-skins-transfer-50", Name: "Skins worth 50 USD", Price: dec("45.50"), DeliveryMinutes: 15},
			}},
		{ID: "spotify-premium", Name: "Spotify Premium Individual", Kind: "replenishment", Chat: true,
			Fields: []ManualField{{Code: "email", Name: "Spotify email"}, {Code: "password", Name: "Spotify password"}, {Code: "country", Name: "Account country"}},
			Offers: []ManualOffer{
				{ID: "spotify-premium-1m", Name: "1 month", Price: dec("4.50"), DeliveryMinutes: 90},
				{ID: "spotify-premium-12m", Name: "12 months", Price: dec("45.00"), DeliveryMinutes: 90},
			}},
		{ID: "legacy-wallet-transfer", Name: "Legacy wallet transfer", Kind: "transfer", Hidden: true,
			Fields: []ManualField{{Code: "wallet", Name: "Wallet id"}},
			Offers: []ManualOffer{{ID: "legacy-wallet-transfer-1", Name: "Transfer", Price: dec("1.00")}}},
	}
}

func defaultStoreGames() []StoreGame {
	known := []struct {
		app         int
		name        string
		usd, deluxe string
	}{
		{1245620, "ELDEN RING", "59.99", "79.99"},
		{1091500, "Cyberpunk 2077", "59.99", "79.99"},
		{1086940, "Baldur's Gate 3", "59.99", "79.99"},
		{271590, "Grand Theft Auto V", "29.99", "44.99"},
		{1174180, "Red Dead Redemption 2", "59.99", "79.99"},
		{292030, "The Witcher 3: Wild Hunt", "39.99", "49.99"},
		{413150, "Stardew Valley", "14.99", ""},
		{105600, "Terraria", "9.99", ""},
		{1145360, "Hades", "24.99", ""},
		{367520, "Hollow Knight", "14.99", ""},
		{374320, "DARK SOULS III", "59.99", "79.99"},
		{814380, "Sekiro: Shadows Die Twice", "59.99", ""},
		{1593500, "God of War", "49.99", ""},
		{1817070, "Marvel's Spider-Man Remastered", "59.99", ""},
		{2050650, "Resident Evil 4", "39.99", "59.99"},
		{1196590, "Resident Evil Village", "39.99", ""},
		{582010, "Monster Hunter: World", "29.99", ""},
		{2246340, "Monster Hunter Wilds", "69.99", "99.99"},
		{1623730, "Palworld", "29.99", ""},
		{892970, "Valheim", "19.99", ""},
		{252490, "Rust", "39.99", ""},
		{264710, "Subnautica", "29.99", ""},
		{548430, "Deep Rock Galactic", "29.99", ""},
		{945360, "Among Us", "4.99", ""},
		{1966720, "Lethal Company", "9.99", ""},
		{553850, "HELLDIVERS 2", "39.99", "59.99"},
		{2358720, "Black Myth: Wukong", "59.99", "69.99"},
		{381210, "Dead by Daylight", "19.99", ""},
		{359550, "Tom Clancy's Rainbow Six Siege", "19.99", "39.99"},
		{1938090, "Call of Duty", "69.99", "99.99"},
	}
	adjectives := []string{"Crimson", "Silent", "Iron", "Hollow", "Golden", "Frozen", "Hidden", "Last",
		"Broken", "Neon", "Ancient", "Wild", "Distant", "Shadow", "Starlit"}
	nouns := []string{"Harbor", "Frontier", "Kingdom", "Signal", "Orchard", "Protocol", "Descent",
		"Voyage", "Citadel", "Tides"}
	prices := []string{"4.99", "9.99", "14.99", "19.99", "24.99", "29.99"}
	var out []StoreGame
	for _, k := range known {
		out = append(out, storeGame(k.app, k.name, k.usd, k.deluxe))
	}
	for i := range len(adjectives) * len(nouns) {
		app := 3000000 + i*10
		name := adjectives[i/len(nouns)] + " " + nouns[i%len(nouns)]
		deluxe := ""
		if i%4 == 0 {
			deluxe = "34.99"
		}
		out = append(out, storeGame(app, name, prices[i%len(prices)], deluxe))
	}
	return out
}

func storeGame(app int, name, usd, deluxe string) StoreGame {
	g := StoreGame{AppID: app, Name: name}
	add := func(k int, edition, price string) {
		e := StoreEdition{SubID: app*10 + k, Name: name + " " + edition}
		for _, r := range storeRegions {
			e.Prices = append(e.Prices, RegionPrice{Region: r.code, Price: dec(price).Mul(dec(r.factor)).Round(2)})
		}
		g.Editions = append(g.Editions, e)
	}
	add(1, "Standard Edition", usd)
	if deluxe != "" {
		add(2, "Deluxe Edition", deluxe)
	}
	return g
}
