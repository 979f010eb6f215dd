package main

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// TopupConfig bounds buyers' wallet top-ups in Stars (on whenever
// PAYMENT_METHODS includes wallet).
type TopupConfig struct {
	MinUSD        decimal.Decimal // WALLET_TOPUP_MIN_USD: the smallest top-up
	MaxUSD        decimal.Decimal // WALLET_TOPUP_MAX_USD: the largest top-up
	MaxBalanceUSD decimal.Decimal // WALLET_MAX_BALANCE_USD: the most a top-up may bring a wallet to; zero: no bound
}

// loadTopupConfig reads the wallet top-up settings into c.
func loadTopupConfig(get func(string) string, c *Config) error {
	var err error
	money := func(name, def string, positive bool) (decimal.Decimal, error) {
		d, err := decimalVar(get(name), def, positive)
		if err != nil {
			return d, &ConfigError{name, err.Error()}
		}
		if !d.Equal(d.Round(2)) {
			return d, &ConfigError{name, fmt.Sprintf("is %s; use at most 2 decimals (cents)", d)}
		}
		return d, nil
	}
	t := &c.Topup
	if t.MinUSD, err = money("WALLET_TOPUP_MIN_USD", "1", true); err != nil {
		return err
	}
	if t.MaxUSD, err = money("WALLET_TOPUP_MAX_USD", "500", true); err != nil {
		return err
	}
	if t.MaxUSD.LessThan(t.MinUSD) {
		return &ConfigError{"WALLET_TOPUP_MAX_USD", fmt.Sprintf("is %s, below WALLET_TOPUP_MIN_USD (%s)", t.MaxUSD, t.MinUSD)}
	}
	if t.MaxBalanceUSD, err = money("WALLET_MAX_BALANCE_USD", "1000", false); err != nil {
		return err
	}
	if t.MaxBalanceUSD.IsPositive() && t.MaxBalanceUSD.LessThan(t.MinUSD) {
		return &ConfigError{"WALLET_MAX_BALANCE_USD", fmt.Sprintf("is %s, below WALLET_TOPUP_MIN_USD (%s); 0 means no bound", t.MaxBalanceUSD, t.MinUSD)}
	}
	return nil
}
