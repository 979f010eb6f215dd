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
	// Resolution is what an admin decided (nil: waiting for review). It
	// is kept apart from the listing, which is written once, and filled
	// in when the review is read.
	Resolution *ChargeResolution `json:"-"`
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

// ChargeResolution is an admin's decision about a charge listed for review
// (books' /charges), kept beside its review: who decided, how and when. A
// refund is decided first (ChargeRefunding), so only one decision wins,
// and finished once the refund went through (ChargeRefunded); a charge
// settled otherwise (delivered, or handled outside the shop) moves no
// money (ChargeSettled).
type ChargeResolution struct {
	Status string    `json:"status"` // ChargeRefunding, ChargeRefunded or ChargeSettled
	By     Actor     `json:"by"`
	At     time.Time `json:"at"`               // when the admin decided
	DoneAt time.Time `json:"done_at,omitzero"` // when the refund went through
	// AlreadyRefunded says Telegram listed the charge as refunded before
	// the shop refunded it: it was resolved with no refund call and the
	// buyer was not told again.
	AlreadyRefunded bool `json:"already_refunded,omitempty"`
}

// The statuses of a resolution.
const (
	// ChargeRefunding: an admin decided to refund the charge and the
	// refund has not been seen through yet (a retry finishes it).
	ChargeRefunding = "refunding"
	// ChargeRefunded: the charge was given back (or Telegram had it so).
	ChargeRefunded = "refunded"
	// ChargeSettled: an admin said the charge was delivered or handled
	// elsewhere; no money moved.
	ChargeSettled = "settled"
)

// Resolved reports whether the charge is off the waiting list (decided,
// even if its refund is still under way).
func (c *ChargeReview) Resolved() bool { return c.Resolution != nil }

// ErrChargeHasOrder means a charge listed for review has an order by now:
// it is refunded from its order (/order N), not from the review list.
var ErrChargeHasOrder = errors.New("the charge has an order")
