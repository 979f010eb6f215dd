package fulfil_test

import (
	"testing"
	"time"

	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/fulfil"
	"shopbot/state"
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

// keptJournal opens the journal in dir as a host that has kept it for a
// while has it: its clock runs two minutes behind, so an order paid now is
// within what it provably holds (state.Journal.Covers).
func keptJournal(t *testing.T, dir string) *state.Journal {
	t.Helper()
	j, err := state.OpenJournal(dir, fulfil.JournalKeep, func() time.Time { return time.Now().Add(-2 * time.Minute) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}
