package orderchat_test

import (
	"testing"

	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
)

// The order chat relay end to end: the whole shop (as storefront.New
// assembles it) with the upstream simulator, whose operators answer in the
// orders' chats.

const (
	chat  = bottest.Chat
	admin = bottest.Admin
)

// shop is the shop with its upstream (shoptest), with the helpers of this
// package's tests as its methods.
type shop struct{ *shoptest.Shop }

func newShop(t *testing.T) *shop { t.Helper(); return &shop{shoptest.New(t)} }

var (
	button        = bottest.Button
	fakePace      = bottest.FakePace
	renderMessage = bottest.Render
	giftCards     = shoptest.GiftCards
	en            = bottest.En
)
