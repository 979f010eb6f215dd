package reseller

import (
	"net/http"
	"testing"
)

func TestMe(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /me", "account.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, nil)
		testNoBody(t, r)
	})
	got, err := env.client.Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &Account{
		Object:        "account",
		Nickname:      "acme",
		Email:         "ops@acme.example",
		Status:        AccountActive,
		BalanceUSD:    money("1250.7500"),
		TotalOrders:   4821,
		TotalSpentUSD: money("1000000.0000"),
		CreatedAt:     ts("2023-11-02T08:15:30Z"),
		Raw:           fixture(t, "account.json"),
	})
	if got.TotalSpentUSD.String() != "1000000.0000" {
		t.Errorf("TotalSpentUSD = %s", got.TotalSpentUSD)
	}
}
