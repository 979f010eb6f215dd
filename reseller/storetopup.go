package reseller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/reseller/internal/check"
)

// Currency is a store top-up currency.
type Currency string

// Store top-up currencies.
const (
	USD Currency = "USD"
	RUB Currency = "RUB"
	UAH Currency = "UAH"
	KZT Currency = "KZT"
)

// Valid reports whether c is one of USD, RUB, UAH and KZT.
func (c Currency) Valid() bool {
	switch c {
	case USD, RUB, UAH, KZT:
		return true
	}
	return false
}

// minStoreTopupUSD is the documented minimum store top-up, 0.15 USD.
var minStoreTopupUSD = decimal.New(15, -2)

// StoreLoginCheck says whether a store account can be topped up (object
// "store_login_check").
type StoreLoginCheck struct {
	// Object is "store_login_check".
	Object string `json:"object"`
	// StoreLogin is the login checked.
	StoreLogin string `json:"store_login"`
	// CanRefill says whether the account can receive a top-up.
	CanRefill bool `json:"can_refill"`
}

// StoreRates are the store top-up exchange rates (object "store_rates").
type StoreRates struct {
	// Object is "store_rates".
	Object string `json:"object"`
	// Base is the base currency, "USD".
	Base string `json:"base"`
	// Rates maps each currency to the amount of it one USD buys. The API
	// sends JSON numbers; they are decoded exactly, never through a float.
	Rates map[Currency]decimal.Decimal `json:"rates"`
	// MinTopupUSD is the minimum top-up in USD.
	MinTopupUSD Money `json:"min_topup_usd"`
	// UpdatedAt is when the rates were updated.
	UpdatedAt time.Time `json:"updated_at"`
}

// MinTopupIn returns the minimum store top-up in currency: min_topup_usd
// (0.15 USD when rates carry none) times the currency's rate, rounded up to
// 2 decimal places. rates may be nil for USD.
func MinTopupIn(rates *StoreRates, currency Currency) (decimal.Decimal, error) {
	if !currency.Valid() {
		return decimal.Decimal{}, invalid("currency", "must be USD, RUB, UAH or KZT, got %q", currency)
	}
	minUSD := minStoreTopupUSD
	if rates != nil && rates.MinTopupUSD.IsPositive() {
		minUSD = rates.MinTopupUSD.Decimal
	}
	if currency == USD {
		return minUSD.RoundCeil(2), nil
	}
	if rates == nil {
		return decimal.Decimal{}, fmt.Errorf("reseller: no store rates to convert the minimum top-up to %s", currency)
	}
	rate, ok := rates.Rates[currency]
	if !ok || !rate.IsPositive() {
		return decimal.Decimal{}, fmt.Errorf("reseller: store rates carry no positive rate for %s", currency)
	}
	return minUSD.Mul(rate).RoundCeil(2), nil
}

// StoreTopupOrderRequest is the body of POST /store-topup/order.
type StoreTopupOrderRequest struct {
	// StoreLogin is the store account to top up (required).
	StoreLogin string
	// Currency is USD, RUB, UAH or KZT; "" means USD. It is always sent.
	Currency Currency
	// Amount is in Currency: positive, at most 2 decimal places and at
	// least 0.15 for USD. For other currencies check the minimum with
	// MinTopupIn before ordering. Sent as a plain decimal string ("12.5").
	Amount decimal.Decimal
}

// currency returns the effective currency.
func (r *StoreTopupOrderRequest) currency() Currency {
	if r.Currency == "" {
		return USD
	}
	return r.Currency
}

// Validate checks the request locally.
func (r *StoreTopupOrderRequest) Validate() error {
	if r == nil {
		return invalid("request", "is nil")
	}
	if err := check.Required("store_login", r.StoreLogin); err != nil {
		return err
	}
	cur := r.currency()
	if !cur.Valid() {
		return invalid("currency", "must be USD, RUB, UAH or KZT, got %q", r.Currency)
	}
	if !r.Amount.IsPositive() {
		return invalid("amount", "must be positive, got %s", r.Amount.String())
	}
	if cur == USD {
		if !r.Amount.Equal(r.Amount.Truncate(2)) {
			return invalid("amount", "USD allows at most 2 decimal places, got %s", r.Amount.String())
		}
		if r.Amount.LessThan(minStoreTopupUSD) {
			return invalid("amount", "minimum top-up is 0.15 USD, got %s", r.Amount.String())
		}
	}
	return nil
}

// MarshalJSON writes the wire form: {"store_login","currency","amount"}.
func (r StoreTopupOrderRequest) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		StoreLogin string   `json:"store_login"`
		Currency   Currency `json:"currency"`
		Amount     string   `json:"amount"`
	}{r.StoreLogin, r.currency(), plainAmount(r.Amount)})
}

// plainAmount writes d in plain notation with no trailing zeros ("12.5",
// "100"), independent of the decimal package's global settings.
func plainAmount(d decimal.Decimal) string {
	n := d.Normalize()
	return n.StringFixed(max(0, -n.Exponent()))
}

// CheckStoreLogin checks whether a store account can be topped up: POST
// /store-topup/check-login. It changes nothing upstream and is retried like
// a read.
func (c *Client) CheckStoreLogin(ctx context.Context, storeLogin string) (*StoreLoginCheck, error) {
	if err := check.Required("store_login", storeLogin); err != nil {
		return nil, err
	}
	in := struct {
		StoreLogin string `json:"store_login"`
	}{storeLogin}
	return postJSON[StoreLoginCheck](ctx, c, "POST /store-topup/check-login", "/store-topup/check-login", policySafe, in)
}

// CreateStoreTopupOrder tops up a store wallet and charges the balance: POST
// /store-topup/order. See Client for the retry rules of order creation and
// *OutcomeUnknownError.
func (c *Client) CreateStoreTopupOrder(ctx context.Context, req *StoreTopupOrderRequest) (*Order, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.createOrder(ctx, "POST /store-topup/order", "/store-topup/order", req)
}

// StoreRates returns the store top-up exchange rates: GET /store-topup/rates.
func (c *Client) StoreRates(ctx context.Context) (*StoreRates, error) {
	return getJSON[StoreRates](ctx, c, "GET /store-topup/rates", "/store-topup/rates", nil)
}
