package state

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// WalletTopup is a buyer's request to add USD to their own shop wallet by
// paying a Stars invoice (payload "w:<id>"). It is written once and never
// changed, but for PaidBy: the charge that credited it.
type WalletTopup struct {
	// V is the version of the record (TopupVersion when written by this
	// build; 0 before versions). A charge of a newer one is settled only by
	// a build that reads it: never credited or refunded by an older one.
	V       int
	ID      string
	UserID  int64
	ChatID  int64
	USD     decimal.Decimal // what the wallet is credited
	Stars   int64           // what the invoice charges
	Lang    string          // the buyer's language when they asked
	Created time.Time
	Expires time.Time // the invoice may be paid until then
	PaidBy  string    // the charge that credited it, "" while unpaid
}

// Expired reports whether the top-up may no longer be paid at now.
func (t *WalletTopup) Expired(now time.Time) bool { return !now.Before(t.Expires) }

// ErrNoTopup is returned for a top-up that does not exist (never made,
// not this buyer's id, or dropped after it expired: see TopupUnpaidKeep).
var ErrNoTopup = errors.New("no such wallet top-up")

// TopupUnpaidKeep is how long an unpaid top-up record stays after its
// invoice expires: well past the grace a payment still counts within (2
// minutes, bot/checkout) and several runs of the Stars sweep (every 10
// minutes), so a payment made in time whose update was lost is still
// credited. A payment that comes later finds no record and is refunded
// (TopupRefundGone), so nothing paid is lost, and a buyer who asks for
// invoices without paying them holds at most an hour and a quarter of
// them in Redis.
const TopupUnpaidKeep = time.Hour

// TopupKeep is how long a paid top-up record stays: longer than the Stars
// sweep reads back (30 days), so a second charge of it is known as one
// (TopupRefundTwice) whenever the sweep finds it.
const TopupKeep = 35 * 24 * time.Hour

// TopupRef is the wallet ledger ref of the credit of Star charge id.
func TopupRef(chargeID string) string { return "topup:" + chargeID }

// TopupUser returns the buyer a top-up id belongs to.
func TopupUser(id string) (int64, bool) {
	u, rest, ok := strings.Cut(id, "-")
	if !ok || rest == "" || len(id) > 64 {
		return 0, false
	}
	n, err := strconv.ParseInt(u, 10, 64)
	return n, err == nil && n > 0
}

// TopupCharge is a Star payment for a top-up, from the update or the sweep.
type TopupCharge struct {
	ChargeID string
	Payer    int64     // who paid (the wallet credited is theirs)
	TopupID  string    // from the payload
	Stars    int64     // what was paid
	PaidAt   time.Time // when Telegram says it was paid
}

// TopupRules are what a payment must meet to be credited.
type TopupRules struct {
	WalletOn   bool            // the shop wallet is on
	MaxBalance decimal.Decimal // the balance may not pass it; zero: no bound
	// Grace is how long after its record expired a payment still counts
	// (the pre-checkout answered before the expiry, the payment came
	// moments later; our clock and Telegram's may differ).
	Grace time.Duration
}

// Refund reasons of a top-up charge that cannot be credited.
const (
	TopupRefundWalletOff = "wallet_off" // wallet payments were turned off
	TopupRefundGone      = "gone"       // no such top-up (unknown, another buyer's, or dropped)
	TopupRefundAmount    = "amount"     // the payment is not the top-up's price
	TopupRefundExpired   = "expired"    // paid after the top-up expired
	TopupRefundTwice     = "twice"      // the top-up was credited by another charge
	TopupRefundLimit     = "limit"      // the balance would pass the maximum
)

// TopupOutcome is what SettleTopup decided about a charge.
type TopupOutcome struct {
	// Credited: the wallet holds the credit of this charge (Fresh: made
	// by this call; otherwise before).
	Credited, Fresh bool
	// Refund is the reason the charge is to be refunded ("" when credited).
	Refund  string
	Balance decimal.Decimal // the balance after the credit (when credited)
	Topup   *WalletTopup    // the record, when it exists
}

// PaidTopup is one credited top-up of the index.
type PaidTopup struct {
	ChargeID string
	UserID   int64
	USD      decimal.Decimal
	Stars    int64
	PaidAt   time.Time
}
