package books_test

import (
	"testing"

	"shopbot/bot/bottest"
	"shopbot/locales"
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
	button        = bottest.Button
	hasButton     = bottest.HasButton
)

func en(key string, kv ...any) string { return locales.T(locales.En, key, kv...) }
