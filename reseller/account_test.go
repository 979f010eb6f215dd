package reseller

import (
	"net/http"
	"strings"
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

// The account fingerprint tells accounts (keys) and API hosts apart, is
// stable, and never contains the key.
func TestAccountFingerprint(t *testing.T) {
	fp := func(base, key string) string {
		c, err := New(base, key)
		if err != nil {
			t.Fatal(err)
		}
		return c.AccountFingerprint()
	}
	a := fp("https://api.example.com/api/v1", "key-aaaaaaaaaaaa")
	if a != fp("https://API.example.com/api/v1/", "key-aaaaaaaaaaaa") {
		t.Fatal("the same account and host gave two fingerprints")
	}
	if a == fp("https://api.example.com/api/v1", "key-bbbbbbbbbbbb") || a == fp("https://other.example.com/api/v1", "key-aaaaaaaaaaaa") {
		t.Fatal("another key or host gave the same fingerprint")
	}
	if len(a) != 24 || strings.Contains(a, "aaaa") {
		t.Fatalf("fingerprint %q", a)
	}
}
