package fulfil

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"shopbot/locales"
	"shopbot/state"
)

func orderOf(t *testing.T, q state.Quote, status, reason string) *state.Order {
	t.Helper()
	item, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	return &state.Order{ID: 12, Line: q.Line, Item: item, Status: status, Reason: reason}
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
		if got := ItemName(locales.Ru, orderOf(t, tt.q, state.OrderDelivered, "")); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.q.Line, got, tt.want)
		}
	}
}

// TestRefundReasonAndUpstreamRef: a refunded order says why to the buyer;
// an order never placed upstream is not "Upstream #0" to admins.
func TestRefundReasonAndUpstreamRef(t *testing.T) {
	q := state.Quote{Line: "giftcards", ItemName: "Card"}
	o := orderOf(t, q, state.OrderRefunded, reasonInvalid)
	if got := RefundReason(locales.En, o); got != locales.T(locales.En, reasonInvalid) {
		t.Fatalf("reason %q", got)
	}
	if got := RefundReason(locales.En, orderOf(t, q, state.OrderDelivered, reasonInvalid)); got != "" {
		t.Fatalf("a delivered order has a refund reason %q", got)
	}
	if got := upstreamRef(locales.En, o); strings.Contains(got, "#0") || got != locales.T(locales.En, "alert.never_placed") {
		t.Fatalf("never placed: %q", got)
	}
	o.UpstreamNumber = 1008
	if got := upstreamRef(locales.En, o); got != "Upstream #1008" {
		t.Fatalf("placed: %q", got)
	}
}

// The set of attempts whose "nothing created" was journaled stays bounded
// in a long-running replica, and still answers once per id.
func TestNotedIsBounded(t *testing.T) {
	var n noted
	if !n.first("a") || n.first("a") {
		t.Fatal("first of a new id, then not")
	}
	for i := range notedMax + 10 {
		n.first(strconv.Itoa(i))
	}
	if len(n.m) > notedMax {
		t.Fatalf("%d ids kept, want at most %d", len(n.m), notedMax)
	}
}
