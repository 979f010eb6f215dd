package state

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestMarginOfAnImpossibleChargeIsUnknown: a delivered order stored with a
// negative charged_usd, or one above MaxChargeOverQuote times its quote,
// has no margin (so /stats, the exports and referral rewards count
// nothing from it); a plausible one, a little above the quote, has.
func TestMarginOfAnImpossibleChargeIsUnknown(t *testing.T) {
	d := decimal.RequireFromString
	rate := d("0.013")
	for _, c := range []struct {
		charged string
		ok      bool
		margin  string
	}{
		{"-1000.0000", false, "0"},
		{"-0.0001", false, "0"},
		{"20.0001", false, "0"},
		{"20.0000", true, "6.18"},
		{"10.3500", true, "15.83"},
		{"0", true, "26.18"},
	} {
		o := &Order{Status: OrderDelivered, PayMethod: PayWallet, ShopUSD: d("26.18"), UpstreamUSD: d("10"), ChargedUSD: d(c.charged)}
		m, ok := o.Margin(rate)
		if ok != c.ok || !m.Equal(d(c.margin)) {
			t.Errorf("charged %s: margin %s %v, want %s %v", c.charged, m, ok, c.margin, c.ok)
		}
		if (o.ChargeFault(o.ChargedUSD) == "") != c.ok {
			t.Errorf("charged %s: fault %q", c.charged, o.ChargeFault(o.ChargedUSD))
		}
	}
}
