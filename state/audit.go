package state

import (
	"strconv"
	"time"
)

// Actor is who did an admin action and from where: a staff member's
// Telegram user id, their roles as the gate named them (flows.Roles'
// String: "owner", "support+accountant") and the view they acted in. The
// admin operations take it, so the chat and the console act through one
// code path and write one audit log.
type Actor struct {
	ID   int64  `json:"id"`
	Role string `json:"role"`
	Via  string `json:"via"` // ViaChat or ViaConsole
}

// Where an admin acted from.
const (
	ViaChat    = "chat"    // a command or button in the chat with the bot
	ViaConsole = "console" // the admin console of the Mini App
)

// Note is how the action is recorded in an order's history: "admin 42:
// refund" in the chat, "admin 42 (console): refund" from the console.
func (a Actor) Note(what string) string {
	who := "admin " + strconv.FormatInt(a.ID, 10)
	if a.Via != "" && a.Via != ViaChat {
		who += " (" + a.Via + ")"
	}
	return who + ": " + what
}

// AuditEntry is one admin action that changed something: who, when, what,
// on what, from where. It never holds a delivered code, a secret or a
// buyer's field value.
type AuditEntry struct {
	At     time.Time `json:"at"`
	Actor  Actor     `json:"actor"`
	Action string    `json:"action"`           // one of the Audit* actions
	Target string    `json:"target"`           // what it acted on: AuditOrder(12), AuditBuyer(5), "promo SPRING"
	Detail string    `json:"detail,omitempty"` // a short note: the amount, the status it left
}

// The audited actions.
const (
	AuditRefund        = "refund"         // an order sent to refunding
	AuditResend        = "resend"         // a delivered order sent to its buyer again
	AuditRun           = "run"            // a waiting order's job made due now
	AuditAdopt         = "adopt"          // an upstream order adopted by an order in review
	AuditPlaceAgain    = "retry"          // an order in review placed again
	AuditCredit        = "credit"         // a buyer's wallet credited
	AuditPromoAdd      = "promo.add"      // promo codes added or generated
	AuditPromoDisable  = "promo.disable"  // a promo code disabled
	AuditBroadcast     = "broadcast"      // a broadcast started
	AuditBroadcastStop = "broadcast.stop" // a broadcast stopped
	AuditTicketReply   = "ticket.reply"   // a support ticket answered
	AuditTicketClose   = "ticket.close"   // a support ticket closed by staff
	AuditChargeRefund  = "charge.refund"  // a Star charge listed for review refunded
	AuditChargeSettle  = "charge.settle"  // a Star charge listed for review settled with no money moved
)

// AuditOrder is the audit target of order id.
func AuditOrder(id int64) string { return "order " + strconv.FormatInt(id, 10) }

// AuditCharge is the audit target of a Star charge (its Telegram charge id).
func AuditCharge(id string) string { return "charge " + id }

// AuditBuyer is the audit target of a buyer (their wallet, their ticket).
func AuditBuyer(id int64) string { return "buyer " + strconv.FormatInt(id, 10) }

// DefaultAuditCap is how many entries the audit log keeps.
const DefaultAuditCap = 5000
