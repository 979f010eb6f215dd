package books_test

import (
	"context"
	"net/http"
	"net/url"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/books"
	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// booksShop is the whole shop with Stars payments, the upstream simulator
// and the gift-card line, for the reconciliation tests. The
// reconciliation counts anything unmatched for a millisecond (the tests
// run it once the shop is idle); mod adjusts the admin options.
type booksShop struct {
	*harness
	sim    *resellersim.Sim
	b      *storefront.Shop
	orders *records.Orders
}

func newBooksShop(t *testing.T, mod func(*books.Options)) *booksShop {
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
		o.Checkout = &checkout.Options{Stars: true, Upstream: client}
		o.Books.ReconcileSettle = time.Millisecond
		if mod != nil {
			mod(&o.Books)
		}
	})
	bottest.FakePace(b.API)
	sh := &shop.Shop{
		Catalog: catalog.New(client, work.NewCache(h.Rdb.Client, h.Rdb.Prefix), time.Minute),
		Pricing: shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(h.Rdb.Client, h.Rdb.Prefix)},
		Limiter: redisstore.NewLimiter(h.Rdb.Client, h.Rdb.Prefix, 100, time.Minute),
	}
	lines.Register(b.Engine, sh)
	return &booksShop{harness: h, sim: sim, b: b, orders: records.NewOrders(h.Rdb.Client, h.Rdb.Prefix)}
}

// buy buys n Apple gift cards with Stars as the buyer does and waits until
// the order is delivered.
func (s *booksShop) buy(n int) *state.Order {
	s.T.Helper()
	invoices := len(s.Fake.CallsFor("sendInvoice"))
	s.Command(s.b, chat, "giftcards", "")
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	s.Tap(s.b, "Apple Gift Card 10 USD")
	s.Say(s.b, strconv.Itoa(n))
	s.Tap(s.b, bottest.En("btn.pay"))
	s.Wait("sendInvoice", invoices+1)
	var inv types.Message
	for _, m := range s.Fake.MessagesIn(chat) {
		if m.Invoice != nil {
			inv = m
		}
	}
	res, err := s.Fake.Pay(context.Background(), chat, inv.MessageID, botapitest.PayOptions{})
	if err != nil || res.Declined {
		s.T.Fatalf("payment: %v %q", err, res.ErrorMessage)
	}
	var o *state.Order
	if !s.Until(func() bool {
		o, err = s.orders.ByCharge(context.Background(), res.ChargeID)
		return err == nil && o.Status == state.OrderDelivered
	}) {
		s.T.Fatalf("the order of charge %s was never delivered: %+v %v", res.ChargeID, o, err)
	}
	s.WaitText(chat, "<code>"+o.Codes[0]+"</code>")
	// The delivery ends with the question to rate it, after the codes.
	s.WaitText(chat, bottest.En("review.ask", "id", o.ID, "item", "Apple Gift Card 10 USD"))
	s.Idle(s.b)
	return o
}

// orphan creates an upstream order as another client of the account would:
// no order of ours claims it.
func (s *booksShop) orphan() int {
	s.T.Helper()
	u, err := s.sim.PlaceOtherClientOrder("/gift-cards/order", map[string]any{
		"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1,
	})
	if err != nil {
		s.T.Fatal(err)
	}
	return u.Number
}

// TestReconcileCleanThenOrphanAndUnrecordedCharge: after a clean run of
// Stars purchases /reconcile says 0 unexplained; an upstream order no
// order claims, a Star payment the shop never recorded and a delivered
// order's payment refunded by hand are then each listed, once, with what
// to do; the report is in the admin's language; a bad window gets the
// usage.
func TestReconcileCleanThenOrphanAndUnrecordedCharge(t *testing.T) {
	s := newBooksShop(t, nil)
	s.Run(s.b)
	s.Listening()
	var first *state.Order
	for _, n := range []int{1, 2, 3} {
		if o := s.buy(n); first == nil {
			first = o
		}
	}
	m := s.Command(s.b, admin, "reconcile", "")
	text := strings.ReplaceAll(m.RawText, "\u00a0", " ")
	for _, want := range []string{"Reconciliation", "3 orders of ours, 3 upstream orders, 3 upstream order debits, 3 Star payments, 0 Star refunds", bottest.En("rep.rec.clean")} {
		if !strings.Contains(text, want) {
			t.Fatalf("after a clean run /reconcile lacks %q:\n%s", want, text)
		}
	}

	number := s.orphan()
	charge := s.Fake.AddStarPayment(chat, "q:never-recorded", 250, time.Now().Add(-time.Minute), "")
	// Someone refunds a delivered order's payment with another tool.
	resp, err := http.PostForm(s.Fake.URL()+"/bot"+s.Fake.Token()+"/refundStarPayment",
		url.Values{"user_id": {strconv.FormatInt(chat, 10)}, "telegram_payment_charge_id": {first.ChargeID}})
	if err != nil || resp.StatusCode != http.StatusOK || !s.Fake.Refunded(first.ChargeID) {
		t.Fatalf("refund by hand: %v %v", err, resp)
	}
	resp.Body.Close()
	m = s.Command(s.b, admin, "reconcile", "24h")
	text = strings.ReplaceAll(m.RawText, "\u00a0", " ")
	for _, want := range []string{
		"<b>3 unexplained</b>",
		"Telegram refunded <code>" + first.ChargeID + "</code> (" + strconv.FormatInt(first.Stars, 10) + " ⭐, ",
		"no refunded order of ours explains it",
		"Upstream order #" + strconv.Itoa(number) + " (gift_card, $",
		"belongs to no order of ours → check it in the reseller dashboard",
		"Star payment <code>" + charge + "</code> (250 ⭐ from user " + strconv.FormatInt(chat, 10),
		"has no order and no refund →",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/reconcile lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, bottest.En("rep.rec.clean")) || strings.Count(text, "\n• ") != 3 {
		t.Errorf("want exactly the three items:\n%s", text)
	}

	s.Fake.SetUser(admin, types.User{ID: admin, FirstName: "Адмін", LanguageCode: "uk"})
	m = s.Command(s.b, admin, "reconcile", "2h")
	if !strings.Contains(m.RawText, "3 непояснені записи") || !strings.Contains(m.RawText, "не належить жодному нашому замовленню") {
		t.Errorf("/reconcile in Ukrainian:\n%s", m.RawText)
	}
	for _, bad := range []string{"yesterday", "31d", "0h", "-5m"} {
		m := s.Command(s.b, admin, "reconcile", bad)
		if !strings.Contains(m.RawText, "/reconcile [період]") {
			t.Errorf("/reconcile %s answered %q", bad, m.RawText)
		}
	}
	if m := s.Command(s.b, chat, "reconcile", ""); m.RawText != bottest.En("err.unknown_command") {
		t.Errorf("a buyer's /reconcile got %q", m.RawText)
	}
	s.NoViolations()
}

// TestDailyReconcileAlertsOnce: the durable job runs again and again (every
// 50 ms here, over the last hour) and tells the admins about an orphan
// upstream order and an unrecorded charge in one alert, once; a new item
// later alerts again, alone.
func TestDailyReconcileAlertsOnce(t *testing.T) {
	s := newBooksShop(t, func(o *books.Options) {
		o.ReconcileEvery, o.ReconcileWindow = 50*time.Millisecond, time.Hour
	})
	number := s.orphan()
	charge := s.Fake.AddStarPayment(chat, "gift:someone-else", 40, time.Now().Add(-time.Minute), "")
	runs := func() int {
		run, _ := work.NewReconcileRuns(s.Rdb.Client, s.Rdb.Prefix).Last(context.Background())
		return int(run.Runs)
	}
	alerts := func() []string {
		var out []string
		for _, m := range s.BotMessages(admin) {
			if strings.Contains(m.RawText, "Daily reconciliation") {
				out = append(out, m.RawText)
			}
		}
		return out
	}
	s.Run(s.b)
	if !s.Until(func() bool { return runs() >= 3 }) {
		t.Fatalf("the job ran %d times", runs())
	}
	got := alerts()
	if len(got) != 1 {
		t.Fatalf("%d alerts after %d runs: %q", len(got), runs(), got)
	}
	for _, want := range []string{"2 unexplained, new:", "Upstream order #" + strconv.Itoa(number), "Star payment <code>" + charge + "</code>", "is for no invoice of the shop"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("the alert lacks %q:\n%s", want, got[0])
		}
	}
	second := s.orphan()
	if !s.Until(func() bool { return len(alerts()) == 2 }) {
		t.Fatalf("a new orphan did not alert: %q", alerts())
	}
	after := runs()
	if !s.Until(func() bool { return runs() >= after+3 }) {
		t.Fatal("the job stopped")
	}
	got = alerts()
	if len(got) != 2 || !strings.Contains(got[1], "3 unexplained, new:") || !strings.Contains(got[1], "#"+strconv.Itoa(second)) ||
		strings.Contains(got[1], "#"+strconv.Itoa(number)+" ") {
		t.Fatalf("alerts %q", got)
	}
	s.NoViolations()
}
