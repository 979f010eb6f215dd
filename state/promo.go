package state

import (
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Promo is a promo code: what it takes off an order and when it applies.
// A use of it goes through three states, each kept per quote so that every
// step is idempotent: held (reserved at the pre-checkout or just before a
// wallet debit, until a deadline), used (consumed in the step that pays
// the order) and returned (its order was refunded). A hold that is not
// paid is released, or lapses at its deadline.
type Promo struct {
	Code      string          `json:"code"`
	Percent   decimal.Decimal `json:"percent,omitzero"` // off the order's price
	OffUSD    decimal.Decimal `json:"off_usd,omitzero"` // fixed USD off the order
	Lines     []string        `json:"lines,omitempty"`  // product lines it applies to; none: all
	MinUSD    decimal.Decimal `json:"min_usd,omitzero"` // smallest order price it applies to
	MaxUses   int             `json:"max_uses,omitempty"`
	PerBuyer  bool            `json:"per_buyer,omitempty"`  // one use per buyer
	Expires   time.Time       `json:"expires,omitzero"`     // zero: never
	BelowCost bool            `json:"below_cost,omitempty"` // may take the price below the upstream cost
	Batch     string          `json:"batch,omitempty"`      // the bulk generation it came from
	Created   time.Time       `json:"created"`

	// Read from the store's counters, not part of the definition.
	Disabled bool `json:"-"`
	Used     int  `json:"-"` // consumed uses (returned ones excluded)
	Held     int  `json:"-"` // live reservations
}

// Errors of the promo store. Every reason a buyer cannot use a code wraps
// ErrPromoUnavailable.
var (
	ErrPromoUnavailable = errors.New("promo code unavailable")
	ErrPromoUnknown     = fmt.Errorf("%w: unknown", ErrPromoUnavailable)
	ErrPromoDisabled    = fmt.Errorf("%w: disabled", ErrPromoUnavailable)
	ErrPromoExpired     = fmt.Errorf("%w: expired", ErrPromoUnavailable)
	ErrPromoUsedUp      = fmt.Errorf("%w: used up", ErrPromoUnavailable)
	ErrPromoUsedByBuyer = fmt.Errorf("%w: already used by this buyer", ErrPromoUnavailable)
	ErrPromoExists      = errors.New("promo code exists")
)

var promoCodeRE = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_-]{2,31}$`)

// NormalizePromoCode is the stored form of a code a person typed
// (upper case, trimmed), and whether it is a possible code at all.
func NormalizePromoCode(s string) (string, bool) {
	c := strings.ToUpper(strings.TrimSpace(s))
	return c, promoCodeRE.MatchString(c)
}

// NewPromoCode draws a random code of n characters after prefix (no
// look-alike characters).
func NewPromoCode(prefix string, n int) string {
	const digits = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return prefix + string(b)
}
