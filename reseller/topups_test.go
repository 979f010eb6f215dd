package reseller

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

func TestTopUpCategories(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /top-ups/categories", "topup_categories.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"q": {"legends"}, "limit": {"1"}})
	})
	got, err := env.client.TopUpCategories(t.Context(), &TopUpCategoriesOptions{Q: "legends", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[TopUpCategory]{Object: "list", Total: 77, Data: []TopUpCategory{
		{CategoryID: "cat-mlbb", Name: "Mobile Legends", Note: "Player ID and Zone ID"},
		{CategoryID: "cat-pubg", Name: "PUBG Mobile"},
	}})
}

func TestTopUpOffers(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /top-ups/categories/{id}/offers", "topup_offers.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("id") != "cat-mlbb" {
			t.Errorf("id = %s", r.PathValue("id"))
		}
	})
	got, err := env.client.TopUpOffers(t.Context(), "cat-mlbb")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &TopUpOffers{Object: "top_up_offers", CategoryID: "cat-mlbb", Name: "Mobile Legends",
		Image: "https://img.example/mlbb.png",
		Fields: []TopUpField{
			{Key: "player_id", Label: "Player ID", Type: "text"},
			{Key: "zone_id", Label: "Zone ID", Type: "number"},
		},
		Offers: []TopUpOffer{
			{OfferID: "mlbb-86", Name: "86 Diamonds", PriceUSD: money("1.4200")},
			{OfferID: "mlbb-172", Name: "172 Diamonds", PriceUSD: money("2.8000")},
		}})
	if m := got.MissingFields(map[string]string{"player_id": "1", "zone_id": ""}); !slices.Equal(m, []string{"zone_id"}) {
		t.Errorf("MissingFields = %v", m)
	}
}

func TestTopUpBrands(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /top-ups/brands", "topup_brands.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, nil)
	})
	got, err := env.client.TopUpBrands(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[TopUpBrand]{Object: "list", Total: 1, Data: []TopUpBrand{
		{Brand: "Mobile Legends", Subcategories: []TopUpSubcategory{
			{CategoryID: "cat-mlbb", Name: "Mobile Legends", Region: "GLOBAL", Variant: "Auto"},
			{CategoryID: "cat-mlbb-ru", Name: "Mobile Legends RU", Region: "RU"},
		}},
	}})
}

func TestCreateTopUpOrder(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /top-ups/order", "order_game_topup.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"category_id":"cat-mlbb","offer_id":"mlbb-86","fields":{"player_id":"12345678","zone_id":"2001"}}`)
	})
	got, err := env.client.CreateTopUpOrder(t.Context(), &TopUpOrderRequest{
		CategoryID: "cat-mlbb", OfferID: "mlbb-86", Fields: map[string]string{"player_id": "12345678", "zone_id": "2001"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1009 || got.Type != OrderTypeGameTopup {
		t.Errorf("order = %+v", got)
	}
	if _, ok := got.RawField("fields"); !ok {
		t.Error("game top-up fields lost from Raw")
	}
}
