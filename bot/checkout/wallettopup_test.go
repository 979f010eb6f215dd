package checkout_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/checkout"
	"shopbot/locales"
	"shopbot/state"
)

func usd(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// newTopupShop is a shop with both payment methods and wallet top-ups;
// pmod adjusts the payments' options.
func newTopupShop(t *testing.T, pmod func(*checkout.Options)) *payShop {
	t.Helper()
	return newPayShopWith(t, true, true, nil, pmod)
}

// openTopup sends /wallet from chatID, taps "➕ Top up" and returns the
// amounts screen.
func (s *payShop) openTopup(chatID int64) types.Message {
	s.T.Helper()
	w := s.Command(s.b, chatID, "wallet", "")
	s.Press(s.b, chatID, w, locales.T(locales.En, "wtopup.btn"))
	m, ok := s.Fake.LastMessage(chatID)
	if !ok || !strings.Contains(m.Text, "Top up your wallet") {
		s.T.Fatalf("amounts screen = %q", m.Text)
	}
	return m
}

// amountButton is the label of the amount button for usd.
func amountButton(usdText string, stars int64) string {
	return locales.T(locales.En, "wtopup.btn_amount", "usd", locales.Money(locales.En, usd(usdText)), "stars", locales.Stars(locales.En, stars))
}

// lastInvoiceIn returns the last invoice message in chatID.
func (s *payShop) lastInvoiceIn(chatID int64) types.Message {
	s.T.Helper()
	ms := s.Fake.MessagesIn(chatID)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Invoice != nil {
			return ms[i]
		}
	}
	s.T.Fatalf("no invoice in chat %d", chatID)
	return types.Message{}
}

// topupInvoice taps the amount button for usdText and returns the invoice.
func (s *payShop) topupInvoice(chatID int64, usdText string, stars int64) types.Message {
	s.T.Helper()
	m := s.openTopup(chatID)
	n := len(s.Fake.CallsFor("sendInvoice"))
	s.Press(s.b, chatID, m, amountButton(usdText, stars))
	s.Wait("sendInvoice", n+1)
	s.Idle(s.b)
	return s.lastInvoiceIn(chatID)
}

func (s *payShop) payIn(chatID int64, inv types.Message, opts botapitest.PayOptions) botapitest.PayResult {
	s.T.Helper()
	res, err := s.Fake.Pay(context.Background(), chatID, inv.MessageID, opts)
	if err != nil {
		s.T.Fatal(err)
	}
	return res
}

func (s *payShop) balance(user int64) decimal.Decimal {
	s.T.Helper()
	b, err := s.pay.Wallets.Balance(context.Background(), user)
	if err != nil {
		s.T.Fatal(err)
	}
	return b
}

// waitBalance waits until user's wallet holds want.
func (s *payShop) waitBalance(user int64, want string) {
	s.T.Helper()
	if !s.Until(func() bool { return s.balance(user).Equal(usd(want)) }) {
		s.T.Fatalf("balance %s, want %s", s.balance(user), want)
	}
}

// topupCredits counts the ledger's top-up entries of user.
func (s *payShop) topupCredits(user int64) int {
	s.T.Helper()
	es, err := s.pay.Wallets.Ledger(context.Background(), user, 0, 100)
	if err != nil {
		s.T.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if strings.HasPrefix(e.Ref, "topup:") {
			n++
		}
	}
	return n
}

// preCheckout pushes a pre_checkout_query from user for payload and
// total, and returns the bot's answer (ok, error message).
func (s *payShop) preCheckout(user int64, payload string, total int64) (bool, string) {
	s.T.Helper()
	id := fmt.Sprintf("pcqtest%d", time.Now().UnixNano())
	s.Fake.PushUpdate(types.Update{PreCheckoutQuery: &types.PreCheckoutQuery{
		ID: id, From: s.Fake.User(user), Currency: "XTR", TotalAmount: total, InvoicePayload: payload,
	}})
	var call calls.Call
	if !s.Until(func() bool {
		for _, c := range s.Fake.CallsFor("answerPreCheckoutQuery") {
			if c.String("pre_checkout_query_id") == id {
				call = c
				return true
			}
		}
		return false
	}) {
		s.T.Fatalf("pre-checkout query %s never answered", id)
	}
	return call.Bool("ok"), call.String("error_message")
}

// topupRecord creates a top-up directly in the store, as the flow does.
func (s *payShop) topupRecord(user int64, amount string, stars int64, expires time.Time) *state.WalletTopup {
	s.T.Helper()
	t := &state.WalletTopup{UserID: user, ChatID: user, USD: usd(amount), Stars: stars, Lang: "en", Created: time.Now(), Expires: expires}
	if err := s.pay.Wallets.CreateTopup(context.Background(), t); err != nil {
		s.T.Fatal(err)
	}
	return t
}

func TestWalletTopupByButtonCreditsTheWalletOnce(t *testing.T) {
	s := newTopupShop(t, nil)
	// $10 at STARS_USD_RATE 0.013: 769.23 rounded up to 770 Stars.
	inv := s.topupInvoice(chat, "10", 770)
	if inv.Invoice.Currency != "XTR" || inv.Invoice.TotalAmount != 770 || !strings.HasPrefix(inv.InvoicePayload, "w:") {
		t.Fatalf("invoice %+v payload %q", inv.Invoice, inv.InvoicePayload)
	}
	res := s.payIn(chat, inv, botapitest.PayOptions{Duplicate: true})
	if res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	s.waitBalance(chat, "10")
	told := s.WaitText(chat, "added to your wallet")
	if !strings.Contains(told.Text, "$10.00") || !strings.Contains(told.Text, "Balance: $10.00") {
		t.Fatalf("buyer told %q", told.Text)
	}
	s.Idle(s.b)
	if n := s.topupCredits(chat); n != 1 {
		t.Fatalf("%d top-up credits", n)
	}
	if got := s.texts(chat, "added to your wallet"); len(got) != 1 {
		t.Fatalf("buyer told %d times", len(got))
	}
	if s.Fake.Refunded(res.ChargeID) {
		t.Fatal("the top-up was refunded")
	}
	// The ledger entry: ref by the charge, a clear note.
	es, _ := s.pay.Wallets.Ledger(context.Background(), chat, 0, 1)
	if len(es) != 1 || es[0].Ref != "topup:"+res.ChargeID || !es[0].Amount.Equal(usd("10")) || !strings.Contains(es[0].Note, "770 Telegram Stars") {
		t.Fatalf("ledger %+v", es)
	}
	// /wallet names it.
	w := s.Command(s.b, chat, "wallet", "")
	if !strings.Contains(w.Text, locales.T(locales.En, "wtopup.kind")) || !strings.Contains(w.Text, "$10.00") {
		t.Fatalf("/wallet = %q", w.Text)
	}
	// The same invoice again: refused at the pre-checkout, nothing charged.
	if ok, msg := s.preCheckout(chat, inv.InvoicePayload, 770); ok || msg != locales.T(locales.En, "wtopup.refuse_paid") {
		t.Fatalf("paid top-up again: ok=%v %q", ok, msg)
	}
	s.NoViolations()
}

func TestWalletTopupTypedAmountAfterBadInput(t *testing.T) {
	s := newTopupShop(t, nil)
	s.openTopup(chat)
	for _, tc := range []struct{ text, want string }{
		{"ten dollars", "is not an amount"},
		{"0.50", "outside the limits"},
		{"500.01", "outside the limits"},
		{"12.345", "has more than 2 decimals"},
		{"-5", "is not an amount"},
	} {
		s.Say(s.b, tc.text)
		if got := s.texts(chat, tc.want); len(got) == 0 {
			t.Fatalf("%q: no %q in the chat", tc.text, tc.want)
		}
		if m := s.Menu(); !strings.Contains(m.Text, "Top up your wallet") {
			t.Fatalf("%q: the amounts are not shown again: %q", tc.text, m.Text)
		}
	}
	if n := len(s.Fake.CallsFor("sendInvoice")); n != 0 {
		t.Fatalf("%d invoices for bad amounts", n)
	}
	// Then a good one, with a decimal comma: $12.50 is 961.5, so 962 Stars.
	n := len(s.Fake.CallsFor("sendInvoice"))
	s.Fake.SendText(chat, "$12,50")
	s.Wait("sendInvoice", n+1)
	s.Idle(s.b)
	inv := s.lastInvoiceIn(chat)
	if inv.Invoice.TotalAmount != 962 {
		t.Fatalf("invoice of %d Stars", inv.Invoice.TotalAmount)
	}
	if m := s.Menu(); m.Invoice == nil || m.MessageID != inv.MessageID {
		t.Fatalf("the invoice is not the answer: %q", m.Text)
	}
	if res := s.payIn(chat, inv, botapitest.PayOptions{}); res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	s.waitBalance(chat, "12.50")
	s.NoViolations()
}

func TestWalletTopupPreCheckoutRefusals(t *testing.T) {
	const other = int64(5002)
	for _, tc := range []struct {
		name   string
		wallet bool
		setup  func(s *payShop) (payload string, total int64)
		want   string
	}{
		{"another buyer's top-up", true, func(s *payShop) (string, int64) {
			tp := s.topupRecord(other, "10", 770, time.Now().Add(15*time.Minute))
			return "w:" + tp.ID, 770
		}, "pay.refuse_unknown"},
		{"a made-up id", true, func(s *payShop) (string, int64) {
			return fmt.Sprintf("w:%d-feedface", chat), 770
		}, "pay.refuse_unknown"},
		{"expired", true, func(s *payShop) (string, int64) {
			tp := s.topupRecord(chat, "10", 770, time.Now().Add(-time.Minute))
			return "w:" + tp.ID, 770
		}, "wtopup.refuse_expired"},
		{"wrong amount", true, func(s *payShop) (string, int64) {
			tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
			return "w:" + tp.ID, 769
		}, "wtopup.refuse_amount"},
		{"wallet off", false, func(s *payShop) (string, int64) {
			tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
			return "w:" + tp.ID, 770
		}, "wtopup.refuse_off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPayShop(t, true, tc.wallet)
			payload, total := tc.setup(s)
			ok, msg := s.preCheckout(chat, payload, total)
			if ok || msg != locales.T(locales.En, tc.want) {
				t.Fatalf("ok=%v %q, want %q", ok, msg, locales.T(locales.En, tc.want))
			}
			if !s.balance(chat).IsZero() || !s.balance(other).IsZero() {
				t.Fatal("a refused top-up moved money")
			}
		})
	}
}

func TestWalletTopupOverTheBalanceBound(t *testing.T) {
	s := newTopupShop(t, func(o *checkout.Options) { o.Topup.MaxBalanceUSD = usd("30") })
	ctx := context.Background()
	inv := s.topupInvoice(chat, "10", 770)
	// Meanwhile an admin credit brings the balance to $25: $10 more would
	// pass the $30 bound. The pre-checkout refuses it.
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, usd("25"), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	res := s.payIn(chat, inv, botapitest.PayOptions{})
	want := locales.T(locales.En, "wtopup.refuse_limit", "max", "$30.00", "after", "$35.00")
	if !res.Declined || res.ErrorMessage != want {
		t.Fatalf("declined=%v %q, want %q", res.Declined, res.ErrorMessage, want)
	}
	// The amounts offered and typed stop at what fits.
	m := s.openTopup(chat)
	if !strings.Contains(m.Text, "from $1.00 to $5.00") || !bottestHas(m, amountButton("5", 385)) || bottestHas(m, amountButton("10", 770)) {
		t.Fatalf("amounts screen %q %+v", m.Text, m.ReplyMarkup.Buttons())
	}
	s.Say(s.b, "6")
	if got := s.texts(chat, "you can add up to $5.00"); len(got) != 1 {
		t.Fatalf("over the bound told %q", got)
	}
	// A payment that arrives anyway (no pre-checkout seen) is refunded
	// once, with the reason, and credits nothing.
	tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
	charge := s.Fake.PushSuccessfulPayment(chat, "w:"+tp.ID, 770, "")
	if !s.Until(func() bool { return s.Fake.Refunded(charge) }) {
		t.Fatal("not refunded")
	}
	s.Fake.PushSuccessfulPayment(chat, "w:"+tp.ID, 770, charge)
	s.Idle(s.b)
	if n := s.sweep(); n != 0 {
		t.Fatalf("sweep repaired %d", n)
	}
	if got := s.texts(chat, "would hold more than $30.00"); len(got) != 1 {
		t.Fatalf("buyer told %q", got)
	}
	if !s.balance(chat).Equal(usd("25")) || s.topupCredits(chat) != 0 {
		t.Fatalf("balance %s, %d top-up credits", s.balance(chat), s.topupCredits(chat))
	}
}

func bottestHas(m types.Message, label string) bool {
	for _, b := range m.ReplyMarkup.Buttons() {
		if b.Text == label {
			return true
		}
	}
	return false
}

func TestWalletTopupLostUpdateIsCreditedByTheSweepOnce(t *testing.T) {
	s := newTopupShop(t, nil)
	s.startedSweep()
	inv := s.topupInvoice(chat, "25", 1924)
	res := s.payIn(chat, inv, botapitest.PayOptions{LoseUpdate: true})
	s.Idle(s.b)
	if !s.balance(chat).IsZero() {
		t.Fatal("credited without an update")
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	s.waitBalance(chat, "25")
	s.WaitText(chat, "added to your wallet")
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
	// The real update arrives late: nothing changes.
	s.Fake.PushSuccessfulPayment(chat, res.Payload, res.TotalAmount, res.ChargeID)
	s.Idle(s.b)
	if !s.balance(chat).Equal(usd("25")) || s.topupCredits(chat) != 1 {
		t.Fatalf("balance %s, %d credits", s.balance(chat), s.topupCredits(chat))
	}
	if got := s.texts(chat, "added to your wallet"); len(got) != 1 {
		t.Fatalf("buyer told %d times", len(got))
	}
	if s.Fake.Refunded(res.ChargeID) {
		t.Fatal("refunded")
	}
}

func TestWalletTopupThatCannotBeCreditedIsRefundedOnce(t *testing.T) {
	s := newTopupShop(t, nil)
	s.startedSweep()
	ctx := context.Background()
	inv := s.topupInvoice(chat, "5", 385)
	res := s.payIn(chat, inv, botapitest.PayOptions{LoseUpdate: true})
	// The record is gone (lost with a Redis, or dropped long after).
	id := strings.TrimPrefix(res.Payload, "w:")
	if err := s.Rdb.Client.Del(ctx, s.Rdb.Prefix+"{wallet:"+itoa(chat)+"}:topup:"+id).Err(); err != nil {
		t.Fatal(err)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	if !s.Fake.Refunded(res.ChargeID) {
		t.Fatal("not refunded")
	}
	for range 2 {
		if n := s.sweep(); n != 0 {
			t.Fatalf("another sweep repaired %d", n)
		}
	}
	// A late real update neither credits nor refunds again.
	s.Fake.PushSuccessfulPayment(chat, res.Payload, res.TotalAmount, res.ChargeID)
	s.Idle(s.b)
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 {
		t.Fatalf("%d refund calls", n)
	}
	if !s.balance(chat).IsZero() || s.topupCredits(chat) != 0 {
		t.Fatal("a refunded top-up was credited")
	}
	if got := s.texts(chat, "could not match your payment"); len(got) != 1 {
		t.Fatalf("buyer told %q", got)
	}
}

func TestWalletTopupPaidWithTheWalletOffIsRefunded(t *testing.T) {
	s := newPayShop(t, true, false) // the wallet was turned off after the invoice
	s.startedSweep()
	tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
	charge := s.Fake.PushSuccessfulPayment(chat, "w:"+tp.ID, 770, "")
	if !s.Until(func() bool { return s.Fake.Refunded(charge) }) {
		t.Fatal("not refunded")
	}
	s.sweep()
	s.Idle(s.b)
	if got := s.texts(chat, "top-ups are turned off"); len(got) != 1 {
		t.Fatalf("buyer told %q", got)
	}
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 || !s.balance(chat).IsZero() {
		t.Fatalf("%d refunds, balance %s", n, s.balance(chat))
	}
}

// A crash after the credit, before the buyer heard of it (and before it
// was listed for the reports); meanwhile the record is gone and the
// wallet turned off. The sweep finishes the credit's job and never
// refunds it: the first decision about a charge is final.
func TestWalletTopupCreditedBeforeACrashIsNeverRefunded(t *testing.T) {
	s := newTopupShop(t, nil)
	s.startedSweep()
	ctx := context.Background()
	tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
	charge := s.Fake.AddStarPayment(chat, "w:"+tp.ID, 770, time.Now(), "")
	// What the process did before it died: the credit, nothing after it.
	out, err := s.pay.Wallets.SettleTopup(ctx, state.TopupCharge{ChargeID: charge, Payer: chat, TopupID: tp.ID, Stars: 770, PaidAt: time.Now()},
		state.TopupRules{WalletOn: true, Grace: time.Minute})
	if err != nil || !out.Credited || !out.Fresh {
		t.Fatalf("credit %+v %v", out, err)
	}
	s.Rdb.Client.Del(ctx, s.Rdb.Prefix+"wallet-topups")
	s.Rdb.Client.Del(ctx, s.Rdb.Prefix+"{wallet:"+itoa(chat)+"}:topup:"+tp.ID)
	// Decided again with the wallet off and the record gone: still credited.
	again, err := s.pay.Wallets.SettleTopup(ctx, state.TopupCharge{ChargeID: charge, Payer: chat, TopupID: tp.ID, Stars: 770, PaidAt: time.Now()},
		state.TopupRules{WalletOn: false})
	if err != nil || !again.Credited || again.Fresh || again.Refund != "" {
		t.Fatalf("decided again: %+v %v", again, err)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	s.WaitText(chat, "added to your wallet")
	if s.Fake.Refunded(charge) || !s.balance(chat).Equal(usd("10")) || s.topupCredits(chat) != 1 {
		t.Fatalf("refunded=%v balance %s", s.Fake.Refunded(charge), s.balance(chat))
	}
	if paid, _ := s.pay.Wallets.PaidTopups(ctx, time.Now().Add(-time.Hour)); len(paid) != 1 || paid[0].ChargeID != charge {
		t.Fatalf("reports list %+v", paid)
	}
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
}

// A refund decided (the balance was over the bound), then a crash or a
// failed refundStarPayment before the Stars went back. The buyer spends
// meanwhile, so the payment would now fit: the retry still refunds it and
// never credits it.
func TestWalletTopupRefundDecidedBeforeACrashIsNeverCredited(t *testing.T) {
	s := newTopupShop(t, func(o *checkout.Options) { o.Topup.MaxBalanceUSD = usd("30") })
	s.startedSweep()
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, usd("25"), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
	s.Fake.FailNext("refundStarPayment", 1, 400, "Bad Request: BALANCE_TOO_LOW", 0)
	charge := s.Fake.PushSuccessfulPayment(chat, "w:"+tp.ID, 770, "")
	if !s.Until(func() bool { return len(s.Fake.CallsFor("refundStarPayment")) == 1 }) {
		t.Fatal("no refund tried")
	}
	s.Idle(s.b)
	if s.Fake.Refunded(charge) {
		t.Fatal("the failed refund went through")
	}
	if why, _ := s.pay.Wallets.TopupRefundDecided(ctx, chat, charge); why != state.TopupRefundLimit {
		t.Fatalf("decision %q", why)
	}
	if _, err := s.pay.Wallets.Debit(ctx, chat, usd("20"), "pay:quote:spent", "order"); err != nil {
		t.Fatal(err)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	if !s.Fake.Refunded(charge) || !s.balance(chat).Equal(usd("5")) || s.topupCredits(chat) != 0 {
		t.Fatalf("refunded=%v balance %s credits %d", s.Fake.Refunded(charge), s.balance(chat), s.topupCredits(chat))
	}
	// The late update again: nothing.
	s.Fake.PushSuccessfulPayment(chat, "w:"+tp.ID, 770, charge)
	s.Idle(s.b)
	if s.sweep() != 0 || s.topupCredits(chat) != 0 || len(s.texts(chat, "would hold more than")) != 1 {
		t.Fatal("a refunded top-up moved again")
	}
}

// A second charge for a top-up another charge credited is refunded; the
// first stays credited.
func TestWalletTopupSecondChargeIsRefunded(t *testing.T) {
	s := newTopupShop(t, nil)
	inv := s.topupInvoice(chat, "5", 385)
	first := s.payIn(chat, inv, botapitest.PayOptions{})
	s.waitBalance(chat, "5")
	second := s.Fake.PushSuccessfulPayment(chat, first.Payload, 385, "")
	if !s.Until(func() bool { return s.Fake.Refunded(second) }) {
		t.Fatal("second charge not refunded")
	}
	s.Idle(s.b)
	if s.Fake.Refunded(first.ChargeID) || !s.balance(chat).Equal(usd("5")) {
		t.Fatalf("first refunded=%v balance %s", s.Fake.Refunded(first.ChargeID), s.balance(chat))
	}
	if got := s.texts(chat, "second payment"); len(got) != 1 {
		t.Fatalf("buyer told %q", got)
	}
}

func TestWalletPurchaseAfterATopupNeedsNoInvoice(t *testing.T) {
	s := newTopupShop(t, nil)
	inv := s.topupInvoice(chat, "50", 3847)
	s.payIn(chat, inv, botapitest.PayOptions{})
	s.waitBalance(chat, "50")
	invoices := len(s.Fake.CallsFor("sendInvoice"))
	s.Fake.SendCommand(chat, "giftcards", "")
	s.WaitText(chat, "Gift cards")
	s.Idle(s.b)
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	s.Tap(s.b, "Apple Gift Card 10 USD")
	s.Say(s.b, "1")
	s.Tap(s.b, locales.T(locales.En, "btn.pay"))
	s.Tap(s.b, "👛")
	m := s.Menu()
	if !strings.Contains(m.Text, "Paid from your wallet") {
		t.Fatalf("after the wallet button: %q", m.Text)
	}
	if n := len(s.Fake.CallsFor("sendInvoice")); n != invoices {
		t.Fatalf("%d invoices for a wallet purchase", n-invoices)
	}
	list, err := s.pay.Orders.ListByUser(context.Background(), chat, 0, 5)
	if err != nil || len(list) != 1 || list[0].PayMethod != state.PayWallet {
		t.Fatalf("orders %+v %v", list, err)
	}
	want := usd("50").Sub(list[0].ShopUSD)
	if !s.balance(chat).Equal(want) {
		t.Fatalf("balance %s, want %s", s.balance(chat), want)
	}
}

// TestWalletTopupUnpaidRecordExpiresSoonAfterItsInvoice: an unpaid top-up
// record lives as long as its invoice plus state.TopupUnpaidKeep, not
// weeks; a payment that comes after the record is gone is refunded
// exactly once (its update, again, and the sweep) and credits nothing;
// a paid record is kept state.TopupKeep.
func TestWalletTopupUnpaidRecordExpiresSoonAfterItsInvoice(t *testing.T) {
	s := newTopupShop(t, nil)
	s.startedSweep()
	ctx := context.Background()
	s.topupInvoice(chat, "5", 385)
	keys, err := s.Rdb.Client.Keys(ctx, s.Rdb.Prefix+"{wallet:"+itoa(chat)+"}:topup:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("top-up records %q, %v", keys, err)
	}
	key := keys[0]
	id := key[strings.LastIndex(key, ":topup:")+len(":topup:"):]
	ttl := s.Rdb.Client.PTTL(ctx, key).Val()
	if most := 15*time.Minute + state.TopupUnpaidKeep; ttl <= 15*time.Minute || ttl > most {
		t.Fatalf("an unpaid record is kept %s, want at most %s", ttl, most)
	}
	if s.Rdb.Mini != nil {
		s.Rdb.Mini.FastForward(ttl + time.Second)
	} else {
		s.Rdb.Client.Del(ctx, key)
	}
	if n := s.Rdb.Client.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the unpaid record outlived its keep")
	}

	// The buyer pays the old invoice late.
	charge := s.Fake.PushSuccessfulPayment(chat, "w:"+id, 385, "")
	if !s.Until(func() bool { return s.Fake.Refunded(charge) }) {
		t.Fatal("a late payment was not refunded")
	}
	s.Idle(s.b)
	s.Fake.PushSuccessfulPayment(chat, "w:"+id, 385, charge) // the same update again
	s.Idle(s.b)
	for range 2 {
		if n := s.sweep(); n != 0 {
			t.Fatalf("a sweep repaired %d", n)
		}
	}
	refunds := 0
	for _, c := range s.Fake.CallsFor("refundStarPayment") {
		if c.String("telegram_payment_charge_id") == charge {
			refunds++
		}
	}
	if refunds != 1 || !s.balance(chat).IsZero() || s.topupCredits(chat) != 0 {
		t.Fatalf("%d refunds, balance %s, %d credits", refunds, s.balance(chat), s.topupCredits(chat))
	}
	if got := s.texts(chat, "could not match your payment"); len(got) != 1 {
		t.Fatalf("buyer told %q", got)
	}

	// A paid record is kept as long as the sweep reads back.
	inv := s.topupInvoice(chat, "10", 770)
	s.payIn(chat, inv, botapitest.PayOptions{})
	s.waitBalance(chat, "10")
	keys, _ = s.Rdb.Client.Keys(ctx, s.Rdb.Prefix+"{wallet:"+itoa(chat)+"}:topup:*").Result()
	if len(keys) != 1 {
		t.Fatalf("top-up records %q", keys)
	}
	if ttl := s.Rdb.Client.PTTL(ctx, keys[0]).Val(); ttl < state.TopupKeep-time.Hour {
		t.Fatalf("a paid record is kept %s, want %s", ttl, state.TopupKeep)
	}
}
