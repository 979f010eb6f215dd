package admin_test

import (
	"testing"

	"shopbot/bot/bottest"
)

const (
	chat  = bottest.Chat
	admin = int64(9000)
)

// harness is the shop's test harness, with the helpers of this package's
// tests as its methods.
type harness struct{ *bottest.Harness }

func newHarness(t *testing.T) *harness { return &harness{bottest.New(t)} }

var (
	fakePace      = bottest.FakePace
	renderMessage = bottest.Render
)
