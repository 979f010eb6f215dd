package checkout_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/state"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func clockShop(t *testing.T, clk *testClock) *payShop {
	return newPayShopWith(t, true, false, func(o *storefront.Options) { o.Now = clk.Now }, nil)
}

// markSending leaves what a replica killed between marking the invoice and
// sending it leaves behind.
func (s *payShop) markSending(quoteID string, at time.Time) {
	s.T.Helper()
	err := s.Rdb.Client.HSet(context.Background(), s.Rdb.Prefix+"pay:q:"+quoteID, "inv", "sending", "inv_at", strconv.FormatInt(at.UnixMilli(), 10)).Err()
	if err != nil {
		s.T.Fatal(err)
	}
}

func TestKilledBetweenMarkingAndSendingInvoiceLetsBuyerPayAgain(t *testing.T) {
	clk := newTestClock()
	s := clockShop(t, clk)
	q := s.quote(1)
	s.markSending(q.ID, clk.Now())
	// Within the bound, the invoice may still be on its way.
	if r := s.checkout(q); r.Answer != locales.T(locales.En, "pay.invoice_sending") {
		t.Fatalf("Pay while sending answered %q", r.Answer)
	}
	clk.Advance(29 * time.Second)
	if r := s.checkout(q); r.Answer != locales.T(locales.En, "pay.invoice_sending") {
		t.Fatalf("Pay 29 s later answered %q", r.Answer)
	}
	if n := len(s.Fake.CallsFor("sendInvoice")); n != 0 {
		t.Fatalf("%d invoices while one was being sent", n)
	}
	// No message id after the bound: the invoice is taken for lost.
	clk.Advance(2 * time.Second)
	if r := s.checkout(q); r.Answer != locales.T(locales.En, "pay.invoice_sent") {
		t.Fatalf("Pay after the bound answered %q", r.Answer)
	}
	if n := len(s.Fake.CallsFor("sendInvoice")); n != 1 {
		t.Fatalf("%d invoices", n)
	}
	// Now it is in the chat, and it pays.
	clk.Advance(time.Minute)
	if r := s.checkout(q); r.Answer != locales.T(locales.En, "pay.invoice_again") {
		t.Fatalf("Pay after sending answered %q", r.Answer)
	}
	res := s.payInvoice(botapitest.PayOptions{})
	if res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	if o := s.order(q.ID); o.ChargeID != res.ChargeID {
		t.Fatalf("order %+v", o)
	}
}

func TestTwoInvoicesOfOneQuoteMakeOneOrder(t *testing.T) {
	clk := newTestClock()
	s := clockShop(t, clk)
	s.startedSweep()
	q := s.quote(1)
	s.checkout(q)
	first := s.invoice()
	// The replica that sent it died before recording its message id.
	s.markSending(q.ID, clk.Now())
	clk.Advance(31 * time.Second)
	if r := s.checkout(q); r.Answer != locales.T(locales.En, "pay.invoice_sent") {
		t.Fatalf("Pay after the bound answered %q", r.Answer)
	}
	second := s.invoice()
	if second.MessageID == first.MessageID {
		t.Fatal("no fresh invoice")
	}
	// The buyer pays both: the first one's update is lost, the sweep finds it.
	ctx := context.Background()
	lost, err := s.Fake.Pay(ctx, chat, first.MessageID, botapitest.PayOptions{LoseUpdate: true})
	if err != nil || lost.Declined {
		t.Fatalf("first: %+v %v", lost, err)
	}
	paid, err := s.Fake.Pay(ctx, chat, second.MessageID, botapitest.PayOptions{})
	if err != nil || paid.Declined {
		t.Fatalf("second: %+v %v", paid, err)
	}
	o := s.order(q.ID)
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	if !s.Fake.Refunded(lost.ChargeID) || s.Fake.Refunded(paid.ChargeID) {
		t.Fatalf("refunded: lost %v, paid %v", s.Fake.Refunded(lost.ChargeID), s.Fake.Refunded(paid.ChargeID))
	}
	if n, _ := s.pay.Orders.CountByUser(ctx, chat); n != 1 || o.ChargeID != paid.ChargeID {
		t.Fatalf("%d orders, order %+v", n, o)
	}
}

// After /cancel on the summary ("Nothing was charged"), the invoice left
// in the chat is refused at pre-checkout with the reason, and no order is
// made; the Cancel button does the same.
func TestInvoiceAfterCancelIsRefused(t *testing.T) {
	for _, how := range []string{"command", "button"} {
		t.Run(how, func(t *testing.T) {
			s := newPayShop(t, true, false)
			s.toSummary()
			q := s.payQuote()
			if how == "command" {
				s.Command(s.b, chat, "cancel", "")
			} else {
				var summary types.Message
				for _, m := range s.BotMessages(chat) {
					if strings.Contains(m.Text, "Please check your order") {
						summary = m
					}
				}
				s.Press(s.b, chat, summary, en("btn.cancel"))
			}
			if len(s.texts(chat, "Cancelled. Nothing was charged.")) == 0 && how == "command" {
				t.Fatal("no cancel notice")
			}
			res := s.payInvoice(botapitest.PayOptions{})
			if !res.Declined || res.ErrorMessage != en("pay.refuse_cancelled") {
				t.Fatalf("declined=%v %q", res.Declined, res.ErrorMessage)
			}
			s.Idle(s.b)
			if _, err := s.pay.Orders.ByQuote(context.Background(), q.ID); !errors.Is(err, state.ErrOrderNotFound) {
				t.Fatalf("an order for the cancelled quote: %v", err)
			}
			s.NoViolations()
		})
	}
}

// The invoice of two cards says "× 2" once and no "quantity" beside it.
func TestInvoiceNamesTheQuantityOnce(t *testing.T) {
	s := newPayShop(t, true, false)
	s.toSummary()
	s.payQuote()
	inv := s.invoice()
	if d := inv.Invoice.Description; d != "Apple Gift Card 10 USD × 2. Delivered in this chat right after payment." {
		t.Fatalf("description %q", d)
	}
}
