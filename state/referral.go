package state

import (
	"crypto/rand"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Attribution is the outcome of a /start through an invite link.
type Attribution int

// The outcomes of Attribute.
const (
	// Attributed: the buyer is new and now counts as the referrer's.
	Attributed Attribution = iota
	// UnknownCode: no buyer has that invite code.
	UnknownCode
	// SelfReferral: the code is the buyer's own.
	SelfReferral
	// AlreadyReferred: the buyer was attributed before (to anyone).
	AlreadyReferred
	// NotNew: the buyer had started the bot before this /start.
	NotNew
)

// codeAlphabet makes invite codes: lowercase letters and digits, so a
// code survives a deep link (A-Z, a-z, 0-9, _ and - allowed) and reads
// the same whatever the case.
const codeAlphabet = "abcdefghijkmnpqrstuvwxyz23456789"

// codeLen is the length of an invite code: 32^8 (about 10^12) codes.
const codeLen = 8

// ValidReferralCode reports whether s has the form of an invite code.
func ValidReferralCode(s string) bool {
	if len(s) != codeLen {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune(codeAlphabet, c) {
			return false
		}
	}
	return true
}

// NewReferralCode is a random invite code: codeLen characters of
// codeAlphabet.
func NewReferralCode() string {
	b := make([]byte, codeLen)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// Reward is the referral reward decided for one order.
type Reward struct {
	Order    int64
	Referrer int64
	USD      decimal.Decimal // zero: the order earned nothing (no margin)
	At       time.Time       // when it was decided
}

// Summary is what one referrer brought: buyers and rewards decided.
type Summary struct {
	Buyers int64
	Earned decimal.Decimal
}

// Activity is the program's activity since a time: when each referred
// buyer was attributed, and the rewards above zero decided.
type Activity struct {
	Joined  []time.Time
	Rewards []Reward
}
