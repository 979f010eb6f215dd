package books_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/checkout"
	"shopbot/bot/storefront"
	"shopbot/flows/golden"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
)

// The staff of the /charges tests besides admin: a second owner, a
// support agent and an accountant.
const (
	owner2     = int64(9001)
	agent      = int64(9100)
	accountant = int64(9200)
)

// chargesShop is a shop that takes Stars, with two owners, a support agent
// and an accountant, running, its start-up payment sweep done (so the
// test's charges are listed only as the test lists them).
type chargesShop struct {
	*harness
	b       *storefront.Shop
	reviews *records.ChargeReviews
}

func newChargesShop(t *testing.T) *chargesShop {
	t.Helper()
	h := newHarness(t)
	b := h.reportsBot(nil, func(o *storefront.Options) {
		o.Admins = []int64{admin, owner2}
		o.SupportAgents = []int64{agent}
		o.Accountants = []int64{accountant}
		o.Checkout = &checkout.Options{Stars: true}
	})
	h.Run(b)
	s := &chargesShop{harness: h, b: b, reviews: records.NewChargeReviews(h.Rdb.Client, h.Rdb.Prefix)}
	h.Wait("getStarTransactions", 1)
	s.sweep()
	return s
}

// sweep runs the payment sweep once (after the one under way, if any).
func (s *chargesShop) sweep() {
	s.T.Helper()
	var err error
	if !s.Until(func() bool {
		_, err = s.b.Checkout.Sweep(context.Background())
		return !errors.Is(err, checkout.ErrSweepBusy)
	}) {
		s.T.Fatal("the sweep stayed busy")
	}
	if err != nil {
		s.T.Fatal(err)
	}
}

// paidAt is when the tests' charges were paid: before the store existed.
var paidAt = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

// listCharge makes a Star charge of buyer in Telegram's list, paid at,
// and lists it for review as the payment sweep does for a charge older
// than the store.
func (s *chargesShop) listCharge(id string, buyer, stars int64, at time.Time, reason string) {
	s.T.Helper()
	payload := "q:lost-" + id
	s.Fake.AddStarPayment(buyer, payload, stars, at, id)
	if _, err := s.reviews.Add(context.Background(), state.ChargeReview{
		ChargeID: id, UserID: buyer, Stars: stars, Payload: payload, PaidAt: at, Reason: reason,
	}); err != nil {
		s.T.Fatal(err)
	}
}

// confirm opens /charges as who, presses label (a charge's Refund or
// Settled) and returns the confirmation.
func (s *chargesShop) confirm(who int64, label string) types.Message {
	s.T.Helper()
	list := s.Command(s.b, who, "charges", "")
	return s.Press(s.b, who, list, label)
}

// refundTexts are the bot's messages to buyer saying a payment was given
// back (in any language).
func (s *chargesShop) refundTexts(buyer int64) []string {
	var out []string
	for _, m := range s.BotMessages(buyer) {
		if strings.Contains(m.RawText, "↩️") {
			out = append(out, m.RawText)
		}
	}
	return out
}

// audited are the audit log's entries of action.
func (s *chargesShop) audited(action string) []state.AuditEntry {
	s.T.Helper()
	all, err := records.NewAuditLog(s.Rdb.Client, s.Rdb.Prefix).Recent(context.Background(), 100)
	if err != nil {
		s.T.Fatal(err)
	}
	var out []state.AuditEntry
	for _, e := range all {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}

func stars(s string) string { return strings.ReplaceAll(s, " ⭐", "\u00a0⭐") }

// /balance counts the charges waiting for review with their Stars and
// their USD, beside the orders; a resolved one no longer counts, and one
// whose refund is under way counts apart.
func TestBalanceCountsUnresolvedChargeReviewsWithTheirStars(t *testing.T) {
	s := newChargesShop(t)
	if m := s.Command(s.b, admin, "balance", ""); strings.Contains(m.RawText, "review") {
		t.Fatalf("/balance with nothing listed:\n%s", m.RawText)
	}
	s.listCharge("stxBAL1", chat, 150, paidAt, state.ReviewBeforeStore)
	s.listCharge("stxBAL2", chat, 250, paidAt.Add(time.Minute), state.ReviewQuoteGone)
	s.listCharge("stxBAL3", chat, 1000, paidAt.Add(2*time.Minute), state.ReviewBeforeStore)
	m := s.Command(s.b, admin, "balance", "")
	// 1,400 Stars at 0.013 = $18.20.
	for _, want := range []string{"Paid, not yet delivered</b>: none.", stars("Star payments waiting for review</b>: 3, 1,400 ⭐ (≈ $18.20), with no order: /charges")} {
		if !strings.Contains(m.RawText, want) {
			t.Fatalf("/balance lacks %q:\n%s", want, m.RawText)
		}
	}
	golden.Check(t, "charges/balance", bottest.Render(m))
	ctx := context.Background()
	by := state.Actor{ID: admin, Role: "owner", Via: state.ViaChat}
	if _, err := s.b.Books().ResolveCharge(ctx, by, "stxBAL3", state.ChargeSettled); err != nil {
		t.Fatal(err)
	}
	// A refund decided and not through yet (its process died).
	if won, _, err := s.reviews.Resolve(ctx, "stxBAL2", state.ChargeResolution{Status: state.ChargeRefunding, By: by, At: time.Now()}); err != nil || !won {
		t.Fatal(won, err)
	}
	m = s.Command(s.b, admin, "balance", "")
	for _, want := range []string{
		stars("Star payments waiting for review</b>: 1, 150 ⭐ (≈ $1.95)"),
		stars("1 refund of a payment for review is under way: 250 ⭐ (≈ $3.25)."),
	} {
		if !strings.Contains(m.RawText, want) {
			t.Fatalf("/balance lacks %q:\n%s", want, m.RawText)
		}
	}
	if strings.Contains(m.RawText, "review</b>: 3") || strings.Contains(m.RawText, "1,000") {
		t.Fatalf("/balance counts a resolved charge:\n%s", m.RawText)
	}
	text, err := s.b.Books().BalanceText(ctx, locales.Ru)
	if err != nil || !strings.Contains(text, "Платежи Stars на проверке: 1, 150") {
		t.Fatalf("the console's balance: %v\n%s", err, text)
	}
	s.NoViolations()
}

// /charges lists the charges waiting for review, oldest first, five a
// page, edited in place: each with its charge id, buyer id and @username
// (when the shop knows it), Stars and USD, date, reason, and what its
// quote bought while the quote is stored. Owners get Refund and Settled
// buttons; the accountant reads the list without them; a support agent
// does not have the command.
func TestChargesListPagesAndShowsEachCharge(t *testing.T) {
	s := newChargesShop(t)
	const known = int64(7101) // a buyer who wrote to the bot: their @username is known
	s.Command(s.b, known, "start", "")
	for i := range 7 {
		buyer := int64(7100 + i%2)
		reason := state.ReviewBeforeStore
		if i%3 == 2 {
			reason = state.ReviewQuoteGone
		}
		s.listCharge(fmt.Sprintf("stxLIST%02d", i+1), buyer, int64(100*(i+1)), paidAt.Add(time.Duration(i)*time.Hour), reason)
	}
	// The fourth charge's quote is still stored.
	q := &state.Quote{ID: "lost-stxLIST04", Line: "giftcards", Item: "gc-1", ItemName: "Apple Gift Card 10 USD", Quantity: 1,
		UpstreamUSD: usd("10.35"), ShopUSD: usd("12.50"), Stars: 300, ChatID: 7100, UserID: 7100,
		Created: time.Now(), Expires: time.Now().Add(time.Hour)}
	if err := records.NewQuotes(s.Rdb.Client, s.Rdb.Prefix).Save(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	edits := len(s.Fake.CallsFor("editMessageText"))
	page1 := s.Command(s.b, admin, "charges", "")
	for _, want := range []string{
		stars("7 waiting, 2,800 ⭐ (≈ $36.40) · page 1 of 2"),
		"<b>1.</b> <code>stxLIST01</code>", stars("100 ⭐ (≈ $1.30) from buyer <code>7100</code>, paid"),
		"<code>7101</code> @buyer7101", "Why: paid before this store was created",
		"Why: its offer is no longer stored", "💳 Gift cards: Apple Gift Card 10 USD", "<b>5.</b> <code>stxLIST05</code>",
	} {
		if !strings.Contains(page1.RawText, want) {
			t.Fatalf("page 1 lacks %q:\n%s", want, page1.RawText)
		}
	}
	if strings.Contains(page1.RawText, "stxLIST06") || strings.Index(page1.RawText, "stxLIST01") > strings.Index(page1.RawText, "stxLIST02") {
		t.Fatalf("page 1 is not the five oldest, oldest first:\n%s", page1.RawText)
	}
	for _, label := range []string{"↩️ Refund 1", "✅ Settled 1", "↩️ Refund 5", "✅ Settled 5", "Newer ▶️"} {
		if !bottest.HasButton(page1, label) {
			t.Fatalf("page 1 has no %q:\n%s", label, bottest.Render(page1))
		}
	}
	golden.Check(t, "charges/page1", bottest.Render(page1))
	page2 := s.Press(s.b, admin, page1, "Newer ▶️")
	if !strings.Contains(page2.RawText, "page 2 of 2") || !strings.Contains(page2.RawText, "<b>1.</b> <code>stxLIST06</code>") ||
		!strings.Contains(page2.RawText, "<b>2.</b> <code>stxLIST07</code>") || strings.Contains(page2.RawText, "stxLIST05") || bottest.HasButton(page2, "Newer ▶️") {
		t.Fatalf("page 2:\n%s", bottest.Render(page2))
	}
	golden.Check(t, "charges/page2", bottest.Render(page2))
	back := s.Press(s.b, admin, page2, "◀️ Older")
	if !strings.Contains(back.RawText, "page 1 of 2") {
		t.Fatalf("back to page 1:\n%s", back.RawText)
	}
	if n := len(s.Fake.CallsFor("editMessageText")) - edits; n != 2 {
		t.Fatalf("paging made %d edits, want 2 (edited in place)", n)
	}
	if n := len(s.BotMessages(admin)); n != 1 {
		t.Fatalf("the admin got %d messages, want the list edited in place", n)
	}

	acc := s.Command(s.b, accountant, "charges", "")
	if !strings.Contains(acc.RawText, "7 waiting") || bottest.HasButton(acc, "↩️ Refund 1") || bottest.HasButton(acc, "✅ Settled 1") || !bottest.HasButton(acc, "Newer ▶️") {
		t.Fatalf("the accountant's list:\n%s", bottest.Render(acc))
	}
	if m := s.Command(s.b, agent, "charges", ""); m.RawText != locales.T(locales.En, "err.unknown_command") {
		t.Fatalf("a support agent's /charges: %q", m.RawText)
	}
	s.NoViolations()
}

// Two owners confirm the refund of the same charge at the same moment:
// one refund reaches Telegram, the buyer is told once (in their
// language), the audit log has it once, and the other owner is told it was
// resolved before, by whom.
func TestChargeRefundMovesMoneyOnceUnderTwoConcurrentConfirms(t *testing.T) {
	s := newChargesShop(t)
	s.Command(s.b, buyer, "start", "")
	lang := s.Command(s.b, buyer, "language", "")
	s.Press(s.b, buyer, lang, locales.LanguageName(locales.Ru))
	s.listCharge("stxREFUND1", buyer, 500, paidAt, state.ReviewBeforeStore)
	balance := s.Fake.StarBalance()
	c1 := s.confirm(admin, "↩️ Refund 1")
	c2 := s.confirm(owner2, "↩️ Refund 1")
	for _, c := range []types.Message{c1, c2} {
		if !strings.Contains(c.RawText, "Refund this payment?") || !strings.Contains(c.RawText, "stxREFUND1") {
			t.Fatalf("confirmation:\n%s", bottest.Render(c))
		}
	}
	golden.Check(t, "charges/refund_confirm", bottest.Render(c1))
	ok := locales.T(locales.En, "rep.btn.confirm")
	q1 := s.Fake.Press(admin, c1.MessageID, bottest.Button(t, c1, ok))
	q2 := s.Fake.Press(owner2, c2.MessageID, bottest.Button(t, c2, ok))
	a1, a2 := s.WaitAnswer(q1), s.WaitAnswer(q2)
	s.Idle(s.b)
	answers := []string{a1.Text, a2.Text}
	if !(answers[0] == "Refunded" && answers[1] == "Resolved before" || answers[0] == "Resolved before" && answers[1] == "Refunded") {
		t.Fatalf("the two confirms were answered %q", answers)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 || !s.Fake.Refunded("stxREFUND1") {
		t.Fatalf("%d refund calls, refunded %v", n, s.Fake.Refunded("stxREFUND1"))
	}
	if got := s.Fake.StarBalance(); got != balance-500 {
		t.Fatalf("star balance %d, want %d", got, balance-500)
	}
	told := s.refundTexts(buyer)
	if len(told) != 1 || !strings.Contains(told[0], stars("Ваш платёж 500 ⭐ возвращён")) {
		t.Fatalf("the buyer was told %q", told)
	}
	rv, err := s.reviews.Get(context.Background(), "stxREFUND1")
	if err != nil || rv.Resolution == nil || rv.Resolution.Status != state.ChargeRefunded || rv.Resolution.AlreadyRefunded || rv.Resolution.DoneAt.IsZero() {
		t.Fatalf("review after: %+v %v", rv.Resolution, err)
	}
	winner, loser, loserMsg := admin, owner2, c2
	if a2.Text == "Refunded" {
		winner, loser, loserMsg = owner2, admin, c1
	}
	if rv.Resolution.By.ID != winner || rv.Resolution.By.Via != state.ViaChat {
		t.Fatalf("resolved by %+v, want %d", rv.Resolution.By, winner)
	}
	audit := s.audited(state.AuditChargeRefund)
	if len(audit) != 1 || audit[0].Actor.ID != winner || audit[0].Target != "charge stxREFUND1" || audit[0].Detail != "500 ⭐" {
		t.Fatalf("audit %+v", audit)
	}
	lost, _ := s.Fake.Message(loser, loserMsg.MessageID)
	if !strings.Contains(lost.RawText, "It was resolved before") || !strings.Contains(lost.RawText, fmt.Sprint("decided by admin <code>", winner, "</code>")) {
		t.Fatalf("the second owner's screen:\n%s", lost.RawText)
	}
	won, _ := s.Fake.Message(winner, map[int64]int{admin: c1.MessageID, owner2: c2.MessageID}[winner])
	if !strings.Contains(won.RawText, "Refunded, and the buyer was told") {
		t.Fatalf("the winner's screen:\n%s", won.RawText)
	}
	if m := s.Command(s.b, admin, "charges", ""); !strings.Contains(m.RawText, "none are waiting") {
		t.Fatalf("the list after the refund:\n%s", m.RawText)
	}
	s.NoViolations()
}

// Two goroutines resolve the same charges at once through the books'
// operation (two replicas): one refunds and one settles. Exactly one
// decision wins each charge; money moves only when the refund won, once.
func TestChargeResolvedOnceByTwoConcurrentCallers(t *testing.T) {
	s := newChargesShop(t)
	ctx := context.Background()
	for i := range 6 {
		s.listCharge(fmt.Sprint("stxRACE", i), chat, 200, paidAt.Add(time.Duration(i)*time.Minute), state.ReviewBeforeStore)
	}
	refunds := 0
	for i := range 6 {
		id := fmt.Sprint("stxRACE", i)
		outs := make([]*struct {
			won    bool
			status string
		}, 2)
		var wg sync.WaitGroup
		for j, status := range []string{state.ChargeRefunding, state.ChargeSettled} {
			wg.Go(func() {
				by := state.Actor{ID: []int64{admin, owner2}[j], Role: "owner", Via: state.ViaConsole}
				out, err := s.b.Books().ResolveCharge(ctx, by, id, status)
				if err != nil || out.RefundErr != nil {
					t.Errorf("%s by %d: %v %+v", id, by.ID, err, out)
					return
				}
				outs[j] = &struct {
					won    bool
					status string
				}{out.Won, out.Review.Resolution.Status}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		// The loser sees the winner's decision: settled, or a refund
		// under way or through.
		decided := map[string]string{state.ChargeRefunding: "refund", state.ChargeRefunded: "refund", state.ChargeSettled: "settle"}
		if outs[0].won == outs[1].won || decided[outs[0].status] != decided[outs[1].status] {
			t.Fatalf("%s: %+v %+v", id, *outs[0], *outs[1])
		}
		if outs[0].won {
			refunds++
		}
		if got := s.Fake.Refunded(id); got != outs[0].won {
			t.Fatalf("%s: refunded %v, the refund won %v", id, got, outs[0].won)
		}
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != refunds {
		t.Fatalf("%d refund calls for %d refunds won", n, refunds)
	}
	if n := len(s.refundTexts(chat)); n != refunds {
		t.Fatalf("the buyer was told %d times of %d refunds", n, refunds)
	}
	if a, b := len(s.audited(state.AuditChargeRefund)), len(s.audited(state.AuditChargeSettle)); a != refunds || b != 6-refunds {
		t.Fatalf("audited %d refunds and %d settlements, want %d and %d", a, b, refunds, 6-refunds)
	}
}

// Settled: the admin says the charge was delivered or handled elsewhere.
// No money moves and the buyer hears nothing; the charge leaves the list,
// /balance and /reconcile, keeps its record with who settled it and when,
// and goes to the audit log.
func TestChargeSettledMovesNoMoney(t *testing.T) {
	s := newChargesShop(t)
	s.listCharge("stxSETTLE1", chat, 700, time.Now().Add(-48*time.Hour).Truncate(time.Second), state.ReviewBeforeStore)
	balance := s.Fake.StarBalance()
	if m := s.Command(s.b, admin, "reconcile", "7d"); !strings.Contains(m.RawText, "stxSETTLE1") {
		t.Fatalf("/reconcile before does not list the charge:\n%s", m.RawText)
	}
	c := s.confirm(owner2, "✅ Settled 1")
	if !strings.Contains(c.RawText, "Mark this payment settled?") || !strings.Contains(c.RawText, "No money moves") {
		t.Fatalf("confirmation:\n%s", bottest.Render(c))
	}
	done := s.Press(s.b, owner2, c, locales.T(locales.En, "rep.btn.confirm"))
	if !strings.Contains(done.RawText, "Marked settled") || !strings.Contains(done.RawText, fmt.Sprint("Settled by admin <code>", owner2, "</code>")) {
		t.Fatalf("done:\n%s", bottest.Render(done))
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 0 || s.Fake.StarBalance() != balance || s.Fake.Refunded("stxSETTLE1") {
		t.Fatalf("settling moved money: %d refund calls, balance %d (was %d)", n, s.Fake.StarBalance(), balance)
	}
	if told := s.refundTexts(chat); len(told) != 0 {
		t.Fatalf("the buyer was told %q", told)
	}
	rv, err := s.reviews.Get(context.Background(), "stxSETTLE1")
	if err != nil || rv.Resolution == nil || rv.Resolution.Status != state.ChargeSettled || rv.Resolution.By.ID != owner2 || rv.Resolution.At.IsZero() || rv.Stars != 700 {
		t.Fatalf("review after: %+v %+v %v", rv, rv.Resolution, err)
	}
	if audit := s.audited(state.AuditChargeSettle); len(audit) != 1 || audit[0].Actor.ID != owner2 || audit[0].Target != "charge stxSETTLE1" {
		t.Fatalf("audit %+v", audit)
	}
	if m := s.Command(s.b, admin, "balance", ""); strings.Contains(m.RawText, "waiting for review") {
		t.Fatalf("/balance still counts it:\n%s", m.RawText)
	}
	if m := s.Command(s.b, admin, "reconcile", "7d"); strings.Contains(m.RawText, "stxSETTLE1") {
		t.Fatalf("/reconcile still lists the settled charge:\n%s", m.RawText)
	}
	// A refund decided later (another owner's list, shown before) finds it settled.
	again, err := s.b.Books().ResolveCharge(context.Background(), state.Actor{ID: admin, Role: "owner", Via: state.ViaChat}, "stxSETTLE1", state.ChargeRefunding)
	if err != nil || again.Won || again.Review.Resolution.Status != state.ChargeSettled || s.Fake.Refunded("stxSETTLE1") {
		t.Fatalf("a refund after the settlement: %+v %v", again, err)
	}
	s.NoViolations()
}

// Neither a support agent nor an accountant can refund or settle: the
// accountant's list has no such button, and a press forged with the
// accountant's own screen is outdated and moves nothing.
func TestSupportAgentOrAccountantCannotRefundACharge(t *testing.T) {
	s := newChargesShop(t)
	s.listCharge("stxGATE1", chat, 300, paidAt, state.ReviewBeforeStore)
	acc := s.Command(s.b, accountant, "charges", "")
	if bottest.HasButton(acc, "↩️ Refund 1") || bottest.HasButton(acc, "✅ Settled 1") {
		t.Fatalf("the accountant's list:\n%s", bottest.Render(acc))
	}
	reload := bottest.Button(t, acc, "🔄 Refresh")
	nonce := strings.TrimSuffix(reload, ":crl")
	for _, data := range []string{nonce + ":crf:1", nonce + ":cst:1", nonce + ":crfok", nonce + ":cstok"} {
		a := s.WaitAnswer(s.Fake.Press(accountant, acc.MessageID, data))
		s.Idle(s.b)
		if a.Text != locales.T(locales.En, "err.outdated") {
			t.Fatalf("the accountant's %q was answered %q", data, a.Text)
		}
	}
	if m := s.Command(s.b, agent, "charges", ""); m.RawText != locales.T(locales.En, "err.unknown_command") {
		t.Fatalf("a support agent's /charges: %q", m.RawText)
	}
	rv, err := s.reviews.Get(context.Background(), "stxGATE1")
	if err != nil || rv.Resolution != nil || len(s.Fake.CallsFor("refundStarPayment")) != 0 {
		t.Fatalf("resolved by staff who may not: %+v %v", rv.Resolution, err)
	}
	s.NoViolations()
}

// The payment sweep does not list a resolved charge again, nor alert
// admins of it, nor refund a settled one.
func TestSweepDoesNotListAResolvedChargeAgain(t *testing.T) {
	s := newChargesShop(t)
	ctx := context.Background()
	settled := s.Fake.AddStarPayment(chat, "q:gone1", 400, time.Now().Add(-48*time.Hour), "")
	refunded := s.Fake.AddStarPayment(chat, "q:gone2", 600, time.Now().Add(-47*time.Hour), "")
	s.sweep()
	if n, _ := s.reviews.Len(ctx); n != 2 {
		t.Fatalf("the sweep listed %d charges, want 2", n)
	}
	alerts := func() int {
		n := 0
		for _, m := range s.BotMessages(admin) {
			if strings.Contains(m.RawText, "need review") || strings.Contains(m.RawText, "needs review") {
				n++
			}
		}
		return n
	}
	if !s.Until(func() bool { return alerts() > 0 }) {
		t.Fatal("the owners were not alerted")
	}
	by := state.Actor{ID: admin, Role: "owner", Via: state.ViaChat}
	if out, err := s.b.Books().ResolveCharge(ctx, by, settled, state.ChargeSettled); err != nil || !out.Won {
		t.Fatal(out, err)
	}
	if out, err := s.b.Books().ResolveCharge(ctx, by, refunded, state.ChargeRefunding); err != nil || !out.Won || out.RefundErr != nil {
		t.Fatal(out, err)
	}
	before, calls := alerts(), len(s.Fake.CallsFor("refundStarPayment"))
	for range 2 {
		s.sweep()
	}
	s.Idle(s.b)
	if n, _ := s.reviews.Len(ctx); n != 0 {
		t.Fatalf("%d charges waiting after the sweeps, want 0", n)
	}
	for id, want := range map[string]string{settled: state.ChargeSettled, refunded: state.ChargeRefunded} {
		if rv, err := s.reviews.Get(ctx, id); err != nil || rv.Resolution == nil || rv.Resolution.Status != want {
			t.Fatalf("%s after the sweeps: %+v %v", id, rv, err)
		}
	}
	if alerts() != before {
		t.Fatalf("the sweeps alerted again: %d alerts, were %d", alerts(), before)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != calls || calls != 1 || s.Fake.Refunded(settled) {
		t.Fatalf("refund calls %d (were %d); settled refunded %v", n, calls, s.Fake.Refunded(settled))
	}
	if m := s.Command(s.b, admin, "charges", ""); !strings.Contains(m.RawText, "none are waiting") {
		t.Fatalf("/charges after the sweeps:\n%s", m.RawText)
	}
}

// A refund whose deciding process died before it reached Telegram is
// finished by the retry, which every replica may run at once: the money
// moves once, the buyer is told once, the audit log has it once.
func TestCutShortChargeRefundIsFinishedOnce(t *testing.T) {
	s := newChargesShop(t)
	ctx := context.Background()
	s.listCharge("stxCUT1", chat, 800, paidAt, state.ReviewBeforeStore)
	by := state.Actor{ID: owner2, Role: "owner", Via: state.ViaChat}
	if won, _, err := s.reviews.Resolve(ctx, "stxCUT1", state.ChargeResolution{Status: state.ChargeRefunding, By: by, At: time.Now().Add(-3 * time.Minute)}); err != nil || !won {
		t.Fatal(won, err)
	}
	if m := s.Command(s.b, admin, "charges", ""); !strings.Contains(m.RawText, stars("1 refund of 800 ⭐ is under way")) {
		t.Fatalf("/charges while the refund is under way:\n%s", m.RawText)
	}
	var wg sync.WaitGroup
	finished := make([]int, 3)
	for i := range finished {
		wg.Go(func() {
			n, err := s.b.Books().FinishChargeRefunds(ctx)
			if err != nil {
				t.Error(err)
			}
			finished[i] = n
		})
	}
	wg.Wait()
	if n, _ := s.b.Books().FinishChargeRefunds(ctx); n != 0 {
		t.Fatalf("a later retry finished %d", n)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n < 1 || !s.Fake.Refunded("stxCUT1") {
		t.Fatalf("%d refund calls", n)
	}
	if told := s.refundTexts(chat); len(told) != 1 {
		t.Fatalf("the buyer was told %q", told)
	}
	if audit := s.audited(state.AuditChargeRefund); len(audit) != 1 || audit[0].Actor.ID != owner2 {
		t.Fatalf("audit %+v", audit)
	}
	rv, err := s.reviews.Get(ctx, "stxCUT1")
	if err != nil || rv.Resolution.Status != state.ChargeRefunded || rv.Resolution.By != by {
		t.Fatalf("review after: %+v %v", rv.Resolution, err)
	}
}

// A charge Telegram already lists as refunded (refunded outside this
// store) is resolved with no refund call, and the buyer is not told again.
func TestChargeTelegramListsAsRefundedIsJustResolved(t *testing.T) {
	s := newChargesShop(t)
	s.listCharge("stxGONE1", chat, 350, paidAt, state.ReviewBeforeStore)
	if err := s.b.Bot.RefundStars(context.Background(), chat, "stxGONE1"); err != nil {
		t.Fatal(err)
	}
	c := s.confirm(admin, "↩️ Refund 1")
	done := s.Press(s.b, admin, c, locales.T(locales.En, "rep.btn.confirm"))
	if !strings.Contains(done.RawText, "Telegram lists it as refunded already") {
		t.Fatalf("done:\n%s", bottest.Render(done))
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 {
		t.Fatalf("%d refund calls, want only the one made outside", n)
	}
	if told := s.refundTexts(chat); len(told) != 0 {
		t.Fatalf("the buyer was told %q", told)
	}
	rv, err := s.reviews.Get(context.Background(), "stxGONE1")
	if err != nil || rv.Resolution.Status != state.ChargeRefunded || !rv.Resolution.AlreadyRefunded {
		t.Fatalf("review after: %+v %v", rv.Resolution, err)
	}
	if audit := s.audited(state.AuditChargeRefund); len(audit) != 1 || !strings.Contains(audit[0].Detail, "refunded in Telegram before") {
		t.Fatalf("audit %+v", audit)
	}
	s.NoViolations()
}

// A list left open while another owner resolves a charge on it: each of
// its buttons still names its own charge, and the resolved one shows who
// resolved it, with nothing left to press but Back.
func TestChargeButtonsNameTheirChargeWhenTheListMoved(t *testing.T) {
	s := newChargesShop(t)
	for i := range 3 {
		s.listCharge(fmt.Sprint("stxMOVE", i+1), chat, 100, paidAt.Add(time.Duration(i)*time.Minute), state.ReviewBeforeStore)
	}
	list := s.Command(s.b, admin, "charges", "")
	if _, err := s.b.Books().ResolveCharge(context.Background(), state.Actor{ID: owner2, Role: "owner", Via: state.ViaConsole}, "stxMOVE1", state.ChargeSettled); err != nil {
		t.Fatal(err)
	}
	second := s.Press(s.b, admin, list, "✅ Settled 2")
	if !strings.Contains(second.RawText, "stxMOVE2") || !strings.Contains(second.RawText, "Mark this payment settled?") {
		t.Fatalf("Settled 2 after the list moved:\n%s", bottest.Render(second))
	}
	back := s.Press(s.b, admin, second, "◀️ Back to the list")
	if strings.Contains(back.RawText, "stxMOVE1") || !strings.Contains(back.RawText, "<b>1.</b> <code>stxMOVE2</code>") {
		t.Fatalf("the list again:\n%s", back.RawText)
	}
	// The second owner's list, opened before admin settles its first charge.
	old := s.Command(s.b, owner2, "charges", "")
	if _, err := s.b.Books().ResolveCharge(context.Background(), state.Actor{ID: admin, Role: "owner", Via: state.ViaConsole}, "stxMOVE2", state.ChargeSettled); err != nil {
		t.Fatal(err)
	}
	gone := s.Press(s.b, owner2, old, "↩️ Refund 1")
	if !strings.Contains(gone.RawText, "stxMOVE2") || !strings.Contains(gone.RawText, fmt.Sprint("Settled by admin <code>", admin, "</code>")) ||
		bottest.HasButton(gone, locales.T(locales.En, "rep.btn.confirm")) {
		t.Fatalf("Refund of a charge settled meanwhile:\n%s", bottest.Render(gone))
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 0 {
		t.Fatalf("%d refund calls", n)
	}
	s.NoViolations()
}

// A refund decided for a charge whose order appears before the refund
// goes out (a late update made it) is not retried for ever: the retry
// finds the order, refunds nothing, and closes the decision as settled,
// so the charge leaves the refunds under way.
func TestDecidedRefundOfAChargeThatGotAnOrderIsClosedNotRetriedForEver(t *testing.T) {
	s := newChargesShop(t)
	ctx := context.Background()
	s.listCharge("stxLATE1", chat, 500, paidAt, state.ReviewQuoteGone)
	by := state.Actor{ID: owner2, Role: "owner", Via: state.ViaChat}
	if won, _, err := s.reviews.Resolve(ctx, "stxLATE1", state.ChargeResolution{Status: state.ChargeRefunding, By: by, At: time.Now().Add(-3 * time.Minute)}); err != nil || !won {
		t.Fatal(won, err)
	}
	orders := records.NewOrders(s.Rdb.Client, s.Rdb.Prefix)
	if _, _, err := orders.CreatePaid(ctx, &state.Order{ChargeID: "stxLATE1", UserID: chat, ChatID: chat, PayMethod: state.PayStars, Line: "giftcards", Stars: 500, PaidAt: paidAt}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.b.Books().FinishChargeRefunds(ctx); err != nil || n != 1 {
		t.Fatalf("the retry finished %d: %v", n, err)
	}
	if n, err := s.b.Books().FinishChargeRefunds(ctx); err != nil || n != 0 {
		t.Fatalf("a later retry finished %d: %v", n, err)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 0 {
		t.Fatalf("%d refund calls for a charge with an order", n)
	}
	rv, err := s.reviews.Get(ctx, "stxLATE1")
	if err != nil || rv.Resolution.Status != state.ChargeSettled || !rv.Resolution.HasOrder {
		t.Fatalf("review after: %+v %v", rv.Resolution, err)
	}
	if _, refunding, _ := s.reviews.Totals(ctx); refunding.N != 0 {
		t.Fatalf("%d refunds still under way", refunding.N)
	}
}
