package reseller

import (
	"net/http"
	"slices"
	"testing"
)

func TestManualServices(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /manual-services", "manual_services.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, nil)
	})
	got, err := env.client.ManualServices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &List[ManualService]{
		Object: "list",
		Data: []ManualService{
			{ID: "svc-wallet", Name: "Wallet transfer", Kind: "transfer", Chat: true, Info: "Takes up to 24h"},
			{ID: "svc-refill", Name: "Account refill", Kind: "replenishment"},
		},
	})
}

func TestManualServiceOffers(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /manual-services/{id}/offers", "manual_offers.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if got, want := r.URL.EscapedPath(), "/manual-services/svc%2Fwallet%20x/offers"; got != want {
			t.Errorf("path = %s, want %s", got, want)
		}
		if r.PathValue("id") != "svc/wallet x" {
			t.Errorf("id = %q", r.PathValue("id"))
		}
	})
	got, err := env.client.ManualServiceOffers(t.Context(), "svc/wallet x")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &ManualOffers{
		Object: "manual_offers", ServiceID: "svc-wallet", Kind: "transfer", Chat: true,
		Fields: []ManualField{{Code: "account", Name: "Account e-mail"}, {Code: "note", Name: "Note"}},
		Offers: []ManualOffer{
			{ID: "p-10", Name: "10 USD", PriceUSD: money("10.9000"), DeliveryMinutes: ptr(30)},
			{ID: "p-50", Name: "50 USD", PriceUSD: money("52.0000"), Note: "manual check"},
		},
	})
	if missing := got.MissingFields(map[string]string{"account": "x@y.example"}); !slices.Equal(missing, []string{"note"}) {
		t.Errorf("MissingFields = %v", missing)
	}
}

func TestCreateManualServiceOrder(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /manual-services/order", "order_manual_service.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"service_id":"svc-wallet","product_id":"p-10","fields":{"account":"x@y.example"}}`)
	})
	got, err := env.client.CreateManualServiceOrder(t.Context(), &ManualServiceOrderRequest{
		ServiceID: "svc-wallet", ProductID: "p-10", Fields: map[string]string{"account": "x@y.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1004 || got.ChatRequired == nil || !*got.ChatRequired {
		t.Errorf("order = %+v", got)
	}
}

func TestCreateManualServiceOrder_nilFieldsSentAsObject(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /manual-services/order", "order_manual_service.json", func(t *testing.T, r *http.Request) {
		testJSONBody(t, r, `{"service_id":"svc-wallet","product_id":"p-10","fields":{}}`)
	})
	if _, err := env.client.CreateManualServiceOrder(t.Context(), &ManualServiceOrderRequest{ServiceID: "svc-wallet", ProductID: "p-10"}); err != nil {
		t.Fatal(err)
	}
}
