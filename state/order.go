package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// Order statuses (docs/design.md, "The order lifecycle"): paid -> placing
// -> placed -> delivered, with the side exits refunding -> refunded and
// needs_review. Delivered and refunded are terminal.
const (
	OrderPaid        = "paid"
	OrderPlacing     = "placing"
	OrderPlaced      = "placed"
	OrderDelivered   = "delivered"
	OrderRefunding   = "refunding"
	OrderRefunded    = "refunded"
	OrderNeedsReview = "needs_review"
)

// Payment methods an order can be paid with.
const (
	PayStars  = "stars"
	PayWallet = "wallet"
)

// orderMoves is the table of legal transitions. A status moving to itself is
// an update of the order's fields without a change of state: a new placing
// attempt, a tracking poll, a refund retry, or (for the terminal statuses)
// the buyer-notification bookkeeping.
var orderMoves = map[string][]string{
	OrderPaid:        {OrderPlacing, OrderRefunding, OrderNeedsReview},
	OrderPlacing:     {OrderPlacing, OrderPlaced, OrderRefunding, OrderNeedsReview},
	OrderPlaced:      {OrderPlaced, OrderDelivered, OrderRefunding, OrderNeedsReview},
	OrderNeedsReview: {OrderNeedsReview, OrderPlacing, OrderPlaced, OrderRefunding},
	OrderRefunding:   {OrderRefunding, OrderRefunded, OrderNeedsReview},
	OrderDelivered:   {OrderDelivered},
	OrderRefunded:    {OrderRefunded},
}

// CanMove reports whether an order may go from status from to status to.
func CanMove(from, to string) bool { return slices.Contains(orderMoves[from], to) }

// Terminal reports whether status is final: the order is done and leaves the
// unfinished index.
func Terminal(status string) bool { return status == OrderDelivered || status == OrderRefunded }

// Errors of orders, returned by the order store (records.Orders).
var (
	// ErrOrderNotFound means there is no order under that id, charge,
	// quote or upstream number.
	ErrOrderNotFound = errors.New("order not found")
	// ErrQuoteAlreadyPaid means the quote already has an order paid by a
	// different charge; the new charge must be refunded.
	ErrQuoteAlreadyPaid = errors.New("quote already paid by another charge")
	// ErrBadTransition means the order's current status is not one the
	// caller expected (another worker moved it first); nothing was saved.
	ErrBadTransition = errors.New("order is not in the expected status")
	// ErrIllegalTransition means the requested move is not in the lifecycle
	// table at all; it is a programming error and nothing was saved.
	ErrIllegalTransition = errors.New("illegal order transition")
	// ErrOrderConflict means the order kept changing under a transition
	// after several re-reads; nothing was saved.
	ErrOrderConflict = errors.New("order revision conflict")
	// ErrUpstreamClaimed means the upstream order number is already the
	// upstream order of another of our orders.
	ErrUpstreamClaimed = errors.New("upstream order already claimed by another order")
)

// TransitionError says why a transition was refused. It matches
// ErrBadTransition or ErrIllegalTransition with errors.Is.
type TransitionError struct {
	ID     int64
	Status string // the order's status when refused (empty for an illegal request)
	To     string
	Err    error // ErrBadTransition or ErrIllegalTransition
}

// Error describes the refused transition.
func (e *TransitionError) Error() string {
	if e.Status == "" {
		return fmt.Sprintf("order %d -> %s: %v", e.ID, e.To, e.Err)
	}
	return fmt.Sprintf("order %d %s -> %s: %v", e.ID, e.Status, e.To, e.Err)
}

// Unwrap returns ErrBadTransition or ErrIllegalTransition.
func (e *TransitionError) Unwrap() error { return e.Err }

// Transition is one step in an order's history.
type Transition struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

// Order is our order: what the buyer paid for, how, and how far it got.
// Money is decimal (a JSON string), never float.
type Order struct {
	// V is the version of the document (OrderVersion when written by this
	// build; 0 before versions): a newer one is left to a newer build.
	V         int             `json:"v,omitempty"`
	ID        int64           `json:"id,omitempty"` // our number, from INCR
	QuoteID   string          `json:"quote_id,omitempty"`
	ChatID    int64           `json:"chat_id"`
	UserID    int64           `json:"user_id"`
	Lang      string          `json:"lang,omitempty"`
	Line      string          `json:"line"`              // product line name
	Item      json.RawMessage `json:"item,omitempty"`    // what was ordered, line-specific
	Request   json.RawMessage `json:"request,omitempty"` // the exact upstream create request
	Signature string          `json:"signature,omitempty"`

	UpstreamUSD decimal.Decimal `json:"upstream_usd"`
	ShopUSD     decimal.Decimal `json:"shop_usd"`
	Stars       int64           `json:"stars,omitempty"`
	PayMethod   string          `json:"pay_method"` // PayStars or PayWallet
	ChargeID    string          `json:"charge_id"`  // Telegram charge id, or the wallet ledger ref
	// PaidAt is when the buyer paid, by the payment's own date (Telegram's
	// for Stars, the start of the wallet payment), not when this record was
	// made: a store restored from a backup makes a lost order again, long
	// after its payment. Zero when unknown.
	PaidAt time.Time `json:"paid_at,omitzero"`
	// PromoCode is the promo code whose use the order consumed (given
	// back if it is refunded); DiscountUSD what it took off ShopUSD.
	PromoCode   string          `json:"promo,omitempty"`
	DiscountUSD decimal.Decimal `json:"discount_usd,omitzero"`

	Status    string    `json:"status"`
	AttemptID string    `json:"attempt_id,omitempty"`
	PlacingAt time.Time `json:"placing_at,omitzero"`
	Attempts  int       `json:"attempts,omitempty"`
	// Watermark is the newest upstream order number the shop had seen when
	// the order was paid: every upstream order this order could have
	// created has a higher number, so a Redis that lost the order's later
	// writes still knows where to look (see Orders.NoteUpstream).
	Watermark int64 `json:"watermark,omitempty"`
	// AttemptWatermark is the newest upstream number of the order's type
	// read, while holding Slot, just before its first create: after an
	// uncertain create only orders above it are considered. Later attempts
	// keep it, so any of their creates is found.
	AttemptWatermark int64 `json:"attempt_watermark,omitempty"`
	// Slot is the placement slot the order holds while a create of its
	// kind is in flight or uncertain (see Orders.AcquireSlot).
	Slot string `json:"slot,omitempty"`
	// UncertainAt is when the answer of an uncertain create arrived: the
	// grace before placing again counts from it.
	UncertainAt time.Time `json:"uncertain_at,omitzero"`
	// AttemptDeadline is when the attempt's create is over for sure: the
	// worker sends it only while it holds the job's lease and before a
	// lease from the intent ran out, and cuts it this long after. Set with
	// the intent, moved to when the answer came. Another worker that takes
	// the order over treats the create as in flight until then, and places
	// again only a grace after it.
	AttemptDeadline time.Time `json:"attempt_deadline,omitzero"`
	// AttemptFence is the generation of the job lease the attempt was
	// sent under (jobs.Lease.Gen): a later holder's is higher.
	AttemptFence int64 `json:"attempt_fence,omitempty"`
	// UncertainAnswered says the uncertain answer was a 5xx response (the
	// server had finished with the request), not a timeout or a cut.
	UncertainAnswered bool  `json:"uncertain_answered,omitempty"`
	UpstreamNumber    int64 `json:"upstream_number,omitempty"`
	// ClaimedAt is when UpstreamNumber was stored. Codes are handed over
	// only once the claim is older than the writes a Redis crash can lose.
	ClaimedAt      time.Time       `json:"claimed_at,omitzero"`
	UpstreamStatus string          `json:"upstream_status,omitempty"`
	ChargedUSD     decimal.Decimal `json:"charged_usd,omitzero"`
	Codes          []string        `json:"codes,omitempty"` // delivered codes or keys
	Reason         string          `json:"reason,omitempty"`
	RefundRef      string          `json:"refund_ref,omitempty"`
	// RefundSeen is when Telegram's transaction list showed the order's
	// charge refunded while a create of the order was in doubt (a store
	// that lost writes took the refund): the order is never placed again,
	// and one whose create did go through waits for an admin.
	RefundSeen time.Time `json:"refund_seen,omitzero"`

	DeliveredAt    time.Time `json:"delivered_at,omitzero"` // when the result reached the buyer
	NotifiedStatus string    `json:"notified_status,omitempty"`
	Shrunk         bool      `json:"shrunk,omitempty"` // codes and request dropped by retention

	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
	Rev       int64        `json:"rev"`
	History   []Transition `json:"history,omitempty"`
}

// OrderStatuses are every status an order can be in.
var OrderStatuses = []string{OrderPaid, OrderPlacing, OrderPlaced, OrderDelivered, OrderRefunding, OrderRefunded, OrderNeedsReview}

// Readable returns nil when this build may act on the order, and
// ErrRecordTooNew when a newer build wrote it: a newer version of the
// document, or a status this build does not know. Such an order is shown
// as it is but never moved or rewritten here (the store refuses to save
// it), so a field or status this build does not know is never lost.
func (o *Order) Readable() error {
	if err := TooNew(fmt.Sprintf("order %d", o.ID), o.V, OrderVersion); err != nil {
		return err
	}
	if !slices.Contains(OrderStatuses, o.Status) {
		return fmt.Errorf("order %d: status %q unknown to this build: %w", o.ID, o.Status, ErrRecordTooNew)
	}
	return nil
}

// OrderStats are the store-wide counts the metrics show: orders by status,
// upstream orders reported as nobody's (orphans) and those disputed by an
// order in review.
type OrderStats struct {
	ByStatus map[string]int64
	Orphans  int64
	Disputed int64
}

// OrderFilter narrows an admin listing; empty fields match everything.
type OrderFilter struct {
	Status string
	Line   string
}
