package remind_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/bottest"
	"shopbot/bot/catalog"
	"shopbot/bot/remind"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
)

const chat = bottest.Chat

// clock is the shop's clock, moved by the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

const after = time.Hour

// harness is the shop's test harness with the upstream simulator's client.
type harness struct {
	*bottest.Harness
	client *reseller.Client
}

func newHarness(t *testing.T) *harness {
	h := bottest.New(t)
	srv := httptest.NewServer(resellersim.New(resellersim.Config{Seed: 1}))
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	return &harness{Harness: h, client: client}
}

// reminderShop is a shop with the product lines over the simulator whose
// quotes are reminded of an hour later, on clk.
func reminderShop(s *harness, clk *clock) *storefront.Shop {
	b := s.NewBot(func(o *storefront.Options) {
		o.Now = clk.Now
		o.Remind = remind.Options{After: after, Tick: 10 * time.Millisecond}
	})
	lines.Register(b.Engine, &flowshop.Shop{
		Catalog: catalog.New(s.client, nil, time.Minute),
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(s.Rdb.Client, s.Rdb.Prefix), Saved: b.Reminders.Quoted},
		Limiter: redisstore.NewLimiter(s.Rdb.Client, s.Rdb.Prefix, 100, time.Minute),
	})
	return b
}

// quote walks the buyer to the summary of one Apple card.
func quote(s *harness, b *storefront.Shop) {
	s.T.Helper()
	s.Command(b, chat, "start", "gc-"+simcatalog.DemoGiftCategory)
	s.Tap(b, "Apple Gift Card 10 USD")
	s.Say(b, "1")
	if m := s.Menu(); !strings.Contains(m.RawText, "Please check your order") {
		s.T.Fatalf("no summary: %q", m.RawText)
	}
}

func reminders(s *harness) int {
	n := 0
	for _, m := range s.BotMessages(chat) {
		if strings.Contains(m.RawText, "You left") {
			n++
		}
	}
	return n
}

// The buyer is reminded once, an hour after their latest unpaid quote,
// with buttons to open it again and to turn reminders off; after turning
// them off there is none.
func TestQuoteReminderOnceThenOff(t *testing.T) {
	s := newHarness(t)
	clk := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	b := reminderShop(s, clk)
	s.Run(b)
	s.Listening()

	quote(s, b)
	clk.Advance(after - time.Minute)
	s.Idle(b)
	if n := reminders(s); n != 0 {
		t.Fatalf("reminded %d times before the hour", n)
	}
	clk.Advance(2 * time.Minute)
	if !s.Until(func() bool { return reminders(s) == 1 }) {
		t.Fatal("never reminded")
	}
	m := s.WaitText(chat, "You left")
	if !strings.Contains(m.RawText, "<b>Apple Gift Card 10 USD</b>") || len(m.ReplyMarkup.Buttons()) != 2 ||
		m.ReplyMarkup.Buttons()[0].URL != "https://t.me/shopbot_test_bot?start=gc-"+simcatalog.DemoGiftCategory {
		t.Fatalf("reminder = %q %+v", m.RawText, m.ReplyMarkup.Buttons())
	}
	clk.Advance(3 * after)
	s.Idle(b)
	if n := reminders(s); n != 1 {
		t.Fatalf("reminded %d times", n)
	}

	// "No reminders", then a new quote: nothing.
	q, err := s.Fake.PressButton(chat, m.MessageID, locales.T(locales.En, "btn.remind_off"))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.WaitAnswer(q); a.Text != locales.T(locales.En, "remind.off_done") {
		t.Fatalf("off answered %q", a.Text)
	}
	quote(s, b)
	clk.Advance(2 * after)
	waitDone(s)
	if n := reminders(s); n != 1 {
		t.Fatalf("reminded %d times after turning them off", n)
	}
	s.NoViolations()
}

// waitDone waits until the buyer's reminder job is finished.
func waitDone(s *harness) {
	s.T.Helper()
	st := records.NewReminders(s.Rdb.Client, s.Rdb.Prefix)
	if !s.Until(func() bool { _, ok, err := st.Pending(context.Background(), chat); return err == nil && !ok }) {
		s.T.Fatal("the reminder job never finished")
	}
}

// A buyer who bought after the quote is not reminded.
func TestNoReminderAfterAPurchase(t *testing.T) {
	s := newHarness(t)
	clk := &clock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	b := reminderShop(s, clk)
	s.Run(b)
	s.Listening()
	quote(s, b)
	clk.Advance(time.Minute)
	item, _ := json.Marshal(state.Quote{Line: "giftcards", Category: simcatalog.DemoGiftCategory, Item: simcatalog.DemoGiftCard, Quantity: 1})
	paid := &state.Order{QuoteID: "other", ChatID: chat, UserID: chat, Line: "giftcards", Item: item, PayMethod: state.PayWallet,
		ChargeID: "pay:other", PaidAt: clk.Now(), UpstreamUSD: decimal.NewFromInt(10), ShopUSD: decimal.NewFromInt(11)}
	if _, _, err := records.NewOrders(s.Rdb.Client, s.Rdb.Prefix).CreatePaid(context.Background(), paid); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * after)
	waitDone(s)
	if n := reminders(s); n != 0 {
		t.Fatalf("reminded %d times after a purchase", n)
	}
}
