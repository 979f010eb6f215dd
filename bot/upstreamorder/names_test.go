package upstreamorder

import (
	"encoding/json"
	"testing"

	"shopbot/locales"
	"shopbot/state"
)

func orderOf(t *testing.T, q state.Quote) *state.Order {
	t.Helper()
	item, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	return &state.Order{ID: 12, Line: q.Line, Item: item, Status: state.OrderDelivered}
}

// TestItemNamesFollowTheBuyersLanguage: names the shop wrote in English are
// written again in Russian; upstream names stay as the upstream gave them.
func TestItemNamesFollowTheBuyersLanguage(t *testing.T) {
	for _, tt := range []struct {
		q    state.Quote
		want string
	}{
		{state.Quote{Line: "stars", ItemName: "500 Stars", Quantity: 500}, locales.N(locales.Ru, "count.stars", 500)},
		{state.Quote{Line: "premium", Item: "3", ItemName: "Telegram Premium for 3 months"}, locales.T(locales.Ru, "premium.item", "months", locales.N(locales.Ru, "count.months", 3))},
		{state.Quote{Line: "topup", ItemName: "Store wallet top-up: 12.50 USD", Fields: map[string]string{"amount": "12.50", "currency": "USD"}}, locales.T(locales.Ru, "topup.item", "amount", "12,50\u00a0USD")},
		{state.Quote{Line: "giftcards", ItemName: "Apple Gift Card 10 USD"}, "Apple Gift Card 10 USD"},
	} {
		if got := ItemName(locales.Ru, orderOf(t, tt.q)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.q.Line, got, tt.want)
		}
	}
}

// Only lines whose quote names a recipient repeat it; the answers of
// services and in-game top-ups (which may hold a password) never are.
func TestRecipientOnlyForLinesThatNameOne(t *testing.T) {
	for _, tt := range []struct {
		line string
		want string
	}{
		{"stars", "@buyer"}, {"premium", "@buyer"}, {"topup", "@buyer"}, {"gifts", "@buyer"},
		{"services", ""}, {"games", ""}, {"giftcards", ""}, {"keys", ""},
	} {
		if got := Recipient(orderOf(t, state.Quote{Line: tt.line, For: "@buyer"})); got != tt.want {
			t.Errorf("%s: recipient %q, want %q", tt.line, got, tt.want)
		}
	}
}
