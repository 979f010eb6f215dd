package state

import (
	"time"

	"github.com/shopspring/decimal"
)

// CreditRecord is one admin wallet credit in the shop-wide audit list.
type CreditRecord struct {
	Admin  int64           `json:"admin"`  // the admin's Telegram user id
	User   int64           `json:"user"`   // the buyer whose wallet was credited
	Amount decimal.Decimal `json:"amount"` // USD
	Ref    string          `json:"ref"`    // the wallet ledger ref of the credit
	At     time.Time       `json:"at"`
}

// DefaultCreditAuditCap is how many credits the audit list keeps.
const DefaultCreditAuditCap = 1000
