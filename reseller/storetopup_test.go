package reseller

import (
	"errors"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
)

func TestCheckStoreLogin(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /store-topup/check-login", "store_login_check.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"store_login":"gamer_42"}`)
	})
	got, err := env.client.CheckStoreLogin(t.Context(), "gamer_42")
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &StoreLoginCheck{Object: "store_login_check", StoreLogin: "gamer_42", CanRefill: true})
}

func TestCheckStoreLogin_retriedLikeARead(t *testing.T) {
	env := setup(t)
	calls := 0
	env.mux.HandleFunc("POST /store-topup/check-login", func(w http.ResponseWriter, r *http.Request) {
		if calls++; calls == 1 {
			writeJSON(w, http.StatusBadGateway, []byte(`{"error":{"type":"server_error","message":"upstream"}}`))
			return
		}
		writeJSON(w, http.StatusOK, fixture(t, "store_login_check.json"))
	})
	if _, err := env.client.CheckStoreLogin(t.Context(), "gamer_42"); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("requests = %d, want 2", calls)
	}
}

func TestCreateStoreTopupOrder(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /store-topup/order", "order_store_topup.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "POST")
		testJSONBody(t, r, `{"store_login":"gamer_42","currency":"RUB","amount":"1500"}`)
	})
	got, err := env.client.CreateStoreTopupOrder(t.Context(), &StoreTopupOrderRequest{
		StoreLogin: "gamer_42", Currency: RUB, Amount: decimal.RequireFromString("1500.00"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1001 || got.Amount.String() != "1500.0000" || got.Currency != RUB {
		t.Errorf("order = %+v", got)
	}
}

func TestCreateStoreTopupOrder_defaultCurrency(t *testing.T) {
	env := setup(t)
	env.serveFixture("POST /store-topup/order", "order_store_topup.json", func(t *testing.T, r *http.Request) {
		testJSONBody(t, r, `{"store_login":"gamer_42","currency":"USD","amount":"12.5"}`)
	})
	_, err := env.client.CreateStoreTopupOrder(t.Context(), &StoreTopupOrderRequest{
		StoreLogin: "gamer_42", Amount: decimal.RequireFromString("12.50"),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStoreRates(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /store-topup/rates", "store_rates.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
	})
	got, err := env.client.StoreRates(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &StoreRates{
		Object: "store_rates",
		Base:   "USD",
		Rates: map[Currency]decimal.Decimal{
			USD: decimal.RequireFromString("1"), RUB: decimal.RequireFromString("91.9512"),
			UAH: decimal.RequireFromString("39.5"), KZT: decimal.RequireFromString("447.123456789"),
			"EUR": decimal.RequireFromString("0.92"),
		},
		MinTopupUSD: money("0.1500"),
		UpdatedAt:   ts("2024-05-01T09:00:00Z"),
	})
	// Numbers are decoded exactly, digit for digit.
	if s := got.Rates[KZT].String(); s != "447.123456789" {
		t.Errorf("KZT rate = %s", s)
	}
}

func TestMinTopupIn(t *testing.T) {
	rates := decodeFixture[StoreRates](t, "store_rates.json")
	for _, tt := range []struct {
		cur  Currency
		want string
	}{
		{USD, "0.15"},
		{RUB, "13.80"}, // 0.15 * 91.9512 = 13.79268 -> rounded up
		{UAH, "5.93"},  // 5.925
		{KZT, "67.07"}, // 67.0685...
	} {
		got, err := MinTopupIn(rates, tt.cur)
		if err != nil {
			t.Fatalf("%s: %v", tt.cur, err)
		}
		if !got.Equal(decimal.RequireFromString(tt.want)) {
			t.Errorf("MinTopupIn(%s) = %s, want %s", tt.cur, got, tt.want)
		}
	}
	if got, err := MinTopupIn(nil, USD); err != nil || got.String() != "0.15" {
		t.Errorf("MinTopupIn(nil, USD) = %s, %v", got, err)
	}
	var ve *ValidationError
	if _, err := MinTopupIn(rates, "EUR"); !errors.As(err, &ve) || ve.Field != "currency" {
		t.Errorf("MinTopupIn(EUR) err = %v", err)
	}
	if _, err := MinTopupIn(&StoreRates{}, RUB); err == nil {
		t.Error("MinTopupIn without a RUB rate should fail")
	}
}
