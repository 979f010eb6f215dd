package books_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/flows/golden"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// /balance with the upstream simulator: two paid orders held in
// processing upstream, one paid in Stars and one from a wallet.
func TestBalanceReport(t *testing.T) {
	s := shoptest.New(t)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	b := s.Worker(nil)
	bottest.FakePace(b.API)
	s.Run(b)
	stars := s.Paid(shoptest.GiftCards(1), state.PayStars)   // 962 Stars
	wallet := s.Paid(shoptest.GiftCards(2), state.PayWallet) // $12.50
	o1, o2 := s.WaitStatus(stars.ID, state.OrderPlaced), s.WaitStatus(wallet.ID, state.OrderPlaced)
	// Upstream: 1,000 at the start, minus the 1 + 2 cards at 10.35 each.
	if !s.Sim.Balance().Equal(decimal.RequireFromString("968.95")) || !o1.ChargedUSD.Add(o2.ChargedUSD).Equal(decimal.RequireFromString("31.05")) {
		t.Fatalf("upstream balance %s, charged %s + %s", s.Sim.Balance(), o1.ChargedUSD, o2.ChargedUSD)
	}
	if s.Fake.StarBalance() != 962 {
		t.Fatalf("star balance %d", s.Fake.StarBalance())
	}
	m := s.Command(b, admin, "balance", "")
	for _, want := range []string{
		"Balance: <b>$968.95</b>", "Orders placed: 2 · spent: $31.05", "active",
		"962 ⭐ (≈ $12.51 at $0.013 a Star)",                                                      // 962 × 0.013 = 12.506
		"2 orders", "Buyers paid 962 ⭐ (≈ $12.51) and $12.50 from shop wallets, ≈ $25.01 in all", // 12.506 + 12.50
	} {
		if !strings.Contains(m.RawText, strings.ReplaceAll(want, " ⭐", "\u00a0⭐")) {
			t.Errorf("/balance lacks %q:\n%s", want, m.RawText)
		}
	}
	golden.Check(t, "reports/balance", bottest.Render(m))
	// Finish both so the shop's invariants hold.
	for _, o := range []*state.Order{o1, o2} {
		if err := s.Sim.CompleteOrder(int(o.UpstreamNumber)); err != nil {
			t.Fatal(err)
		}
		s.WaitStatus(o.ID, state.OrderDelivered)
	}
	s.NoViolations()
}
