package state

import (
	"errors"
	"time"

	"github.com/shopspring/decimal"
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
	// HasOrder says the charge had an order by the time its decided refund
	// went out: no refund was made, the order delivers or refunds it, and
	// the decision was closed as settled.
	HasOrder bool `json:"has_order,omitempty"`
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

// ListedCharge is a charge waiting for review with what /charges shows of
// it besides its listing (bot/books.Books.ChargesPage), for the chat and
// the admin console alike.
type ListedCharge struct {
	ChargeReview
	// Username is the buyer's @username as the shop last saw it ("":
	// none known).
	Username string
	// USD is the Stars' value at STARS_USD_RATE.
	USD decimal.Decimal
	// Line and ItemName are what the charge's quote named (its product
	// line and item), while the store still holds the quote ("": gone).
	Line, ItemName string
}

// ChargeSum is how many charges and their Stars, with the Stars' value in
// USD.
type ChargeSum struct {
	N, Stars int64
	USD      decimal.Decimal
}

// ChargesPage is a page of the charges waiting for review, oldest listing
// first, with the totals /balance shows: those waiting and those whose
// refund an admin decided and is not seen through yet.
type ChargesPage struct {
	Waiting, Refunding ChargeSum
	// Page is the page given (0 is the first), no further than the last;
	// Pages how many there are (at least 1).
	Page, Pages int
	Charges     []ListedCharge
}

// ChargeOutcome is what came of an admin's decision about a charge listed
// for review (bot/books.Books.ResolveCharge, which the chat's /charges and
// the admin console call).
type ChargeOutcome struct {
	// Review is the charge as it is after the call, with its resolution
	// (nil Resolution: nothing was resolved, see Order).
	Review *ChargeReview
	// Won says this decision is the one recorded; otherwise Review's
	// resolution is one made before.
	Won bool
	// Order is the charge's order, when it turned out to have one: it is
	// refunded from its order (/order N), not from the review list.
	Order int64
	// RefundErr is why a refund this decision won has not gone through
	// yet; it is retried.
	RefundErr error
}

// The words of an outcome (ChargeOutcome.Word).
const (
	ChargeOutcomeOrder           = "order"            // it has an order: nothing was refunded here
	ChargeOutcomeBefore          = "before"           // resolved before, by someone else or an earlier press
	ChargeOutcomeRefundLater     = "refund_later"     // the refund won but has not gone through yet
	ChargeOutcomeSettled         = "settled"          // settled now: no money moved
	ChargeOutcomeAlreadyRefunded = "already_refunded" // Telegram had it refunded: only recorded so
	ChargeOutcomeRefunded        = "refunded"         // refunded now, the buyer told
)

// Word says in one word what came of the decision (the ChargeOutcome*
// constants).
func (o *ChargeOutcome) Word() string {
	switch res := o.Review.Resolution; {
	case o.Order != 0:
		return ChargeOutcomeOrder
	case !o.Won:
		return ChargeOutcomeBefore
	case o.RefundErr != nil:
		return ChargeOutcomeRefundLater
	case res.Status == ChargeSettled:
		return ChargeOutcomeSettled
	case res.AlreadyRefunded:
		return ChargeOutcomeAlreadyRefunded
	}
	return ChargeOutcomeRefunded
}
