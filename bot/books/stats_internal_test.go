package books

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// The promo codes line of /stats gives the margin of the discounted orders
// alone (what they still earned), not the margin of every order again.
func TestStatsPromoLineHasTheMarginOfTheDiscountedOrders(t *testing.T) {
	r := &Books{opts: Options{StarsUSDRate: decimal.RequireFromString("0.013")}}
	d := decimal.RequireFromString
	full := &state.Order{Status: state.OrderDelivered, PayMethod: state.PayWallet, ShopUSD: d("13.00"), ChargedUSD: d("10.00")}
	promo := &state.Order{Status: state.OrderDelivered, PayMethod: state.PayWallet, ShopUSD: d("10.50"), ChargedUSD: d("10.00"),
		PromoCode: "SAVE", DiscountUSD: d("2.50")}
	p := &period{key: "today", from: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}
	p.all.add(r.figuresOf(full))
	p.all.add(r.figuresOf(promo))
	env := &flows.Env{Lang: locales.En}
	text := strings.ReplaceAll(r.statsText(env, p.from, []*period{p}, false), "\u00a0", " ")
	if !strings.Contains(text, "margin <b>$3.50</b>") {
		t.Fatalf("overall margin:\n%s", text)
	}
	if want := "Promo codes: 1 order, $2.50 off · their margin after the discount $0.50"; !strings.Contains(text, want) {
		t.Fatalf("no %q in:\n%s", want, text)
	}
}

// A payment's commission counts once; its refund gives it back (a
// negative commission) without counting another payment; a commission the
// bot earned counts apart, with its fraction.
func TestAffiliateTallyNetsRefundsAndKeepsFractions(t *testing.T) {
	d := decimal.RequireFromString
	var tl affiliateTally
	tl.add(StarTx{Incoming: true, Amount: 87, Nanos: 500_000_000, Affiliate: d("12.5")})
	tl.add(StarTx{Incoming: true, Amount: 175, Affiliate: d("25")})
	tl.add(StarTx{Refund: true, Amount: 100, Affiliate: d("-12.5")})
	tl.add(StarTx{Program: true, Amount: 3, Nanos: 250_000_000})
	tl.add(StarTx{Incoming: true, Amount: 50, Affiliate: decimal.Zero})
	if !tl.paid.Equal(d("25")) || tl.payments != 2 || !tl.earned.Equal(d("3.25")) || tl.earnings != 1 {
		t.Fatalf("tally %+v", tl)
	}
	if got := tl.recLine(locales.Ru); !strings.Contains(got, "25 ⭐") || !strings.Contains(got, "3,25 ⭐") {
		t.Fatalf("Russian line %q", got)
	}
}
