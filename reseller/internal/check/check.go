package check

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// ValidationError is a request rejected locally before anything was sent
// (reseller.ValidationError documents it).
type ValidationError struct {
	// Field is the wire name of the invalid input.
	Field string
	// Reason says what is wrong with it.
	Reason string
	// Err is a sentinel the error wraps, if any (ErrImageRefused).
	Err error
}

// Unwrap returns Err.
func (e *ValidationError) Unwrap() error { return e.Err }

// Error names the field and the reason.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("reseller: invalid %s: %s", e.Field, e.Reason)
}

// Invalid returns a *ValidationError.
func Invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// PathID validates a string path parameter and escapes it.
func PathID(field, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", Invalid(field, "is required")
	}
	if id == "." || id == ".." {
		return "", Invalid(field, "must not be %q", id)
	}
	return url.PathEscape(id), nil
}

// Number validates a positive integer identifier.
func Number(field string, n int64) error {
	if n < 1 {
		return Invalid(field, "must be at least 1, got %d", n)
	}
	return nil
}

// Limit validates an optional limit (0 means the server default).
func Limit(limit, hi int) error {
	if limit != 0 && (limit < 1 || limit > hi) {
		return Invalid("limit", "must be between 1 and %d, got %d", hi, limit)
	}
	return nil
}

// Required validates a required string.
func Required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return Invalid(field, "is required")
	}
	return nil
}

// Fields validates a buyer-fields map: keys and values non-empty.
func Fields(fields map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		if strings.TrimSpace(k) == "" {
			return Invalid("fields", "has an empty key")
		}
		if strings.TrimSpace(v) == "" {
			return Invalid("fields."+k, "is empty")
		}
	}
	return nil
}

// Per-order quantity bounds of gift-card and game-key orders
// (reseller.MinOrderQuantity and MaxOrderQuantity).
const (
	MinOrderQuantity = 1
	MaxOrderQuantity = 100
)

// Quantity validates a gift-card or game-key order quantity.
func Quantity(q int) error {
	if q < MinOrderQuantity || q > MaxOrderQuantity {
		return Invalid("quantity", "must be between %d and %d, got %d", MinOrderQuantity, MaxOrderQuantity, q)
	}
	return nil
}

// OfferQuantity validates q against an offer's bounds and stock.
func OfferQuantity(q, lo, hi, stock int) error {
	if err := Quantity(q); err != nil {
		return err
	}
	if lo > 0 && q < lo {
		return Invalid("quantity", "must be at least %d for this offer, got %d", lo, q)
	}
	if hi > 0 && q > hi {
		return Invalid("quantity", "must be at most %d for this offer, got %d", hi, q)
	}
	if q > stock {
		return Invalid("quantity", "only %d in stock, got %d", max(stock, 0), q)
	}
	return nil
}

// Truncate shortens s to at most n bytes, cut at a character boundary,
// for use in error messages. (The client knows nothing of the shop's texts:
// buyer-facing text is clipped with locales.Clip.)
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
