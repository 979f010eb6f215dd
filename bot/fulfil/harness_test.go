package fulfil_test

import (
	"testing"

	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
)

// The fulfilment worker end to end: the whole shop (as storefront.New
// assembles it) with the upstream simulator, orders created as payments
// would.

const (
	chat  = bottest.Chat
	admin = bottest.Admin
)

// shop is the shop with its upstream (shoptest), with the helpers of this
// package's tests as its methods.
type shop struct{ *shoptest.Shop }

func newShop(t *testing.T) *shop { t.Helper(); return &shop{shoptest.New(t)} }

var (
	giftCards  = shoptest.GiftCards
	topUp      = shoptest.TopUp
	crashAt    = shoptest.CrashAt
	waitClosed = shoptest.WaitClosed
	button     = bottest.Button
)
