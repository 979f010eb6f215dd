package state

import (
	"errors"
	"strings"
	"time"
	"unicode"
)

// Review is a buyer's rating of a delivered order, one per order: its
// stars (1-5), an optional short text, and whether the staff hid it.
// Product is the deep link of what was bought (flows.ProductLink), under
// which the reviews of one product are kept together.
type Review struct {
	Order   string    // the order's Ref
	User    int64     // the buyer
	Product string    // the product's deep link
	Stars   int       // 1 to 5
	Text    string    // "" when none; never longer than MaxReviewText runes
	At      time.Time // when it was rated
	Hidden  bool      // hidden by the staff: shown to nobody but them
}

// MaxReviewText is how long a review's text may be, in characters.
const MaxReviewText = 500

// Errors of reviews.
var (
	// ErrReviewNotFound means the order has no review.
	ErrReviewNotFound = errors.New("review not found")
	// ErrReviewNotYours means someone else than the order's buyer tried
	// to change its review.
	ErrReviewNotYours = errors.New("not the reviewer")
)

// ValidStars reports whether n is a rating (1 to 5).
func ValidStars(n int) bool { return n >= 1 && n <= 5 }

// CleanReviewText is the text a buyer typed as it is kept: control
// characters dropped, blank runs folded into one space, trimmed; ok is
// false when nothing is left or it is longer than MaxReviewText.
func CleanReviewText(s string) (string, bool) {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.IsControl(r) || r == '\u200b' || r == '\ufeff':
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	n := len([]rune(out))
	return out, n > 0 && n <= MaxReviewText
}

// ReviewSummary is what a product's screen shows of its reviews: how many
// buyers rated it (hidden reviews not counted), the sum of their stars,
// and the latest visible reviews with a text, newest first.
type ReviewSummary struct {
	Count  int
	Stars  int
	Recent []Review
}
