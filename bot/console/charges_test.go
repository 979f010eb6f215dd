package console_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/bottest/shoptest"
	"shopbot/locales"
	"shopbot/state"
)

// paidAt is when the tests' charges for review were paid: before the
// store existed.
var paidAt = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

// chargeIDs are the charge ids of a page of GET charges, in its order.
func chargeIDs(a answer) []string {
	var out []string
	for _, r := range a.body["charges"].([]any) {
		out = append(out, r.(map[string]any)["charge"].(string))
	}
	return out
}

// The Charges page lists what /charges lists, from the same code: the
// charges waiting for review, oldest first, twenty a page, each with its
// buyer (and @username), Stars and USD, date, reason and the quote's item
// while it is stored; the totals are /charges' (and /balance's). An
// accountant reads it with no actions and is refused both (403, nothing
// moves); a support agent and a buyer are refused the page. The live poll
// counts the waiting charges for those who read the books.
func TestConsoleChargesListsWhatTheChatLists(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.sweepDone()
	const known = int64(7101) // a buyer who wrote to the bot: their @username is known
	s.Command(s.b, known, "start", "")
	for i := range 22 {
		reason := state.ReviewBeforeStore
		if i%3 == 2 {
			reason = state.ReviewQuoteGone
		}
		item := ""
		if i == 3 {
			item = "Apple Gift Card 10 USD"
		}
		s.listCharge(fmt.Sprintf("stxLIST%02d", i+1), int64(7100+i%2), int64(100*(i+1)), paidAt.Add(time.Duration(i)*time.Hour), reason, item)
	}

	page := s.call(accountant, "GET", "charges", nil).ok(t)
	waiting := page.body["waiting"].(map[string]any)
	if waiting["n"].(float64) != 22 || waiting["stars"].(float64) != 25300 || waiting["usd"] != "328.90" || page.body["refunding"].(map[string]any)["n"].(float64) != 0 {
		t.Fatalf("the totals: %s", page.raw)
	}
	if page.body["page"].(float64) != 1 || page.body["pages"].(float64) != 2 {
		t.Fatalf("page %v of %v", page.body["page"], page.body["pages"])
	}
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("stxLIST%02d", i+1))
	}
	if got := chargeIDs(page); !slices.Equal(got, want) {
		t.Fatalf("page 1 lists %v, want the 20 oldest, oldest first", got)
	}
	rows := page.body["charges"].([]any)
	first, second, fourth := rows[0].(map[string]any), rows[1].(map[string]any), rows[3].(map[string]any)
	if first["buyer"].(float64) != 7100 || first["stars"].(float64) != 100 || first["usd"] != "1.30" || first["paid"] != "2026-11-20T09:30:00Z" ||
		first["reason"] != state.ReviewBeforeStore || !strings.HasPrefix(first["why"].(string), "paid before this store was created") || first["item"] != nil {
		t.Fatalf("the first charge: %v", first)
	}
	if second["username"] != "buyer7101" {
		t.Fatalf("the second charge's buyer: %v", second)
	}
	if fourth["item"] != "Apple Gift Card 10 USD" || fourth["line"] != "giftcards" || fourth["line_label"] != "💳 Gift cards" {
		t.Fatalf("the fourth charge's item: %v", fourth)
	}
	if rows[2].(map[string]any)["reason"] != state.ReviewQuoteGone {
		t.Fatalf("the third charge's reason: %v", rows[2])
	}
	if acts := page.body["actions"].([]any); len(acts) != 0 {
		t.Fatalf("the accountant may %v", acts)
	}
	// The same facts as /charges (the accountant's too).
	chat := locales.Plain(s.Command(s.b, accountant, "charges", "").RawText)
	for _, f := range []string{waiting["stars_text"].(string), waiting["usd_text"].(string), first["stars_text"].(string), first["usd_text"].(string),
		"stxLIST01", "@buyer7101", "Apple Gift Card 10 USD", first["why"].(string)} {
		if !strings.Contains(chat, f) {
			t.Errorf("/charges does not show the console's %q:\n%s", f, chat)
		}
	}

	if got := chargeIDs(s.call(owner, "GET", "charges?page=2", nil).ok(t)); !slices.Equal(got, []string{"stxLIST21", "stxLIST22"}) {
		t.Fatalf("page 2 lists %v", got)
	}
	if last := s.call(owner, "GET", "charges?page=9", nil).ok(t); last.body["page"].(float64) != 2 {
		t.Fatalf("a page past the last: %s", last.raw)
	}
	if a := s.call(owner, "GET", "charges?page=0", nil); a.status != http.StatusBadRequest {
		t.Fatalf("page 0: %d %s", a.status, a.raw)
	}
	if acts := s.call(owner, "GET", "charges", nil).ok(t).body["actions"].([]any); !slices.Equal(acts, []any{"refund", "settle"}) {
		t.Fatalf("the owner may %v", acts)
	}
	for _, who := range []int64{agent, buyer} {
		if a := s.call(who, "GET", "charges", nil); a.status != http.StatusForbidden {
			t.Fatalf("%d's list: %d %s", who, a.status, a.raw)
		}
	}
	for _, act := range []string{"refund", "settle"} {
		for _, who := range []int64{accountant, agent, buyer} {
			if a := s.call(who, "POST", "charges/stxLIST01/"+act, map[string]any{}); a.status != http.StatusForbidden {
				t.Fatalf("%d's %s: %d %s", who, act, a.status, a.raw)
			}
		}
	}
	if rv, err := s.chargeReviews().Get(t.Context(), "stxLIST01"); err != nil || rv.Resolution != nil || s.StarRefunds("stxLIST01") != 0 {
		t.Fatalf("the refused actions moved the charge: %+v %v, %d refunds", rv, err, s.StarRefunds("stxLIST01"))
	}

	if live := s.call(accountant, "GET", "live", nil).ok(t); live.body["charges"] != float64(22) {
		t.Fatalf("the accountant's live count: %s", live.raw)
	}
	if live := s.call(agent, "GET", "live", nil).ok(t); live.body["charges"] != nil {
		t.Fatalf("the support agent's live poll counts charges: %s", live.raw)
	}
	s.NoViolations()
}

// Three owners' confirms of the same refund at once, two from the console
// and one from the chat's code: one decision wins and only it refunds, so
// one refund reaches Telegram, the buyer is told once, and the audit log
// has it once, from where the winner acted. The console's losers are told,
// in words, that it was resolved before and by whom (409, no error page);
// so is every press after, a settle included.
func TestConsoleChargeRefundedOnceUnderConcurrentConfirms(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.sweepDone()
	s.listCharge("stxREFUND1", buyer, 500, paidAt, state.ReviewBeforeStore, "")
	balance := s.Fake.StarBalance()

	answers := make([]answer, 2)
	var chatWon bool
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = s.call(owner, "POST", "charges/stxREFUND1/refund", map[string]any{}) })
	}
	wg.Go(func() {
		out, err := s.b.Books().ResolveCharge(context.Background(), state.Actor{ID: owner, Role: "owner", Via: state.ViaChat}, "stxREFUND1", state.ChargeRefunding)
		if err != nil {
			t.Errorf("the chat's confirm: %v", err)
			return
		}
		chatWon = out.Won
	})
	wg.Wait()
	won := 0
	if chatWon {
		won++
	}
	for _, a := range answers {
		switch {
		case a.status == http.StatusOK && a.str("done") == "refunded" && strings.Contains(a.str("message"), "Refunded, and the buyer was told"):
			won++
		case a.status == http.StatusConflict && strings.Contains(a.raw, `"code":"resolved_before"`) && strings.Contains(a.raw, "It was resolved before") &&
			strings.Contains(a.raw, fmt.Sprint("admin ", owner)):
		default:
			t.Fatalf("a console confirm: %d %s", a.status, a.raw)
		}
	}
	if won != 1 {
		t.Fatalf("%d confirms won (the chat's: %v)", won, chatWon)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 || s.StarRefunds("stxREFUND1") != 1 || s.Fake.StarBalance() != balance-500 {
		t.Fatalf("%d refund calls, balance %d (was %d)", n, s.Fake.StarBalance(), balance)
	}
	if told := s.refundTexts(buyer); len(told) != 1 {
		t.Fatalf("the buyer was told %q", told)
	}
	via := map[bool]string{true: state.ViaChat, false: state.ViaConsole}[chatWon]
	if audit := s.audited(state.AuditChargeRefund); len(audit) != 1 || audit[0].Actor.ID != owner || audit[0].Actor.Via != via || audit[0].Target != "charge stxREFUND1" {
		t.Fatalf("the audit log: %+v", audit)
	}
	rv, err := s.chargeReviews().Get(t.Context(), "stxREFUND1")
	if err != nil || rv.Resolution == nil || rv.Resolution.Status != state.ChargeRefunded || rv.Resolution.By.Via != via {
		t.Fatalf("the charge after: %+v %v", rv, err)
	}

	for _, act := range []string{"refund", "settle"} {
		a := s.call(owner, "POST", "charges/stxREFUND1/"+act, map[string]any{})
		if a.status != http.StatusConflict || !strings.Contains(a.raw, `"code":"resolved_before"`) || !strings.Contains(a.raw, "Refunded: decided by admin") {
			t.Fatalf("a %s after the refund: %d %s", act, a.status, a.raw)
		}
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 {
		t.Fatalf("%d refund calls after the presses that came late", n)
	}
	if page := s.call(owner, "GET", "charges", nil).ok(t); len(chargeIDs(page)) != 0 || page.body["waiting"].(map[string]any)["n"].(float64) != 0 {
		t.Fatalf("the list after the refund: %s", page.raw)
	}
	s.NoViolations()
}

// Settled from the console: no money moves and the buyer hears nothing;
// the charge leaves the list, keeps who settled it (from the console) and
// is audited once; a refund asked for after is told it was settled.
func TestConsoleChargeSettledMovesNoMoney(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.sweepDone()
	s.listCharge("stxSETTLE1", buyer, 700, paidAt, state.ReviewQuoteGone, "")
	balance := s.Fake.StarBalance()

	a := s.call(owner, "POST", "charges/stxSETTLE1/settle", map[string]any{}).ok(t)
	if a.str("done") != "settled" || !strings.Contains(a.str("message"), "Marked settled") || !strings.Contains(a.str("message"), fmt.Sprint("Settled by admin ", owner)) {
		t.Fatalf("the settlement: %s", a.raw)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 0 || s.Fake.StarBalance() != balance {
		t.Fatalf("settling moved money: %d refund calls", n)
	}
	if told := s.refundTexts(buyer); len(told) != 0 {
		t.Fatalf("the buyer was told %q", told)
	}
	rv, err := s.chargeReviews().Get(t.Context(), "stxSETTLE1")
	if err != nil || rv.Resolution == nil || rv.Resolution.Status != state.ChargeSettled || rv.Resolution.By != (state.Actor{ID: owner, Role: "owner", Via: state.ViaConsole}) {
		t.Fatalf("the charge after: %+v %v", rv, err)
	}
	if audit := s.audited(state.AuditChargeSettle); len(audit) != 1 || audit[0].Actor.Via != state.ViaConsole || audit[0].Target != "charge stxSETTLE1" {
		t.Fatalf("the audit log: %+v", audit)
	}
	if ids := chargeIDs(s.call(accountant, "GET", "charges", nil).ok(t)); len(ids) != 0 {
		t.Fatalf("the list after: %v", ids)
	}
	again := s.call(owner, "POST", "charges/stxSETTLE1/refund", map[string]any{})
	if again.status != http.StatusConflict || !strings.Contains(again.raw, `"code":"resolved_before"`) || !strings.Contains(again.raw, "no money moved") {
		t.Fatalf("a refund after the settlement: %d %s", again.status, again.raw)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 0 {
		t.Fatalf("%d refund calls", n)
	}
}

// A listed charge that has an order by now is not refunded from the list:
// the owner is told its order (409 has_order, with the order's ref to open
// it) and it stays listed. A charge not listed, or an id that is none, is
// said so, and nothing moves.
func TestConsoleChargeWithAnOrderIsRefundedFromItsOrder(t *testing.T) {
	s := newConsoleShop(t, nil)
	s.sweepDone()
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	o = s.WaitDelivered(o.ID)
	if _, err := s.chargeReviews().Add(t.Context(), state.ChargeReview{ChargeID: o.ChargeID, UserID: buyer, Stars: o.Stars,
		Payload: "q:" + o.QuoteID, PaidAt: paidAt, Reason: state.ReviewBeforeStore}); err != nil {
		t.Fatal(err)
	}
	a := s.call(owner, "POST", "charges/"+o.ChargeID+"/refund", map[string]any{})
	if a.status != http.StatusConflict || !strings.Contains(a.raw, `"code":"has_order"`) || a.body["error"].(map[string]any)["order"] != o.Ref() ||
		!strings.Contains(a.raw, fmt.Sprintf("has order #%d now", o.ID)) {
		t.Fatalf("refunding a charge with an order: %d %s", a.status, a.raw)
	}
	if n := s.StarRefunds(o.ChargeID); n != 0 {
		t.Fatalf("%d refunds of a delivered order's charge", n)
	}
	if ids := chargeIDs(s.call(owner, "GET", "charges", nil).ok(t)); !slices.Equal(ids, []string{o.ChargeID}) {
		t.Fatalf("the list after: %v", ids)
	}
	if a := s.call(owner, "POST", "charges/stxNOPE/refund", map[string]any{}); a.status != http.StatusConflict ||
		!strings.Contains(a.raw, `"code":"not_listed"`) || !strings.Contains(a.raw, "not on the review list") {
		t.Fatalf("a charge not listed: %d %s", a.status, a.raw)
	}
	if a := s.call(owner, "POST", "charges/stx%20NOPE/settle", map[string]any{}); a.status != http.StatusBadRequest {
		t.Fatalf("an id that is none: %d %s", a.status, a.raw)
	}
	if audit := append(s.audited(state.AuditChargeRefund), s.audited(state.AuditChargeSettle)...); len(audit) != 0 {
		t.Fatalf("the audit log: %+v", audit)
	}
}
