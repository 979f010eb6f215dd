package bot_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot"
	"shopbot/catalog"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// newShopBot is a bot with the product lines over the upstream simulator.
func (h *harness) newShopBot() *bot.Bot {
	h.t.Helper()
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	h.t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		h.t.Fatal(err)
	}
	b := h.newBot(nil)
	shop := &flows.Shop{
		Catalog: catalog.New(client, state.NewCache(h.rdb.Client, h.rdb.Prefix), time.Minute),
		Pricing: flows.Pricing{Markup: flows.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  state.NewQuotes(h.rdb.Client, h.rdb.Prefix),
		Limiter: state.NewLimiter(h.rdb.Client, h.rdb.Prefix, 10, time.Minute),
	}
	shop.Register(b.Engine)
	return b
}

// tap presses the live menu's button whose label starts with prefix and
// waits until the bot has handled it.
func (h *harness) tap(b *bot.Bot, prefix string) {
	h.t.Helper()
	m := h.menu()
	for _, btn := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(btn.Text, prefix) {
			h.waitAnswer(h.fake.Press(chat, m.MessageID, btn.CallbackData))
			h.idle(b)
			return
		}
	}
	h.t.Fatalf("no button %q on %q", prefix, m.Text)
}

// say sends text and waits for the screen the bot sends anew in answer.
func (h *harness) say(b *bot.Bot, text string) {
	h.t.Helper()
	n := len(h.fake.CallsFor("sendMessage"))
	h.fake.SendText(chat, text)
	h.wait("sendMessage", n+1)
	h.idle(b)
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
