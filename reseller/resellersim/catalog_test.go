package resellersim

import (
	"encoding/json"
	"net/http"
	"shopbot/reseller/resellersim/simcatalog"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// ids returns the values of key in the objects of a list.
func ids(t *testing.T, data any, key string) []string {
	t.Helper()
	var out []string
	for _, v := range list(t, data) {
		switch x := v.(obj)[key].(type) {
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, x.String())
		default:
			t.Fatalf("%s = %v (%T)", key, x, x)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestGiftCategories(t *testing.T) {
	e := newEnv(t, Config{})
	l := e.get("/gift-cards/categories")
	eq(t, "object", l["object"], any("list"))
	all := ids(t, l["data"], "category_id")
	eq(t, "total", num(t, l["total"]), len(all))
	if !contains(all, simcatalog.DemoGiftCategory) || contains(all, simcatalog.DemoGiftCategoryHidden) {
		t.Fatalf("categories %v: want %s and not %s", all, simcatalog.DemoGiftCategory, simcatalog.DemoGiftCategoryHidden)
	}
	first := list(t, l["data"])[0].(obj)
	for _, k := range []string{"object", "category_id", "name", "image"} {
		if _, ok := first[k]; !ok {
			t.Fatalf("category entry lacks %s: %v", k, first)
		}
	}

	// q searches names and ids, case-insensitively.
	apple := ids(t, e.get("/gift-cards/categories?q=APPLE")["data"], "category_id")
	if len(apple) != 4 || contains(apple, simcatalog.DemoGiftCategoryHidden) {
		t.Fatalf("q=APPLE: %v", apple)
	}
	byID := ids(t, e.get("/gift-cards/categories?q=steam-us")["data"], "category_id")
	eq(t, "q=steam-us", strings.Join(byID, ","), "steam-us")
	byName := e.get("/gift-cards/categories?q=wallet%20code%20(kz)")
	eq(t, "q by name", strings.Join(ids(t, byName["data"], "category_id"), ","), "steam-kz")
	eq(t, "q none", num(t, e.get("/gift-cards/categories?q=zzz")["total"]), 0)

	limited := e.get("/gift-cards/categories?limit=3")
	eq(t, "limit data", len(list(t, limited["data"])), 3)
	eq(t, "limit total", num(t, limited["total"]), len(all))
	e.get("/gift-cards/categories?limit=600")
	for _, q := range []string{"limit=0", "limit=601", "limit=ten"} {
		e.wantError(e.send(e.key, http.MethodGet, "/gift-cards/categories?"+q, nil), http.StatusBadRequest, "invalid_request")
	}
}

func TestGiftCards(t *testing.T) {
	e := newEnv(t, Config{})
	o := e.get("/gift-cards/categories/" + simcatalog.DemoGiftCategory + "/cards")
	eq(t, "object", o["object"], any("gift_card_offers"))
	eq(t, "category_id", o["category_id"], any(simcatalog.DemoGiftCategory))
	cards := map[string]obj{}
	for _, v := range list(t, o["offers"]) {
		c := v.(obj)
		cards[c["card_id"].(string)] = c
	}
	if _, ok := cards[simcatalog.DemoGiftCardHidden]; ok {
		t.Fatal("hidden card listed")
	}
	c := cards[simcatalog.DemoGiftCard]
	eq(t, "price", c["price_usd"], any("10.3500"))
	eq(t, "stock", num(t, c["stock"]), 250)
	eq(t, "min", num(t, c["min_quantity"]), 1)
	eq(t, "max", num(t, c["max_quantity"]), 50)
	eq(t, "out of stock", num(t, cards[simcatalog.DemoGiftCardOutOfStock]["stock"]), 0)

	for _, id := range []string{simcatalog.DemoGiftCategoryHidden, "no-such"} {
		e.wantError(e.send(e.key, http.MethodGet, "/gift-cards/categories/"+id+"/cards", nil), http.StatusNotFound, "not_found")
	}

	// Test hooks change what is served.
	e.sim.SetPrice(simcatalog.DemoGiftCard, decimal.RequireFromString("9.5"))
	e.sim.SetStock(simcatalog.DemoGiftCard, 7)
	e.sim.SetHidden(simcatalog.DemoGiftCardLowStock, true)
	if !e.sim.SetHidden(simcatalog.DemoGiftCardHidden, false) || e.sim.SetHidden("nothing", true) {
		t.Fatal("SetHidden reports the wrong existence")
	}
	o = e.get("/gift-cards/categories/" + simcatalog.DemoGiftCategory + "/cards")
	cards = map[string]obj{}
	for _, v := range list(t, o["offers"]) {
		c := v.(obj)
		cards[c["card_id"].(string)] = c
	}
	eq(t, "set price", cards[simcatalog.DemoGiftCard]["price_usd"], any("9.5000"))
	eq(t, "set stock", num(t, cards[simcatalog.DemoGiftCard]["stock"]), 7)
	if _, ok := cards[simcatalog.DemoGiftCardLowStock]; ok {
		t.Fatal("card hidden by SetHidden is listed")
	}
	if _, ok := cards[simcatalog.DemoGiftCardHidden]; !ok {
		t.Fatal("card shown by SetHidden is not listed")
	}
	e.sim.SetHidden(simcatalog.DemoGiftCategory, true)
	e.wantError(e.send(e.key, http.MethodGet, "/gift-cards/categories/"+simcatalog.DemoGiftCategory+"/cards", nil), http.StatusNotFound, "not_found")
	if contains(ids(t, e.get("/gift-cards/categories")["data"], "category_id"), simcatalog.DemoGiftCategory) {
		t.Fatal("category hidden by SetHidden is listed")
	}
}

func TestGiftBrands(t *testing.T) {
	e := newEnv(t, Config{})
	l := e.get("/gift-cards/brands")
	brands := ids(t, l["data"], "brand")
	eq(t, "total", num(t, l["total"]), len(brands))
	for _, b := range []string{"Apple", "Google Play", "Steam Wallet", "PlayStation", "Xbox", "Netflix", "Amazon"} {
		if !contains(brands, b) {
			t.Fatalf("brand %s missing from %v", b, brands)
		}
	}
	apple := e.get("/gift-cards/brands?q=apple")
	eq(t, "q total", num(t, apple["total"]), 1)
	b := list(t, apple["data"])[0].(obj)
	eq(t, "object", b["object"], any("gift_brand"))
	subs := ids(t, b["subcategories"], "category_id")
	if contains(subs, simcatalog.DemoGiftCategoryHidden) || !contains(subs, simcatalog.DemoGiftCategory) {
		t.Fatalf("apple subcategories %v", subs)
	}
	sub := list(t, b["subcategories"])[0].(obj)
	eq(t, "region", sub["region"], any("US"))
	if _, ok := sub["image"]; !ok {
		t.Fatal("subcategory lacks image")
	}
	// A category id narrows the brand to that subcategory.
	tr := list(t, e.get("/gift-cards/brands?q=psn-tr")["data"])
	eq(t, "psn-tr", len(tr), 1)
	eq(t, "psn-tr subs", strings.Join(ids(t, tr[0].(obj)["subcategories"], "category_id"), ","), "psn-tr")
}

func TestGameKeys(t *testing.T) {
	e := newEnv(t, Config{})
	l := e.get("/game-keys")
	all := ids(t, l["data"], "game_id")
	eq(t, "total", num(t, l["total"]), len(all))
	if contains(all, simcatalog.DemoGameHidden) || !contains(all, simcatalog.DemoGame) {
		t.Fatalf("games %v", all)
	}
	g := list(t, l["data"])[0].(obj)
	eq(t, "object", g["object"], any("game"))
	for _, k := range []string{"game_id", "name", "region", "platform", "region_restriction", "image"} {
		if _, ok := g[k]; !ok {
			t.Fatalf("game entry lacks %s", k)
		}
	}

	cis := e.get("/game-keys?region=cis")
	for _, v := range list(t, cis["data"]) {
		eq(t, "region", v.(obj)["region"], any("CIS"))
	}
	if num(t, cis["total"]) < 2 {
		t.Fatalf("CIS games: %v", cis["total"])
	}
	xbox := e.get("/game-keys?platform=Xbox&region=US")
	for _, v := range list(t, xbox["data"]) {
		eq(t, "platform", v.(obj)["platform"], any("Xbox"))
	}
	elden := ids(t, e.get("/game-keys?q=ELDEN")["data"], "game_id")
	eq(t, "q=ELDEN", len(elden), 4)
	eq(t, "q by id", num(t, e.get("/game-keys?q=" + simcatalog.DemoGameRestricted)["total"]), 1)
	eq(t, "limit", len(list(t, e.get("/game-keys?limit=2")["data"])), 2)
	for _, q := range []string{"limit=0", "limit=501"} {
		e.wantError(e.send(e.key, http.MethodGet, "/game-keys?"+q, nil), http.StatusBadRequest, "invalid_request")
	}

	offers := e.get("/game-keys/" + simcatalog.DemoGame + "/keys")
	eq(t, "object", offers["object"], any("game_key_offers"))
	eq(t, "game_id", offers["game_id"], any(simcatalog.DemoGame))
	eq(t, "platform", offers["platform"], any("Steam"))
	keys := ids(t, offers["keys"], "key_id")
	if contains(keys, simcatalog.DemoGameKeyHidden) || !contains(keys, simcatalog.DemoGameKey) || !contains(keys, simcatalog.DemoGameKeyOutOfStock) {
		t.Fatalf("keys %v", keys)
	}
	k := list(t, offers["keys"])[0].(obj)
	eq(t, "stock", num(t, k["stock"]), 120)
	eq(t, "price", k["price_usd"], any("59.9900"))
	for _, id := range []string{simcatalog.DemoGameHidden, "nope"} {
		e.wantError(e.send(e.key, http.MethodGet, "/game-keys/"+id+"/keys", nil), http.StatusNotFound, "not_found")
		e.wantError(e.send(e.key, http.MethodGet, "/game-keys/"+id+"/region-restriction", nil), http.StatusNotFound, "not_found")
	}
}

func TestRegionRestriction(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.get("/game-keys/" + simcatalog.DemoGameRestricted + "/region-restriction")
	eq(t, "object", r["object"], any("region_restriction"))
	eq(t, "game_id", r["game_id"], any(simcatalog.DemoGameRestricted))
	eq(t, "region", r["region"], any("CIS"))
	eq(t, "has_availability", r["has_availability"], any(true))
	avail := ids(t, r["available"], "code")
	if !contains(avail, "KZ") || len(list(t, r["unavailable"])) != 0 {
		t.Fatalf("restriction %v", r)
	}
	eq(t, "name", list(t, r["available"])[0].(obj)["name"], any("Russia"))

	deny := e.get("/game-keys/" + simcatalog.DemoGameRestrictedDeny + "/region-restriction")
	eq(t, "deny has_availability", deny["has_availability"], any(false))
	eq(t, "unavailable", strings.Join(ids(t, deny["unavailable"], "code"), ","), "RU,BY")

	free := e.get("/game-keys/" + simcatalog.DemoGame + "/region-restriction")
	eq(t, "free has_availability", free["has_availability"], any(false))
	eq(t, "free available", len(list(t, free["available"])), 0)

	for _, v := range list(t, e.get("/game-keys?q=elden")["data"]) {
		g := v.(obj)
		want := g["game_id"] != simcatalog.DemoGame
		eq(t, "flag of "+g["game_id"].(string), g["region_restriction"], any(want))
	}
}

func TestTopUps(t *testing.T) {
	e := newEnv(t, Config{})
	l := e.get("/top-ups/categories")
	all := ids(t, l["data"], "category_id")
	if contains(all, simcatalog.DemoTopUpCategoryHidden) || !contains(all, simcatalog.DemoTopUpCategory) {
		t.Fatalf("top-up categories %v", all)
	}
	eq(t, "total", num(t, l["total"]), len(all))
	eq(t, "q", num(t, e.get("/top-ups/categories?q=genshin")["total"]), 1)
	eq(t, "limit", len(list(t, e.get("/top-ups/categories?limit=1")["data"])), 1)
	e.wantError(e.send(e.key, http.MethodGet, "/top-ups/categories?limit=601", nil), http.StatusBadRequest, "invalid_request")

	o := e.get("/top-ups/categories/" + simcatalog.DemoTopUpCategory + "/offers")
	eq(t, "object", o["object"], any("top_up_offers"))
	eq(t, "fields", strings.Join(ids(t, o["fields"], "key"), ","), "player_id")
	f := list(t, o["fields"])[0].(obj)
	eq(t, "label", f["label"], any("Player ID"))
	eq(t, "type", f["type"], any("text"))
	offers := ids(t, o["offers"], "offer_id")
	if !contains(offers, simcatalog.DemoTopUpOffer) || contains(offers, simcatalog.DemoTopUpCategory+"-16200") {
		t.Fatalf("offers %v", offers)
	}
	eq(t, "price", list(t, o["offers"])[0].(obj)["price_usd"], any("0.9900"))

	g := e.get("/top-ups/categories/" + simcatalog.DemoTopUpCategorySelect + "/offers")
	eq(t, "genshin fields", strings.Join(ids(t, g["fields"], "key"), ","), "uid,server")
	server := list(t, g["fields"])[1].(obj)
	eq(t, "select", server["type"], any("select"))
	eq(t, "options", len(list(t, server["options"])), 4)
	ml := e.get("/top-ups/categories/" + simcatalog.DemoTopUpCategoryTwoFields + "/offers")
	eq(t, "ml fields", strings.Join(ids(t, ml["fields"], "key"), ","), "user_id,zone_id")

	for _, id := range []string{simcatalog.DemoTopUpCategoryHidden, "nope"} {
		e.wantError(e.send(e.key, http.MethodGet, "/top-ups/categories/"+id+"/offers", nil), http.StatusNotFound, "not_found")
	}

	b := e.get("/top-ups/brands")
	brands := map[string]obj{}
	for _, v := range list(t, b["data"]) {
		brands[v.(obj)["brand"].(string)] = v.(obj)
	}
	eq(t, "brands total", num(t, b["total"]), len(brands))
	if _, ok := brands["Valorant"]; ok {
		t.Fatal("hidden top-up category listed in brands")
	}
	pubg := list(t, brands["PUBG Mobile"]["subcategories"])
	eq(t, "pubg subs", len(pubg), 2)
	eq(t, "variant", pubg[0].(obj)["variant"], any("Auto"))
	eq(t, "variant manual", pubg[1].(obj)["variant"], any("Manual"))
	genshin := list(t, brands["Genshin Impact"]["subcategories"])[0].(obj)
	eq(t, "default region", genshin["region"], any("GLOBAL"))
	eq(t, "name", genshin["name"], any("Genshin Impact Genesis Crystals"))
	ff := list(t, brands["Free Fire"]["subcategories"])[0].(obj)
	eq(t, "ff region", ff["region"], any("GLOBAL"))
	ph := list(t, brands["Mobile Legends"]["subcategories"])[1].(obj)
	eq(t, "ph variant", ph["variant"], nil)
	eq(t, "ph region", ph["region"], any("PH"))
	eq(t, "brands q", num(t, e.get("/top-ups/brands?q=mobile")["total"]), 2)
}

func TestManualServices(t *testing.T) {
	e := newEnv(t, Config{})
	l := e.get("/manual-services")
	all := ids(t, l["data"], "id")
	if contains(all, "legacy-wallet-transfer") || !contains(all, simcatalog.DemoManualService) {
		t.Fatalf("services %v", all)
	}
	for _, v := range list(t, l["data"]) {
		s := v.(obj)
		if s["id"] == simcatalog.DemoManualService {
			eq(t, "chat", s["chat"], any(true))
			eq(t, "kind", s["kind"], any("replenishment"))
			eq(t, "object", s["object"], any("manual_service"))
		}
		if s["id"] == simcatalog.DemoManualServiceNoChat {
			eq(t, "chat", s["chat"], any(false))
			eq(t, "kind", s["kind"], any("transfer"))
			eq(t, "image", s["image"], nil)
		}
	}
	o := e.get("/manual-services/" + simcatalog.DemoManualService + "/offers")
	eq(t, "object", o["object"], any("manual_offers"))
	eq(t, "service_id", o["service_id"], any(simcatalog.DemoManualService))
	eq(t, "chat", o["chat"], any(true))
	eq(t, "fields", strings.Join(ids(t, o["fields"], "code"), ","), "login,password")
	off := list(t, o["offers"])[1].(obj)
	eq(t, "offer id", off["id"], any(simcatalog.DemoManualOffer))
	eq(t, "price", off["price_usd"], any("17.4000"))
	eq(t, "delivery", num(t, off["delivery_minutes"]), 60)
	eq(t, "note", off["note"], nil)
	xbox := e.get("/manual-services/xbox-game-pass/offers")
	eq(t, "null delivery", list(t, xbox["offers"])[2].(obj)["delivery_minutes"], nil)
	for _, id := range []string{"legacy-wallet-transfer", "nope"} {
		e.wantError(e.send(e.key, http.MethodGet, "/manual-services/"+id+"/offers", nil), http.StatusNotFound, "not_found")
	}
}

func TestStoreGifts(t *testing.T) {
	e := newEnv(t, Config{})
	l := e.get("/store-gifts/games")
	eq(t, "default page", len(list(t, l["data"])), 100)
	if num(t, l["total"]) <= 100 {
		t.Fatalf("total %v", l["total"])
	}
	first := list(t, l["data"])[0].(obj)
	eq(t, "first app", num(t, first["app_id"]), simcatalog.DemoStoreApp)
	eq(t, "first name", first["name"], any("ELDEN RING"))
	big := e.get("/store-gifts/games?limit=500")
	eq(t, "limit 500", len(list(t, big["data"])), num(t, big["total"]))
	eq(t, "limit 1", len(list(t, e.get("/store-gifts/games?limit=1")["data"])), 1)
	for _, q := range []string{"limit=0", "limit=501"} {
		e.wantError(e.send(e.key, http.MethodGet, "/store-gifts/games?"+q, nil), http.StatusBadRequest, "invalid_request")
	}

	g := e.get(path("/store-gifts/games/%d", simcatalog.DemoStoreApp))
	eq(t, "object", g["object"], any("store_gift_offers"))
	eq(t, "app_id", num(t, g["app_id"]), simcatalog.DemoStoreApp)
	eds := list(t, g["offers"])
	eq(t, "editions", len(eds), 2)
	std := eds[0].(obj)
	eq(t, "sub_id", num(t, std["sub_id"]), simcatalog.DemoStoreSub)
	eq(t, "name", std["name"], any("ELDEN RING Standard Edition"))
	regions := ids(t, std["regions"], "region")
	eq(t, "regions", strings.Join(regions, ","), "US,EU,UK,TR,KZ,UA")
	eq(t, "us price", list(t, std["regions"])[0].(obj)["price_usd"], any("59.9900"))

	for _, p := range []string{"/store-gifts/games/1", "/store-gifts/games/abc"} {
		e.wantError(e.send(e.key, http.MethodGet, p, nil), http.StatusNotFound, "not_found")
	}
	e.sim.SetHidden(strconv.Itoa(simcatalog.DemoStoreApp), true)
	e.wantError(e.send(e.key, http.MethodGet, path("/store-gifts/games/%d", simcatalog.DemoStoreApp), nil), http.StatusNotFound, "not_found")
	if contains(ids(t, e.get("/store-gifts/games")["data"], "app_id"), strconv.Itoa(simcatalog.DemoStoreApp)) {
		t.Fatal("hidden app listed")
	}
}

func TestStoreTopupRatesAndLogin(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.send(e.key, http.MethodGet, "/store-topup/rates", nil)
	eq(t, "status", r.status, http.StatusOK)
	if !strings.Contains(string(r.raw), `"RUB":92.5`) || !strings.Contains(string(r.raw), `"USD":1`) {
		t.Fatalf("rates are not JSON numbers: %s", r.raw)
	}
	eq(t, "object", r.body["object"], any("store_rates"))
	eq(t, "base", r.body["base"], any("USD"))
	eq(t, "min", r.body["min_topup_usd"], any("0.1500"))
	rates := r.body["rates"].(obj)
	eq(t, "KZT", rates["KZT"], any(json.Number("510")))
	eq(t, "UAH", rates["UAH"], any(json.Number("41.2")))

	ok := e.post("/store-topup/check-login", obj{"store_login": "gaben"})
	eq(t, "object", ok["object"], any("store_login_check"))
	eq(t, "login", ok["store_login"], any("gaben"))
	eq(t, "can_refill", ok["can_refill"], any(true))
	eq(t, "invalid login", e.post("/store-topup/check-login", obj{"store_login": "some_INVALID_user"})["can_refill"], any(false))
	for _, body := range []any{obj{"store_login": ""}, obj{}, "{", obj{"store_login": 5}} {
		e.wantError(e.send(e.key, http.MethodPost, "/store-topup/check-login", body), http.StatusBadRequest, "invalid_request")
	}
}

func TestMessengerPricing(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.get("/messenger/stars")
	eq(t, "object", s["object"], any("messenger_stars_pricing"))
	eq(t, "price", s["price_per_star"], any("0.0150"))
	eq(t, "min", num(t, s["min"]), 50)
	eq(t, "max", num(t, s["max"]), 10000)
	p := e.get("/messenger/premium")
	eq(t, "object", p["object"], any("messenger_premium_pricing"))
	plans := list(t, p["plans"])
	eq(t, "plans", len(plans), 3)
	eq(t, "months", num(t, plans[2].(obj)["months"]), 12)
	eq(t, "price", plans[0].(obj)["price_usd"], any("11.9900"))
	if _, ok := p["updated_at"].(string); !ok {
		t.Fatal("updated_at missing")
	}
	e.sim.SetPrice("stars", decimal.RequireFromString("0.02"))
	e.sim.SetPrice("premium-3", decimal.RequireFromString("10"))
	eq(t, "set stars", e.get("/messenger/stars")["price_per_star"], any("0.0200"))
	eq(t, "set premium", list(t, e.get("/messenger/premium")["plans"])[0].(obj)["price_usd"], any("10.0000"))
}

func TestCustomCatalog(t *testing.T) {
	cat := &simcatalog.Catalog{
		GiftCategories: []simcatalog.GiftCategory{{ID: "c1", Name: "Only", Cards: []simcatalog.GiftCard{
			{ID: "k1", Name: "One", Price: decimal.RequireFromString("1"), Stock: 1, MinQuantity: 1, MaxQuantity: 1},
		}}},
		Rates: map[string]decimal.Decimal{"USD": decimal.NewFromInt(1)},
	}
	e := newEnv(t, Config{Catalog: cat})
	eq(t, "total", num(t, e.get("/gift-cards/categories")["total"]), 1)
	e.post("/gift-cards/order", obj{"category_id": "c1", "card_id": "k1", "quantity": 1})
	eq(t, "stock taken", num(t, list(t, e.get("/gift-cards/categories/c1/cards")["offers"])[0].(obj)["stock"]), 0)
	eq(t, "caller's catalog untouched", cat.GiftCategories[0].Cards[0].Stock, 1)
	eq(t, "store games", num(t, e.get("/store-gifts/games")["total"]), 0)
	eq(t, "Catalog copy", e.sim.Catalog().GiftCategories[0].Cards[0].Stock, 0)
}
