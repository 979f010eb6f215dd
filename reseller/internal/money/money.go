package money

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/reseller/internal/check"
)

// Places is the number of decimal places of a monetary amount on the
// wire: the API writes amounts as strings such as "12.5000".
const Places = 4

// maxMoneyDigits bounds the integer and the fractional digits of an amount
// the decoder accepts, so a hostile or broken response cannot make the
// parser do unbounded work. Whatever parses, prints and parses again.
const maxMoneyDigits = 40

// Money is a monetary amount as the API writes it (reseller.Money documents
// it).
type Money struct {
	decimal.Decimal
}

// Parse parses s, a plain decimal string such as "12.5000", "-3" or
// "0.15". Exponents, signs other than a leading '-', spaces and more than 40
// digits before or after the point are rejected.
func Parse(s string) (Money, error) {
	if !plainDecimal(s) {
		return Money{}, fmt.Errorf("reseller: invalid amount %q: want a plain decimal such as 12.5000", check.Truncate(s, 32))
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Money{}, fmt.Errorf("reseller: invalid amount %q: %w", check.Truncate(s, 32), err)
	}
	return Money{Decimal: d}, nil
}

// plainDecimal reports whether s is -?digits(.digits)? with at most
// maxMoneyDigits digits on either side of the point.
func plainDecimal(s string) bool {
	s, _ = strings.CutPrefix(s, "-")
	intPart, frac, hasDot := strings.Cut(s, ".")
	return allDigits(intPart) && (!hasDot || allDigits(frac))
}

// allDigits reports whether s is 1 to maxMoneyDigits ASCII digits.
func allDigits(s string) bool {
	if s == "" || len(s) > maxMoneyDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String returns the amount with at least 4 decimal places, as on the wire.
func (m Money) String() string {
	places := int32(Places)
	if exp := m.Decimal.Exponent(); exp < -Places {
		if n := m.Decimal.Normalize().Exponent(); n < -Places {
			places = -n
		}
	}
	return m.Decimal.StringFixed(places)
}

// Format makes fmt print the 4-place form for %v and %s (and quoted for %q);
// other verbs are handled by decimal.Decimal.
func (m Money) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v', 's':
		fmt.Fprint(f, m.String())
	case 'q':
		fmt.Fprintf(f, "%q", m.String())
	default:
		m.Decimal.Format(f, verb)
	}
}

// MarshalJSON writes the amount as a JSON string with 4 decimal places.
func (m Money) MarshalJSON() ([]byte, error) {
	return json.Marshal(m.String())
}

// UnmarshalJSON reads a JSON string or number in plain decimal notation. JSON
// null leaves m unchanged.
func (m *Money) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	s := string(data)
	if len(data) > 0 && data[0] == '"' {
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("reseller: invalid amount: %w", err)
		}
	}
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MarshalText writes the amount with 4 decimal places.
func (m Money) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses a plain decimal string.
func (m *Money) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
