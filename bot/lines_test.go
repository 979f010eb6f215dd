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

// Every other line, from its command or deep link to the confirmation
// screen, through the fake Bot API server and the simulator.
func TestEveryLineReachesConfirmation(t *testing.T) {
	for _, c := range []struct {
		line, cmd, arg string
		steps          []string // "tap:<label prefix>" or text to send
		want           string
	}{
		{"keys", "keys", "", []string{"elden", "tap:ELDEN RING · GLOBAL", "tap:ELDEN RING Standard", "tap:2"}, "ELDEN RING Standard Edition"},
		{"keys deep link", "start", "key-" + resellersim.DemoGameRestricted, []string{"tap:ELDEN RING Standard", "1"}, "(Steam, CIS)"},
		{"games", "games", "", []string{"tap:PUBG Mobile", "tap:PUBG Mobile UC (Global) ", "tap:60 UC", "5123456789"}, "PUBG Mobile UC (Global) — 60 UC"},
		{"games deep link", "start", "tu-" + resellersim.DemoTopUpCategoryTwoFields, []string{"tap:", "12345", "2001"}, "Zone ID: 2001"},
		{"services", "services", "", []string{"tap:", "tap:", "login@example.com", "secretpass"}, "••••••"},
		{"services deep link", "start", "svc-" + resellersim.DemoManualServiceNoChat, []string{"tap:", "https://steamcommunity.com/tradeoffer/new/?partner=1"}, "Details:"},
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
		{"number", "tu-" + resellersim.DemoTopUpCategorySelect, []string{"tap:", "abc"}, "fields.bad_number", "UID"},
		{"select", "tu-" + resellersim.DemoTopUpCategorySelect, []string{"tap:", "700123456", "😀"}, "fields.bad_option", "Server"},
		{"invisible", "tu-" + resellersim.DemoTopUpCategoryTwoFields, []string{"tap:", "123\u200b45"}, "fields.invisible", ""},
		{"email", "svc-" + resellersim.DemoManualService, []string{"tap:", "notanemail"}, "fields.bad_email", "PSN login (email)"},
		{"url", "svc-" + resellersim.DemoManualServiceNoChat, []string{"tap:", "steamcommunity.com/tradeoffer"}, "fields.bad_url", "Trade offer URL"},
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
