package books_test

import (
	"testing"

	"shopbot/bot/bottest"
)

const (
	chat  = bottest.Chat
	admin = bottest.Admin
)

// harness is the shop's test harness (bottest), with the helpers of this
// package's tests as its methods.
type harness struct{ *bottest.Harness }

func newHarness(t *testing.T) *harness { return &harness{bottest.New(t)} }
