package restock_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/catalog"
	"shopbot/bot/restock"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
)

const chat = bottest.Chat

// replica is one shop process with the product lines (over the upstream
// uncached: a restock shows at the next check) and the restock checks
// every few milliseconds.
func replica(s *shoptest.Shop) *storefront.Shop {
	cat := catalog.New(s.Client, nil, time.Minute)
	b := s.NewBot(func(o *storefront.Options) {
		o.Restock = restock.Options{Catalog: cat, Every: 20 * time.Millisecond}
	})
	lines.Register(b.Engine, &flowshop.Shop{
		Catalog: cat,
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Limiter: redisstore.NewLimiter(s.Rdb.Client, s.Rdb.Prefix, 100, time.Minute),
		Restock: catalog.Restock{Store: records.NewRestock(s.Rdb.Client, s.Rdb.Prefix)},
	})
	return b
}

// A buyer who asks to be told about a sold-out card gets one message when
// it is back, though two replicas check it; asking twice watches once;
// the watch then ends (a later sell-out and restock tells nothing).
func TestBackInStockToldOnceAcrossReplicas(t *testing.T) {
	s := shoptest.New(t)
	one, two := replica(s), replica(s)
	s.Run(one)
	s.Listening()
	s.Run(two) // its intake polls too; either may take an update

	s.Command(one, chat, "start", "gc-"+simcatalog.DemoGiftCategory)
	m := s.Menu()
	label := ""
	for _, b := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(b.Text, "🔔") {
			label = b.Text
		}
	}
	if label == "" || !strings.Contains(label, "Apple Gift Card 5 USD") {
		t.Fatalf("no notify button on %q: %+v", m.RawText, m.ReplyMarkup.Buttons())
	}
	q, err := s.Fake.PressButton(chat, m.MessageID, label)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.WaitAnswer(q); !a.ShowAlert || !strings.Contains(a.Text, "message you once") {
		t.Fatalf("notify answered %+v", a)
	}
	q, _ = s.Fake.PressButton(chat, m.MessageID, label)
	if a := s.WaitAnswer(q); !strings.Contains(a.Text, "already") {
		t.Fatalf("second press answered %+v", a)
	}

	// Both replicas check every 20 ms; the card comes back.
	s.Sim.SetStock(simcatalog.DemoGiftCardOutOfStock, 5)
	back := func() int { return s.CountMessages(chat, "is back in stock") }
	if !s.Until(func() bool { return back() == 1 }) {
		t.Fatal("the buyer was never told")
	}
	store := records.NewRestock(s.Rdb.Client, s.Rdb.Prefix)
	if !s.Until(func() bool { items, _ := store.Items(context.Background(), 10); return len(items) == 0 }) {
		t.Fatal("the watch did not end")
	}
	// The card sells out and comes back: the watch has ended, nothing more
	// is said (the checks run on, every 20 ms, on both replicas).
	s.Sim.SetStock(simcatalog.DemoGiftCardOutOfStock, 0)
	s.Sim.SetStock(simcatalog.DemoGiftCardOutOfStock, 5)
	s.Idle(one)
	if n := back(); n != 1 {
		t.Fatalf("told %d times", n)
	}
	msg := lastWith(s, "is back in stock")
	if !strings.Contains(msg.RawText, "<b>Apple Gift Card 5 USD</b>") || len(msg.ReplyMarkup.Buttons()) != 1 ||
		msg.ReplyMarkup.Buttons()[0].URL != "https://t.me/shopbot_test_bot?start=gc-"+simcatalog.DemoGiftCategory {
		t.Fatalf("message = %q %+v", msg.RawText, msg.ReplyMarkup.Buttons())
	}
	if got := locales.T(locales.En, "restock.open"); msg.ReplyMarkup.Buttons()[0].Text != got {
		t.Fatalf("button %q", msg.ReplyMarkup.Buttons()[0].Text)
	}
	s.NoViolations()
}

// lastWith is the bot's newest message in the buyer's chat containing part.
func lastWith(s *shoptest.Shop, part string) types.Message {
	msgs := s.BotMessages(chat)
	for i := len(msgs) - 1; i >= 0; i-- {
		if strings.Contains(msgs[i].RawText, part) {
			return msgs[i]
		}
	}
	s.T.Fatalf("no message with %q", part)
	return types.Message{}
}

// Check on its own: an item gone from the catalog ends its watches, told
// nothing; watchers are told each once whatever checks race.
func TestCheckTellsEachWatcherOnce(t *testing.T) {
	s := shoptest.New(t)
	store := records.NewRestock(s.Rdb.Client, s.Rdb.Prefix)
	ctx := context.Background()
	tg := &sender{}
	mk := func() *restock.Restock {
		return restock.New(restock.Options{Catalog: catalog.New(s.Client, nil, time.Minute)},
			restock.Deps{Telegram: tg, Store: store, BotName: func() string { return "shop_bot" }, Lang: locales.En})
	}
	card := records.RestockItem{Line: "giftcards", Category: simcatalog.DemoGiftCategory, Item: simcatalog.DemoGiftCardOutOfStock}
	gone := records.RestockItem{Line: "giftcards", Category: simcatalog.DemoGiftCategory, Item: "no-such-card"}
	for u := int64(1); u <= 5; u++ {
		_, _ = store.Watch(ctx, card, records.Watcher{User: u, Chat: u, Lang: "uk", Name: "Apple 5"})
	}
	_, _ = store.Watch(ctx, gone, records.Watcher{User: 9, Chat: 9, Name: "Gone"})
	if n, err := mk().Check(ctx); n != 0 || err != nil {
		t.Fatalf("sold out: told %d, %v", n, err)
	}
	if items, _ := store.Items(ctx, 10); len(items) != 1 || items[0] != card {
		t.Fatalf("items = %+v (the gone one must end)", items)
	}
	s.Sim.SetStock(simcatalog.DemoGiftCardOutOfStock, 1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = mk().Check(ctx) }()
	}
	wg.Wait()
	if len(tg.sent) != 5 {
		t.Fatalf("sent %d messages, want 5 (one each): %v", len(tg.sent), tg.sent)
	}
	seen := map[int64]bool{}
	for _, m := range tg.sent {
		if seen[m.chat] || !strings.Contains(m.text, "знову в наявності") {
			t.Fatalf("sent %+v", tg.sent)
		}
		seen[m.chat] = true
	}
}

type sent struct {
	chat int64
	text string
}

type sender struct {
	mu   sync.Mutex
	sent []sent
}

func (s *sender) Send(_ context.Context, chat int64, text string, _ [][]flows.Button) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, sent{chat, text})
	return len(s.sent), nil
}
