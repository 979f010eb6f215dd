package shop

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

func testPricing() Pricing {
	return Pricing{
		Markup:       Markup{Percent: decimal.NewFromInt(10)},
		Lines:        map[string]Markup{"premium": {Percent: decimal.NewFromInt(5), Fixed: decimal.RequireFromString("0.50")}},
		StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true,
	}
}

func TestPricing(t *testing.T) {
	p := testPricing()
	for _, c := range []struct {
		line, up, usd string
		stars         int64
	}{
		{"stars", "1", "1.10", 85},           // 1.10/0.013 = 84.6
		{"stars", "0.0001", "0.01", 1},       // rounded up to a cent
		{"giftcards", "10.35", "11.39", 877}, // 11.385 -> 11.39
		{"premium", "0", "0.50", 39},         // fixed fee only
		{"stars", "1.3", "1.43", 110},        // exact: 1.43/0.013 = 110
	} {
		usd := p.ShopUSD(c.line, decimal.RequireFromString(c.up))
		if !usd.Equal(decimal.RequireFromString(c.usd)) || p.Stars(usd) != c.stars {
			t.Errorf("%s %s: got %s USD %d Stars, want %s %d", c.line, c.up, usd, p.Stars(usd), c.usd, c.stars)
		}
	}
	p.ShowUSD = true
	if got := p.Format(locales.En, decimal.RequireFromString("1.43")); !strings.Contains(got, "110") || !strings.Contains(got, "1.43") {
		t.Errorf("format = %q", got)
	}
}

// An upstream note the shop knows is shown in the buyer's language; any
// other is shown as written, marked as the supplier's (in English) when
// the buyer reads another language.
func TestUpstreamNotes(t *testing.T) {
	ru, en := &flows.Env{Lang: locales.Ru}, &flows.Env{Lang: locales.En}
	if got := Note(ru, "Delivered by an operator within 24 hours.", 100); got != "<i>"+locales.T(locales.Ru, "note.operator_24h")+"</i>" {
		t.Errorf("known note in Russian: %q", got)
	}
	if got := Note(ru, "Keep your 2FA codes at hand.", 100); !strings.HasPrefix(got, "Примечание поставщика (на английском): <i>Keep") {
		t.Errorf("unknown note in Russian: %q", got)
	}
	if got := Note(en, "Keep <b>2FA</b> at hand.", 100); got != "<i>Keep &lt;b&gt;2FA&lt;/b&gt; at hand.</i>" {
		t.Errorf("unknown note in English: %q", got)
	}
}
