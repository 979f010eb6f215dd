package main

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestConfigWalletTopup(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	if !c.Topup.MinUSD.Equal(d("1")) || !c.Topup.MaxUSD.Equal(d("500")) || !c.Topup.MaxBalanceUSD.Equal(d("1000")) {
		t.Fatalf("defaults %+v", c.Topup)
	}
	c, err = LoadConfig(env(map[string]string{"WALLET_TOPUP_MIN_USD": "2.50", "WALLET_TOPUP_MAX_USD": "100", "WALLET_MAX_BALANCE_USD": "0"}), false)
	if err != nil || !c.Topup.MinUSD.Equal(d("2.5")) || !c.Topup.MaxUSD.Equal(d("100")) || !c.Topup.MaxBalanceUSD.IsZero() {
		t.Fatalf("%+v %v", c.Topup, err)
	}
	for _, tc := range []struct {
		over map[string]string
		want string
	}{
		{map[string]string{"WALLET_TOPUP_MIN_USD": "0"}, "WALLET_TOPUP_MIN_USD must be greater than 0"},
		{map[string]string{"WALLET_TOPUP_MIN_USD": "1.005"}, "WALLET_TOPUP_MIN_USD is 1.005; use at most 2 decimals"},
		{map[string]string{"WALLET_TOPUP_MAX_USD": "five"}, "WALLET_TOPUP_MAX_USD is \"five\""},
		{map[string]string{"WALLET_TOPUP_MIN_USD": "50", "WALLET_TOPUP_MAX_USD": "10"}, "WALLET_TOPUP_MAX_USD is 10, below WALLET_TOPUP_MIN_USD"},
		{map[string]string{"WALLET_MAX_BALANCE_USD": "-1"}, "WALLET_MAX_BALANCE_USD must not be negative"},
		{map[string]string{"WALLET_MAX_BALANCE_USD": "0.5"}, "WALLET_MAX_BALANCE_USD is 0.5, below WALLET_TOPUP_MIN_USD"},
	} {
		if _, err := LoadConfig(env(tc.over), false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.over, err, tc.want)
		}
	}
}
