package checkout_test

import (
	"context"
	"strings"
	"testing"

	"shopbot/bot/botapitest"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// A Mini App's Pay in Stars gets an invoice link whose payment settles as
// the chat's invoice does: the order is made from the successful_payment
// update alone, once, and the quote keeps its one link.
func TestInvoiceLinkPaymentMakesTheOrder(t *testing.T) {
	s := newPayShop(t, true, false)
	q := s.quote(2)
	ctx := context.Background()
	link, refusal, err := s.pay.InvoiceLink(ctx, s.env(), q.ID)
	if err != nil || refusal != "" || link == "" {
		t.Fatalf("InvoiceLink = %q, %q, %v", link, refusal, err)
	}
	calls := s.Fake.CallsFor("createInvoiceLink")
	if len(calls) != 1 || calls[0].String("payload") != "q:"+q.ID || calls[0].String("currency") != "XTR" {
		t.Fatalf("createInvoiceLink calls = %+v", calls)
	}
	if again, refusal, err := s.pay.InvoiceLink(ctx, s.env(), q.ID); again != link || refusal != "" || err != nil {
		t.Fatalf("asked again: %q, %q, %v", again, refusal, err)
	}
	if n := len(s.Fake.CallsFor("createInvoiceLink")); n != 1 {
		t.Fatalf("a second link was made (%d calls)", n)
	}
	s.noOrder(q.ID) // a link is not a payment
	res, err := s.Fake.PayLink(ctx, chat, link, botapitest.PayOptions{Duplicate: true})
	if err != nil || res.Declined || res.TotalAmount != q.Stars {
		t.Fatalf("PayLink = %+v, %v", res, err)
	}
	o := s.order(q.ID)
	if o.Status != state.OrderPaid || o.ChargeID != res.ChargeID || o.Stars != q.Stars || o.UserID != chat {
		t.Fatalf("order = %+v", o)
	}
	s.scheduled(o)
	s.Idle(s.b)
	if got := s.texts(chat, "Payment received"); len(got) != 1 {
		t.Fatalf("the buyer was told %d times: %q", len(got), got)
	}
	_, refusal, err = s.pay.InvoiceLink(ctx, s.env(), q.ID)
	if err != nil || refusal != locales.T(locales.En, "pay.already_paid", "order", o.ID) {
		t.Fatalf("paid quote: %q, %v", refusal, err)
	}
}

func TestInvoiceLinkRefusals(t *testing.T) {
	s := newPayShop(t, true, false)
	ctx := context.Background()
	en := func(key string) string { return locales.T(locales.En, key) }
	q := s.quote(1)
	other := s.env()
	other.User = flows.User{ID: chat + 1}
	if _, refusal, err := s.pay.InvoiceLink(ctx, other, q.ID); err != nil || refusal != en("pay.expired") {
		t.Fatalf("another buyer's quote: %q, %v", refusal, err)
	}
	if _, refusal, err := s.pay.InvoiceLink(ctx, s.env(), "nope"); err != nil || refusal != en("pay.expired") {
		t.Fatalf("unknown quote: %q, %v", refusal, err)
	}
	late := s.env()
	late.Now = q.Expires
	if _, refusal, err := s.pay.InvoiceLink(ctx, late, q.ID); err != nil || refusal != en("pay.expired") {
		t.Fatalf("expired quote: %q, %v", refusal, err)
	}
	// A quote whose invoice went to the chat is paid there.
	s.checkout(q)
	s.Wait("sendInvoice", 1)
	if _, refusal, err := s.pay.InvoiceLink(ctx, s.env(), q.ID); err != nil || refusal != en("pay.link_in_chat") {
		t.Fatalf("invoice in the chat: %q, %v", refusal, err)
	}
	if n := len(s.Fake.CallsFor("createInvoiceLink")); n != 0 {
		t.Fatalf("refused requests made %d links", n)
	}
}

func TestInvoiceLinkStarsOff(t *testing.T) {
	s := newPayShop(t, false, true)
	_, refusal, err := s.pay.InvoiceLink(context.Background(), s.env(), s.quote(1).ID)
	if err != nil || !strings.Contains(refusal, "Stars") {
		t.Fatalf("wallet-only shop: %q, %v", refusal, err)
	}
}
