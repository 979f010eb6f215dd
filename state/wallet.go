package state

import (
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// Wallet errors.
var (
	// ErrInsufficientFunds means a debit would take the balance below zero;
	// nothing was changed.
	ErrInsufficientFunds = errors.New("insufficient wallet funds")
	// ErrBadAmount means an amount is not a positive USD value with at most
	// two decimals (or is absurdly large).
	ErrBadAmount = errors.New("wallet amount must be positive with at most 2 decimals")
	// ErrRefReused means a ref already names a movement of a different amount
	// or direction; nothing was changed.
	ErrRefReused = errors.New("wallet ref already used for a different movement")
)

// MaxWalletAmount bounds one movement, so cents stay far inside the range
// Redis integers and Lua numbers hold exactly.
var MaxWalletAmount = decimal.NewFromInt(1_000_000_000)

// Entry is one ledger line: a credit (positive Amount) or a debit (negative).
type Entry struct {
	Ref     string          `json:"ref"`
	Amount  decimal.Decimal `json:"amount"`           // signed USD
	Balance decimal.Decimal `json:"balance,omitzero"` // balance after the movement
	Note    string          `json:"note,omitempty"`
	Actor   string          `json:"actor,omitempty"` // who moved the money: an admin id, "refund", ...; empty for the buyer's own debits
	At      time.Time       `json:"at"`
}

// StatementLine is a wallet movement as its owner reads it: when, how much
// (signed USD), what it was (Telegram HTML in their language) and the
// shop order it paid or refunded (0: none).
type StatementLine struct {
	At     time.Time
	Amount decimal.Decimal
	What   string
	Order  int64
}
