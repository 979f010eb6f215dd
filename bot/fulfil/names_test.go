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

// TestRefundReasonAndUpstreamRef: a refunded order says why to the buyer;
// an order never placed upstream is not "Upstream #0" to admins.
func TestRefundReasonAndUpstreamRef(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
