package admin

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/bot/fulfil"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

func TestFitCodesStaysWithinOneMessage(t *testing.T) {
	codes := make([]string, 300)
	for i := range codes {
		codes[i] = strings.Repeat("Ж", 20) + "<&>"
	}
	text, all := fulfil.FitCodes("head", fulfil.CodeLines(codes), "tail note")
	if all {
		t.Fatal("300 long codes cannot all fit")
	}
	if n := locales.UTF16Len(text) + locales.UTF16Len("tail note") + 2; n > maxMessageChars {
		t.Fatalf("message of %d characters", n)
	}
	if !strings.Contains(text, "<code>"+strings.Repeat("Ж", 20)+"&lt;&amp;&gt;</code>") {
		t.Fatal("codes are not escaped monospace")
	}
	if _, all := fulfil.FitCodes("head", fulfil.CodeLines(codes[:5]), "tail"); !all {
		t.Fatal("five codes must fit")
	}
}

// An order stored with an impossible upstream charge (negative, or far
// above the quote) shows no margin in /order N: nothing is computed from it.
func TestAdminOrderMarginOfAnImpossibleChargeIsUnknown(t *testing.T) {
	a := adminOrders{&Admin{}}
	env := &flows.Env{Lang: "en"}
	none := env.T("ao.none")
	for charged, want := range map[string]string{"-1000.0000": none, "25.0000": none, "10.3500": locales.Money("en", decimal.RequireFromString("15.83"))} {
		o := &state.Order{Status: state.OrderDelivered, PayMethod: state.PayWallet, ShopUSD: decimal.RequireFromString("26.18"),
			UpstreamUSD: decimal.RequireFromString("10"), ChargedUSD: decimal.RequireFromString(charged), UpstreamNumber: 1001}
		if got := a.margin(env, o); got != want {
			t.Errorf("charged %s: margin %q, want %q", charged, got, want)
		}
	}
}
