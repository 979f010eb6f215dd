package state

import (
	"errors"
	"time"
)

// ChargeReview is a Star charge the payment sweep found without an order
// and could not prove undelivered, so it refunded nothing and listed it for
// an admin instead.
type ChargeReview struct {
	ChargeID string    `json:"charge_id"`
	UserID   int64     `json:"user_id"`
	Stars    int64     `json:"stars"`
	Payload  string    `json:"payload"`
	PaidAt   time.Time `json:"paid_at"`   // the charge's date in Telegram's transaction list
	Reason   string    `json:"reason"`    // why it was not settled automatically (ReviewBeforeStore, ...)
	ListedAt time.Time `json:"listed_at"` // when it was first listed
}

// Reasons a charge is listed for review.
const (
	// ReviewBeforeStore: the charge is older than the store (StoreEpoch); its
	// order may have lived, and been delivered, in a store that is gone.
	ReviewBeforeStore = "before-store"
	// ReviewQuoteGone: the charge's quote is not stored and nothing proves
	// that no order was bought with it.
	ReviewQuoteGone = "quote-gone"
)

// ErrNoChargeReview means the charge is not on the review list.
var ErrNoChargeReview = errors.New("charge not listed for review")
