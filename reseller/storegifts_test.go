package reseller

import (
	"net/http"
	"net/url"
	"testing"
)

func TestStoreGames(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /store-gifts/games", "store_games.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"limit": {"500"}})
	})
	got, err := env.client.StoreGames(t.Context(), &StoreGamesOptions{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[StoreGame]{Object: "list", Data: []StoreGame{
		{AppID: 730, Name: "Counter-Strike 2"}, {AppID: 570, Name: "Dota 2"},
	}})
}

func TestStoreGiftOffers(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /store-gifts/games/{appid}", "store_gift_offers.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("appid") != "730" {
			t.Errorf("appid = %s", r.PathValue("appid"))
		}
	})
	got, err := env.client.StoreGiftOffers(t.Context(), 730)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &StoreGiftOffers{Object: "store_gift_offers", AppID: 730, Offers: []StoreGiftEdition{
		{SubID: 54029, Name: "Prime Status Upgrade", Regions: []StoreGiftRegion{
			{Region: "KZ", PriceUSD: money("13.2100")}, {Region: "TR", PriceUSD: money("9.0000")},
		}},
		{SubID: 1, Name: "Empty"},
	}})
}

func TestCreateStoreGiftOrder(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /store-gifts/order", "order_store_gift.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"app_id":730,"sub_id":54029,"region":"KZ","invite_url":"https://store.example/p/invite/ABC","app_name":"Counter-Strike 2"}`)
	})
	got, err := env.client.CreateStoreGiftOrder(t.Context(), &StoreGiftOrderRequest{
		AppID: 730, SubID: 54029, Region: "KZ", InviteURL: "https://store.example/p/invite/ABC", AppName: "Counter-Strike 2",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1005 || got.InviteURL == "" {
		t.Errorf("order = %+v", got)
	}
}

func TestCreateStoreGiftOrder_appNameOptional(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /store-gifts/order", "order_store_gift.json", func(t *testing.T, r *http.Request) {
		testJSONBody(t, r, `{"app_id":730,"sub_id":54029,"region":"KZ","invite_url":"u"}`)
	})
	if _, err := env.client.CreateStoreGiftOrder(t.Context(), &StoreGiftOrderRequest{AppID: 730, SubID: 54029, Region: "KZ", InviteURL: "u"}); err != nil {
		t.Fatal(err)
	}
}
