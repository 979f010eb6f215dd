package books_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
)

// TestAffiliateCommissionsAreExplainedAndCounted: the shop runs Telegram's
// affiliate program (buyers an affiliate brought pay a 12.5% commission
// out of what the bot receives) and is itself an affiliate of another
// bot's program. /reconcile lists nothing unexplained and counts both in
// its header; /stats shows the commissions paid and earned today, in
// Stars and USD; when Telegram's list cannot be read /stats still answers
// and says so.
func TestAffiliateCommissionsAreExplainedAndCounted(t *testing.T) {
	s := newBooksShop(t, nil)
	s.Run(s.b)
	s.Listening()
	s.Fake.SetAffiliate(chat, types.User{ID: 777, IsBot: false, FirstName: "Promoter", Username: "promoter"}, 125)
	a, b := s.buy(1), s.buy(2)
	sponsor := types.User{ID: 4242, IsBot: true, FirstName: "Other shop", Username: "other_shop_bot"}
	s.Fake.AddAffiliateCommission(sponsor, 200, 40, time.Now().Add(-time.Minute))
	total := map[string]int64{a.ChargeID: a.Stars, b.ChargeID: b.Stars}
	for _, tx := range s.Fake.StarTransactions() {
		if n, ok := total[tx.ID]; ok && (tx.Source == nil || tx.Source.Affiliate == nil || tx.Amount >= n) {
			t.Fatalf("a payment by a buyer an affiliate brought: %+v", tx)
		}
	}

	paid := decimal.NewFromInt(a.Stars + b.Stars).Mul(decimal.RequireFromString("0.125"))
	stars := func(d decimal.Decimal) string {
		v := d.StringFixed(2)
		return strings.TrimRight(strings.TrimRight(v, "0"), ".") + " ⭐"
	}
	m := s.Command(s.b, admin, "reconcile", "")
	text := strings.ReplaceAll(m.RawText, "\u00a0", " ")
	for _, want := range []string{
		bottest.En("rep.rec.clean"),
		"2 Star payments, 0 Star refunds",
		bottest.En("aff.rec", "paid", stars(paid), "payments", "2", "earned", "40 ⭐", "earnings", "1"),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/reconcile lacks %q:\n%s", want, text)
		}
	}

	m = s.Command(s.b, admin, "stats", "")
	text = strings.ReplaceAll(m.RawText, "\u00a0", " ")
	rate := decimal.RequireFromString("0.013")
	usd := func(d decimal.Decimal) string { return "$" + d.Mul(rate).StringFixed(2) }
	net := decimal.NewFromInt(40).Sub(paid)
	sign := "+"
	if net.IsNegative() {
		sign, net = "−", net.Neg()
	}
	want := bottest.En("aff.stats", "paid", stars(paid), "paid_usd", usd(paid), "payments", "2",
		"earned", "40 ⭐", "earned_usd", usd(decimal.NewFromInt(40)), "net", sign+usd(net))
	if n := strings.Count(text, want); n != 3 {
		t.Errorf("/stats has the affiliate line %d times, want once per period (3): %q\n%s", n, want, text)
	}

	s.Fake.FailNext("getStarTransactions", 1, 500, "Internal Server Error", 0)
	m = s.Command(s.b, admin, "stats", "")
	if !strings.Contains(m.RawText, bottest.En("aff.stats_unavailable")) || !strings.Contains(m.RawText, strconv.Itoa(2)) {
		t.Errorf("/stats with Telegram's list unreadable:\n%s", m.RawText)
	}
	s.NoViolations()
}
