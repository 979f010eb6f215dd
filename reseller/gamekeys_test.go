package reseller

import (
	"net/http"
	"net/url"
	"testing"
)

func TestGameKeys(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /game-keys", "game_keys.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"q": {"fc"}, "region": {"CIS"}, "platform": {"EA App"}, "limit": {"50"}})
	})
	got, err := env.client.GameKeys(t.Context(), &GameKeysOptions{Q: "fc", Region: "CIS", Platform: "EA App", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[GameKeyGame]{Object: "list", Total: 2, Data: []GameKeyGame{
		{GameID: "elden-ring-global", Name: "Elden Ring", Region: "GLOBAL", Platform: "Steam"},
		{GameID: "fc24-cis", Name: "EA FC 24", Region: "CIS", Platform: "EA App", RegionRestriction: true, Image: "https://img.example/fc.png"},
	}})
}

func TestGameKeyOffers(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /game-keys/{gameId}/keys", "game_key_offers.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("gameId") != "fc24-cis" {
			t.Errorf("gameId = %s", r.PathValue("gameId"))
		}
	})
	got, err := env.client.GameKeyOffers(t.Context(), "fc24-cis")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &GameKeyOffers{Object: "game_key_offers", GameID: "fc24-cis", Name: "EA FC 24", Region: "CIS",
		Platform: "EA App", RegionRestriction: true, Keys: []GameKeyOffer{
			{KeyID: "fc24-std", Name: "Standard", PriceUSD: money("19.9900"), Stock: 12, MinQuantity: 1, MaxQuantity: 3},
			{KeyID: "fc24-ult", Name: "Ultimate", PriceUSD: money("45.0000"), Stock: 2, MinQuantity: 1, MaxQuantity: 1},
		}})
	if err := got.Keys[1].CheckQuantity(2); err == nil {
		t.Error("CheckQuantity above max_quantity passed")
	}
}

func TestGameKeyRegionRestriction(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /game-keys/{gameId}/region-restriction", "region_restriction.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("gameId") != "fc24-cis" {
			t.Errorf("gameId = %s", r.PathValue("gameId"))
		}
	})
	got, err := env.client.GameKeyRegionRestriction(t.Context(), "fc24-cis")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &RegionRestriction{Object: "region_restriction", GameID: "fc24-cis", Region: "CIS", HasAvailability: true,
		Available:   []Country{{Code: "KZ", Name: "Kazakhstan"}, {Code: "AM", Name: "Armenia"}},
		Unavailable: []Country{{Code: "US", Name: "United States"}},
	})
}

func TestCreateGameKeyOrder(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /game-keys/order", "order_game_key_objects.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"game_id":"fc24-cis","key_id":"fc24-std","quantity":5}`)
	})
	got, err := env.client.CreateGameKeyOrder(t.Context(), &GameKeyOrderRequest{GameID: "fc24-cis", KeyID: "fc24-std", Quantity: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1008 || len(got.DeliveredKeys()) != 6 {
		t.Errorf("order = %+v", got)
	}
}
