package bot_test

import (
	"net/http/httptest"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/catalog"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// newShopBot is a bot with the product lines over the upstream simulator.
func (h *harness) newShopBot() *storefront.Shop {
	h.t.Helper()
	return h.newShopBotWith(nil)
}

// newShopBotWith is newShopBot over the simulator serving cat (nil: the
// default catalog).
func (h *harness) newShopBotWith(cat *simcatalog.Catalog) *storefront.Shop {
	h.t.Helper()
	sim := resellersim.New(resellersim.Config{Seed: 1, Catalog: cat})
	srv := httptest.NewServer(sim)
	h.t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		h.t.Fatal(err)
	}
	b := h.newBot(nil)
	sh := &flowshop.Shop{
		Catalog: catalog.New(client, work.NewCache(h.rdb.Client, h.rdb.Prefix), time.Minute),
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(h.rdb.Client, h.rdb.Prefix)},
		Limiter: redisstore.NewLimiter(h.rdb.Client, h.rdb.Prefix, 10, time.Minute),
	}
	lines.Register(b.Engine, sh)
	return b
}

func TestGiftCardsFromCommandToConfirmation(t *testing.T) {
	h := newHarness(t)
	b := h.newShopBot()
	h.run(b)
	h.fake.SendCommand(chat, "giftcards", "")
	h.wait("sendMessage", 1)
	h.idle(b)
	h.tap(b, "Apple")
	h.tap(b, "US")
	if m := h.menu(); strings.Contains(m.Text, "500 USD") {
		t.Fatalf("a hidden card is shown: %q", m.Text)
	}
	h.tap(b, "Apple Gift Card 10 USD")
	h.say(b, "2")
	m := h.menu()
	if !strings.Contains(m.Text, "Please check your order") || !strings.Contains(m.Text, "Apple Gift Card 10 USD") {
		t.Fatalf("confirmation = %q", m.Text)
	}
	h.tap(b, "💳")
	if edits := h.fake.CallsFor("editMessageText"); len(edits) < 3 {
		t.Fatalf("navigation must edit the menu in place: %d edits", len(edits))
	}
}

func TestStarsFromCommandToConfirmation(t *testing.T) {
	h := newHarness(t)
	b := h.newShopBot()
	h.run(b)
	h.fake.SendCommand(chat, "stars", "")
	h.wait("sendMessage", 1)
	h.idle(b)
	h.say(b, "t.me/durov")
	h.tap(b, "500")
	m := h.menu()
	if !strings.Contains(m.Text, "@durov") || !strings.Contains(m.Text, locales.N(locales.En, "count.stars", 500)) {
		t.Fatalf("confirmation = %q", m.Text)
	}
	q := h.fake.Press(chat, m.MessageID, button(t, m, locales.T(locales.En, "btn.pay")))
	if a := h.waitAnswer(q); a.Text != locales.T(locales.En, "pay.disabled") {
		t.Fatalf("pay answered %q", a.Text)
	}
}

func TestPremiumFromDeepLinkToConfirmation(t *testing.T) {
	h := newHarness(t)
	b := h.newShopBot()
	h.run(b)
	h.fake.SendCommand(chat, "start", "premium")
	h.wait("sendMessage", 1)
	h.idle(b)
	h.say(b, "@durov")
	h.tap(b, "3 months")
	if m := h.menu(); !strings.Contains(m.Text, "Telegram Premium for 3 months") {
		t.Fatalf("confirmation = %q", m.Text)
	}
}

// Every other line, from its command or deep link to the confirmation
// screen, through the fake Bot API server and the simulator.
func TestEveryLineReachesConfirmation(t *testing.T) {
	for _, c := range []struct {
		line, cmd, arg string
		steps          []string // "tap:<label prefix>" or text to send
		want           string
	}{
		{"keys", "keys", "", []string{"elden", "tap:ELDEN RING · GLOBAL", "tap:ELDEN RING Standard", "tap:2"}, "ELDEN RING Standard Edition"},
		{"keys deep link", "start", "key-" + simcatalog.DemoGameRestricted, []string{"tap:ELDEN RING Standard", "1"}, "(Steam, CIS)"},
		{"games", "games", "", []string{"tap:PUBG Mobile", "tap:PUBG Mobile UC (Global) ", "tap:60 UC", "5123456789"}, "PUBG Mobile UC (Global) — 60 UC"},
		{"games deep link", "start", "tu-" + simcatalog.DemoTopUpCategoryTwoFields, []string{"tap:", "12345", "2001"}, "Zone ID: 2001"},
		{"services", "services", "", []string{"tap:", "tap:", "login@example.com", "secretpass"}, "••••••"},
		{"services deep link", "start", "svc-" + simcatalog.DemoManualServiceNoChat, []string{"tap:", "https://steamcommunity.com/tradeoffer/new/?partner=1"}, "Details:"},
		{"topup", "topup", "", []string{"gabe", "tap:USD", "10"}, "10.00"},
		{"gifts", "gifts", "", []string{"tap:ELDEN RING", "tap:", "tap:", "https://s.team/p/abcd/XYZ"}, "ELDEN RING Standard Edition (US)"},
		{"gifts by app id", "start", "game-1245620", []string{"tap:", "tap:TR", "https://s.team/p/abcd/XYZ"}, "(TR)"},
	} {
		t.Run(c.line, func(t *testing.T) {
			h := newHarness(t)
			b := h.newShopBot()
			h.run(b)
			h.fake.SendCommand(chat, c.cmd, c.arg)
			h.wait("sendMessage", 1)
			h.idle(b)
			for _, st := range c.steps {
				if label, ok := strings.CutPrefix(st, "tap:"); ok {
					h.tap(b, label)
				} else {
					h.say(b, st)
				}
			}
			m := h.menu()
			if !strings.Contains(m.Text, "Please check your order") || !strings.Contains(m.Text, c.want) {
				t.Fatalf("confirmation = %q", m.Text)
			}
			if v := h.fake.Violations(); len(v) > 0 {
				t.Fatalf("Bot API schema violations: %v", v)
			}
		})
	}
}

// TestTypedFieldsRefusedBeforeConfirmation drives a wrong answer of every
// field kind the simulator declares or implies through the bot: each gets its
// reason and the same question again, and no confirmation (so no invoice)
// is ever shown.
func TestTypedFieldsRefusedBeforeConfirmation(t *testing.T) {
	for _, c := range []struct {
		name, arg string
		steps     []string
		reason    string // locale key of the last refusal
		label     string
	}{
		{"number", "tu-" + simcatalog.DemoTopUpCategorySelect, []string{"tap:", "abc"}, "fields.bad_number", "UID"},
		{"select", "tu-" + simcatalog.DemoTopUpCategorySelect, []string{"tap:", "700123456", "😀"}, "fields.bad_option", "Server"},
		{"invisible", "tu-" + simcatalog.DemoTopUpCategoryTwoFields, []string{"tap:", "123\u200b45"}, "fields.invisible", ""},
		{"email", "svc-" + simcatalog.DemoManualService, []string{"tap:", "notanemail"}, "fields.bad_email", "PSN login (email)"},
		{"url", "svc-" + simcatalog.DemoManualServiceNoChat, []string{"tap:", "steamcommunity.com/tradeoffer"}, "fields.bad_url", "Trade offer URL"},
		{"invite", "game-1245620", []string{"tap:", "tap:TR", "https://example.com/foo"}, "gifts.bad_invite", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			b := h.newShopBot()
			h.run(b)
			h.fake.SendCommand(chat, "start", c.arg)
			h.wait("sendMessage", 1)
			h.idle(b)
			for _, st := range c.steps {
				if label, ok := strings.CutPrefix(st, "tap:"); ok {
					h.tap(b, label)
				} else {
					h.say(b, st)
				}
			}
			want := locales.T(locales.En, c.reason, "label", c.label, "max", 32, "options", "America, Europe, Asia, TW, HK, MO")
			if h.lastNotice() != want {
				t.Fatalf("no refusal %s; last notice %q", c.reason, h.lastNotice())
			}
			if m := h.menu(); strings.Contains(m.Text, "Please check your order") {
				t.Fatalf("a wrong answer reached the confirmation: %q", m.Text)
			}
			if v := h.fake.Violations(); len(v) > 0 {
				t.Fatalf("Bot API schema violations: %v", v)
			}
		})
	}
}

// lastNotice is the text of the last message before the live menu.
func (h *harness) lastNotice() string {
	calls := h.fake.CallsFor("sendMessage")
	if len(calls) < 2 {
		return ""
	}
	s, _ := calls[len(calls)-2].Params["text"].(string)
	return s
}

// bigCatalog is the default catalog plus one category of each listing line
// with n entries, the first named with 5,000 characters.
func bigCatalog(n int) *simcatalog.Catalog {
	c := simcatalog.Default()
	long := strings.Repeat("Ж", 5000)
	name := func(i int) string {
		if i == 0 {
			return long
		}
		return "Card " + strconv.Itoa(i)
	}
	price := decimal.RequireFromString("1.05")
	gc := simcatalog.GiftCategory{ID: "big-cards", Name: long, Brand: "Big", Region: "US"}
	key := simcatalog.Game{ID: "big-game", Name: long, Region: "GLOBAL", Platform: "Steam"}
	tu := simcatalog.TopUpCategory{ID: "big-topup", Name: long, Note: long, Brand: "Big", Fields: []simcatalog.TopUpField{{Key: "uid", Label: "UID", Type: "number"}}}
	svc := simcatalog.ManualService{ID: "big-service", Name: long, Kind: "transfer", Info: long, Fields: []simcatalog.ManualField{{Code: "email", Name: "Email"}}}
	for i := range n {
		id := "big-" + strconv.Itoa(i)
		gc.Cards = append(gc.Cards, simcatalog.GiftCard{ID: id, Name: name(i), Price: price, Stock: 10, MinQuantity: 1, MaxQuantity: 10})
		key.Keys = append(key.Keys, simcatalog.GameKey{ID: id, Name: name(i), Price: price, Stock: 10, MinQuantity: 1, MaxQuantity: 10})
		tu.Offers = append(tu.Offers, simcatalog.TopUpOffer{ID: id, Name: name(i), Price: price})
		note := ""
		if i == 0 {
			note = long
		}
		svc.Offers = append(svc.Offers, simcatalog.ManualOffer{ID: id, Name: name(i), Price: price, Note: note, DeliveryMinutes: 30})
	}
	c.GiftCategories = append(c.GiftCategories, gc)
	c.Games = append(c.Games, key)
	c.TopUpCategories = append(c.TopUpCategories, tu)
	c.ManualServices = append(c.ManualServices, svc)
	return c
}

// TestBigCategoriesPageWithinTelegramLimits browses a 152-entry category of
// every listing line (gift cards to the last page) and picks an entry: every message
// the bot sends (checked by the fake Bot API: 4,096 characters, 64-byte
// callback data, 100 buttons) stays within Telegram's limits, and each page
// has at most a screenful of offers.
func TestBigCategoriesPageWithinTelegramLimits(t *testing.T) {
	const n = 152
	for _, c := range []struct {
		name, arg, pick string
		maxPages        int // pages to browse (each press costs the fake's poll)
	}{
		{"gift cards", "gc-big-cards", "Card 151", n},
		{"game keys", "key-big-game", "Card 17", 3},
		{"top-ups", "tu-big-topup", "Card 17", 3},
		{"services", "svc-big-service", "Card 17", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			b := h.newShopBotWith(bigCatalog(n))
			h.run(b)
			h.fake.SendCommand(chat, "start", c.arg)
			h.wait("sendMessage", 1)
			h.idle(b)
			pages := 0
			for {
				m := h.menu()
				pages++
				if got := len(m.ReplyMarkup.Buttons()); got > 12 {
					t.Fatalf("page %d has %d buttons", pages, got)
				}
				if !hasButton(m, en("btn.next")) || pages == c.maxPages {
					break
				}
				if pages > n {
					t.Fatal("the pages never end")
				}
				h.tap(b, "Next")
			}
			if pages < min(n/10, c.maxPages) {
				t.Fatalf("%d pages for %d offers", pages, n)
			}
			h.tap(b, c.pick)
			if v := h.fake.Violations(); len(v) > 0 {
				t.Fatalf("Bot API limit violations: %v", v)
			}
			if m := h.menu(); strings.Contains(m.Text, strings.Repeat("Ж", 200)) {
				t.Fatalf("an upstream name was not clipped: %d characters", len(m.Text))
			}
		})
	}
}
