package books_test

import (
	"context"
	"errors"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// newTopupBooksShop is newBooksShop with both payment methods: buyers top
// up their wallet with Stars and pay from it.
func newTopupBooksShop(t *testing.T) *booksShop {
	h := newHarness(t)
	sim := resellersim.New(resellersim.Config{Seed: 1})
	client := simClient(t, sim, "test-key")
	b := h.NewBot(func(o *storefront.Options) {
		o.Admins, o.Reseller = []int64{admin}, client
		o.Fulfil = fulfil.Config{
			Tick: 10 * time.Millisecond, Lease: time.Second, PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond,
			Grace: 300 * time.Millisecond, AnsweredGrace: 100 * time.Millisecond, Settle: 300 * time.Millisecond,
			CodeSettle: 50 * time.Millisecond, StuckAfter: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		}
		o.Checkout = &checkout.Options{Stars: true, Wallet: true, Upstream: client}
		o.Books.ReconcileSettle = time.Millisecond
	})
	bottest.FakePace(b.API)
	sh := &shop.Shop{
		Catalog: catalog.New(client, work.NewCache(h.Rdb.Client, h.Rdb.Prefix), time.Minute),
		Pricing: shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true, ShowUSD: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(h.Rdb.Client, h.Rdb.Prefix)},
		Limiter: redisstore.NewLimiter(h.Rdb.Client, h.Rdb.Prefix, 100, time.Minute),
	}
	lines.Register(b.Engine, sh)
	return &booksShop{harness: h, sim: sim, b: b, orders: records.NewOrders(h.Rdb.Client, h.Rdb.Prefix)}
}

// topup asks for a top-up of the amount button label from /wallet and
// returns its invoice.
func (s *booksShop) topup(label string) types.Message {
	s.T.Helper()
	w := s.Command(s.b, chat, "wallet", "")
	s.Press(s.b, chat, w, bottest.En("wtopup.btn"))
	n := len(s.Fake.CallsFor("sendInvoice"))
	s.Press(s.b, chat, s.Menu(), label)
	s.Wait("sendInvoice", n+1)
	s.Idle(s.b)
	var inv types.Message
	for _, m := range s.Fake.MessagesIn(chat) {
		if m.Invoice != nil {
			inv = m
		}
	}
	return inv
}

// sweep runs the payment sweep, waiting out one already running.
func (s *booksShop) sweep() {
	s.T.Helper()
	var err error
	if !s.Until(func() bool {
		_, err = s.b.Checkout.Sweep(context.Background())
		return !errors.Is(err, checkout.ErrSweepBusy)
	}) || err != nil {
		s.T.Fatalf("sweep: %v", err)
	}
}

func amount(usdText string, stars int64) string {
	return bottest.En("wtopup.btn_amount", "usd", locales.Money(locales.En, usd(usdText)), "stars", locales.Stars(locales.En, stars))
}

// TestBooksAfterWalletTopups: a top-up paid, one whose update was lost
// (credited by the sweep) and one that could not be credited (refunded),
// then a wallet purchase. /reconcile says 0 unexplained; /stats shows the
// top-ups on their own line and counts only the purchase as revenue;
// /export ledger lists the credits with their note. A top-up credited and
// also refunded by another tool, and one neither credited nor refunded,
// are then listed.
func TestBooksAfterWalletTopups(t *testing.T) {
	s := newTopupBooksShop(t)
	s.Run(s.b)
	s.Listening()
	s.Wait("getStarTransactions", 1) // the start's sweep
	s.sweep()
	ctx := context.Background()
	// The store is older than the test's second (charges are dated in
	// whole seconds): a charge of this second is not older than the store.
	s.Rdb.Client.Set(ctx, s.Rdb.Prefix+redisstore.StoreEpochKey, time.Now().Add(-time.Hour).UnixMilli(), 0)
	wallets := records.NewWallets(s.Rdb.Client, s.Rdb.Prefix)

	paid, err := s.Fake.Pay(ctx, chat, s.topup(amount("50", 3847)).MessageID, botapitest.PayOptions{})
	if err != nil || paid.Declined {
		t.Fatalf("pay: %v %+v", err, paid)
	}
	lost, err := s.Fake.Pay(ctx, chat, s.topup(amount("10", 770)).MessageID, botapitest.PayOptions{LoseUpdate: true})
	if err != nil || lost.Declined {
		t.Fatalf("pay: %v %+v", err, lost)
	}
	gone, err := s.Fake.Pay(ctx, chat, s.topup(amount("5", 385)).MessageID, botapitest.PayOptions{LoseUpdate: true})
	if err != nil || gone.Declined {
		t.Fatalf("pay: %v %+v", err, gone)
	}
	id := strings.TrimPrefix(gone.Payload, "w:")
	s.Rdb.Client.Del(ctx, s.Rdb.Prefix+"{wallet:5001}:topup:"+id)
	s.sweep()
	if !s.Fake.Refunded(gone.ChargeID) {
		t.Fatal("the top-up that could not be credited was not refunded")
	}
	if !s.Until(func() bool { b, _ := wallets.Balance(ctx, chat); return b.Equal(usd("60")) }) {
		t.Fatal("the wallet never held $60")
	}

	// A purchase from the wallet: no invoice.
	invoices := len(s.Fake.CallsFor("sendInvoice"))
	s.Command(s.b, chat, "giftcards", "")
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	s.Tap(s.b, "Apple Gift Card 10 USD")
	s.Say(s.b, "1")
	s.Tap(s.b, bottest.En("btn.pay"))
	s.Tap(s.b, "👛")
	var o *state.Order
	if !s.Until(func() bool {
		list, err := s.orders.ListByUser(ctx, chat, 0, 1)
		if err != nil || len(list) == 0 {
			return false
		}
		o = list[0]
		return o.Status == state.OrderDelivered
	}) {
		t.Fatalf("the wallet order was never delivered: %+v", o)
	}
	s.Idle(s.b)
	if n := len(s.Fake.CallsFor("sendInvoice")); n != invoices || o.PayMethod != state.PayWallet {
		t.Fatalf("%d invoices, pay method %q", n-invoices, o.PayMethod)
	}

	rec := strings.ReplaceAll(s.Command(s.b, admin, "reconcile", "").RawText, "\u00a0", " ")
	for _, want := range []string{"1 orders of ours", "3 Star payments, 1 Star refunds", bottest.En("rep.rec.clean")} {
		if !strings.Contains(rec, want) {
			t.Fatalf("/reconcile lacks %q:\n%s", want, rec)
		}
	}

	stats := strings.ReplaceAll(s.Command(s.b, admin, "stats", "").RawText, "\u00a0", " ")
	today := statsSection(t, stats, "<b>Today</b>")
	money := func(d decimal.Decimal) string { return locales.Money(locales.En, d) }
	for _, want := range []string{
		"Wallet top-ups: 2 · 4,617 ⭐ ($60.02) → $60.00 credited",
		"Revenue: <b>" + money(o.ShopUSD) + "</b> = 0 ⭐ ($0.00) + wallets " + money(o.ShopUSD),
	} {
		if !strings.Contains(today, want) {
			t.Fatalf("/stats today lacks %q:\n%s", want, today)
		}
	}
	if !strings.Contains(stats, "never counted twice") {
		t.Fatalf("/stats does not explain top-ups:\n%s", stats)
	}

	_, rows := s.exportDoc(s.b, "ledger today")
	ref, amt, note := column(t, rows[0], "ref"), column(t, rows[0], "amount_usd"), column(t, rows[0], "note")
	credits := map[string]string{}
	for _, r := range rows[1:] {
		if strings.HasPrefix(r[ref], "topup:") {
			credits[r[ref]] = r[amt] + " " + r[note]
		}
	}
	if credits["topup:"+paid.ChargeID] != "50.0000 wallet top-up: 3847 Telegram Stars" ||
		credits["topup:"+lost.ChargeID] != "10.0000 wallet top-up: 770 Telegram Stars" || len(credits) != 2 {
		t.Fatalf("ledger export top-ups %v", credits)
	}

	// Someone credits the refunded top-up by hand, and a top-up payment
	// arrives that nothing settled yet.
	if _, _, err := wallets.Credit(ctx, chat, usd("5"), state.TopupRef(gone.ChargeID), "by hand", "admin:1"); err != nil {
		t.Fatal(err)
	}
	stray := s.Fake.AddStarPayment(chat, "w:5001-unsettled", 100, time.Now().Add(-time.Minute), "")
	rec = s.Command(s.b, admin, "reconcile", "").RawText
	if !strings.Contains(rec, "<code>"+gone.ChargeID+"</code>") || !strings.Contains(rec, "<b>and</b> refunded") ||
		!strings.Contains(rec, "<code>"+stray+"</code>") || !strings.Contains(rec, "neither credited nor refunded") {
		t.Fatalf("/reconcile:\n%s", rec)
	}
	s.NoViolations()
}
