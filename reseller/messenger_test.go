package reseller

import (
	"net/http"
	"testing"
)

func TestStarsPricing(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /messenger/stars", "stars_pricing.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
	})
	got, err := env.client.StarsPricing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &StarsPricing{Object: "messenger_stars_pricing", PricePerStar: money("0.0150"),
		Min: 50, Max: 10000, UpdatedAt: "2024-05-01 09:00"})
}

func TestBuyStars(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /messenger/stars/buy", "order_messenger_stars.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"messenger_username":"alice","quantity":500}`)
	})
	got, err := env.client.BuyStars(t.Context(), &StarsOrderRequest{MessengerUsername: "alice", Quantity: 500})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1002 || got.Stars != 500 {
		t.Errorf("order = %+v", got)
	}
}

func TestPremiumPricing(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /messenger/premium", "premium_pricing.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
	})
	got, err := env.client.PremiumPricing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &PremiumPricing{
		Object: "messenger_premium_pricing",
		Plans: []PremiumPlan{
			{Months: 3, PriceUSD: money("12.9900")},
			{Months: 6, PriceUSD: money("16.4900")},
			{Months: 12, PriceUSD: money("29.9900")},
		},
		UpdatedAt: "2024-05-01T09:00:00Z",
	})
}

func TestBuyPremium(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /messenger/premium/buy", "order_messenger_premium.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"messenger_username":"bob","months":12}`)
	})
	got, err := env.client.BuyPremium(t.Context(), &PremiumOrderRequest{MessengerUsername: "bob", Months: 12})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1003 || got.Months != 12 {
		t.Errorf("order = %+v", got)
	}
}
