package reseller

import (
	"github.com/shopspring/decimal"

	wiremoney "shopbot/reseller/internal/money"
)

// MoneyPlaces is the number of decimal places of a monetary amount on the
// wire: the API writes amounts as strings such as "12.5000".
const MoneyPlaces = wiremoney.Places

// Money is a monetary amount as the API writes it: a decimal string with 4
// places. It embeds decimal.Decimal, so arithmetic and comparison work
// directly (m.Add, m.Cmp, m.Decimal). It never holds a float.
//
// Decoding accepts a JSON string or a JSON number in plain decimal notation
// (no exponent) with at most 40 digits before and after the point; JSON null leaves the value
// unchanged. Encoding always writes a JSON string with at least 4 decimal
// places ("0.1500", "12.5000", "1000000.0000"); a value that carries more
// precision than 4 places is written in full rather than rounded, so money is
// never changed silently.
type Money = wiremoney.Money

// NewMoney returns d as a Money.
func NewMoney(d decimal.Decimal) Money { return Money{Decimal: d} }

// ParseMoney parses s, a plain decimal string such as "12.5000", "-3" or
// "0.15". Exponents, signs other than a leading '-', spaces and more than 40
// digits before or after the point are rejected.
func ParseMoney(s string) (Money, error) { return wiremoney.Parse(s) }
