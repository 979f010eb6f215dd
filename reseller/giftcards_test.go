package reseller

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
)

func TestGiftCardCategories(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /gift-cards/categories", "gift_card_categories.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"q": {"psn & co"}, "limit": {"600"}})
	})
	got, err := env.client.GiftCardCategories(t.Context(), &GiftCardCategoriesOptions{Q: "psn & co", Limit: 600})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[GiftCategory]{Object: "list", Total: 312, Data: []GiftCategory{
		{CategoryID: "cat-psn-us", Name: "PSN USA", Image: "https://img.example/psn.png"},
		{CategoryID: "cat-xbox", Name: "Xbox"},
	}})
}

func TestGiftCardOffers(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /gift-cards/categories/{id}/cards", "gift_card_offers.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("id") != "cat-psn-us" {
			t.Errorf("id = %s", r.PathValue("id"))
		}
	})
	got, err := env.client.GiftCardOffers(t.Context(), "cat-psn-us")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &GiftCardOffers{Object: "gift_card_offers", CategoryID: "cat-psn-us", Name: "PSN USA",
		Offers: []GiftCardOffer{
			{CardID: "psn-10", Name: "PSN 10 USD", PriceUSD: money("9.9000"), Stock: 57, MinQuantity: 1, MaxQuantity: 10},
			{CardID: "psn-50", Name: "PSN 50 USD", PriceUSD: money("48.5000"), Stock: 0, MinQuantity: 1, MaxQuantity: 5},
		}})
	var ve *ValidationError
	if err := got.Offers[0].CheckQuantity(10); err != nil {
		t.Errorf("CheckQuantity(10) = %v", err)
	}
	if err := got.Offers[0].CheckQuantity(11); !errors.As(err, &ve) || ve.Field != "quantity" {
		t.Errorf("CheckQuantity(11) = %v", err)
	}
	if err := got.Offers[1].CheckQuantity(1); !errors.As(err, &ve) {
		t.Errorf("out of stock: CheckQuantity(1) = %v", err)
	}
}

func TestCreateGiftCardOrder(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /gift-cards/order", "order_gift_card.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"category_id":"cat-psn-us","card_id":"psn-10","quantity":2}`)
	})
	got, err := env.client.CreateGiftCardOrder(t.Context(), &GiftCardOrderRequest{CategoryID: "cat-psn-us", CardID: "psn-10", Quantity: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1006 || len(got.Codes) != 2 {
		t.Errorf("order = %+v", got)
	}
}

func TestGiftCardBrands(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /gift-cards/brands", "gift_card_brands.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"q": {"play"}})
	})
	got, err := env.client.GiftCardBrands(t.Context(), &GiftCardBrandsOptions{Q: "play"})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[GiftCardBrand]{Object: "list", Total: 1, Data: []GiftCardBrand{
		{Brand: "PlayStation", Subcategories: []GiftCardSubcategory{
			{CategoryID: "cat-psn-us", Region: "US"}, {CategoryID: "cat-psn-global"},
		}},
	}})
}
