package bot_test

import (
	"strings"
	"testing"
	"time"

	"shopbot/bot"
	"shopbot/bot/botapitest"
	"shopbot/locales"
)

const (
	supportAdmin = int64(9001)
	supportBuyer = int64(501)
)

func (h *harness) supportBot() *bot.Bot {
	return h.NewBot(func(o *bot.Options) { o.Admins = []int64{supportAdmin} })
}

// say sends text from chatID and waits until the bot has handled it.
func (h *harness) sayIn(b *bot.Bot, chatID int64, text string) {
	h.T.Helper()
	n := len(h.botMessages(chatID))
	h.Fake.SendText(chatID, text)
	h.waitBotMessages(chatID, n+1)
	h.Idle(b)
}

func (h *harness) waitBotMessages(chatID int64, n int) {
	h.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(h.botMessages(chatID)) < n {
		if time.Now().After(deadline) {
			h.T.Fatalf("chat %d: %d bot messages, want %d", chatID, len(h.botMessages(chatID)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSupportTicketRoundTripAcrossRestart: a Russian-speaking buyer opens
// /paysupport, the bot restarts, the buyer's message reaches the admin (in
// English, with the buyer's link and orders and a Reply button), the bot
// restarts again mid-reply, the admin's reply reaches the buyer in Russian,
// and the buyer closes the ticket.
func TestSupportTicketRoundTripAcrossRestart(t *testing.T) {
	h := newHarness(t)
	h.Fake.SetUser(supportBuyer, botapitest.User{FirstName: "Оля", Username: "olya", LanguageCode: "ru"})
	ru := func(key string, kv ...any) string { return locales.T(locales.Ru, key, kv...) }

	b := h.supportBot()
	stop := h.Run(b)
	m := h.command(b, supportBuyer, "paysupport", "")
	if m.RawText != ru("support.write") {
		t.Fatalf("/paysupport screen = %q", m.RawText)
	}
	stop() // the ticket's state must survive a restart

	b = h.supportBot()
	stop = h.Run(b)
	h.sayIn(b, supportBuyer, "Не пришёл код, заказ №12")
	h.waitText(supportBuyer, ru("support.sent"))
	relayed := h.waitText(supportAdmin, "Не пришёл код, заказ №12")
	for _, want := range []string{`<a href="tg://user?id=501">Оля</a>`, "@olya", en("support.no_orders")} {
		if !strings.Contains(relayed.RawText, want) && !strings.Contains(relayed.Text, want) {
			t.Errorf("relayed message lacks %q: %q", want, relayed.RawText)
		}
	}
	h.press(b, supportAdmin, relayed, en("btn.support_reply"))
	stop() // the admin's reply state survives too

	b = h.supportBot()
	h.Run(b)
	h.sayIn(b, supportAdmin, "Код отправлен повторно, проверьте /orders")
	got := h.waitText(supportBuyer, "Код отправлен повторно")
	if !strings.Contains(got.RawText, ru("support.from_staff", "text", "")) {
		t.Fatalf("reply to the buyer = %q", got.RawText)
	}
	h.waitText(supportAdmin, strings.TrimSuffix(en("support.replied", "user", ""), "."))

	// /tickets lists the open ticket; the buyer closes it from the reply.
	tickets := h.command(b, supportAdmin, "tickets", "")
	if !strings.Contains(tickets.RawText, "Оля") {
		t.Fatalf("/tickets = %q", tickets.RawText)
	}
	h.press(b, supportBuyer, got, ru("btn.close_ticket"))
	h.waitText(supportAdmin, "closed their support request")
	if tickets := h.command(b, supportAdmin, "tickets", ""); !strings.Contains(tickets.RawText, en("support.tickets_none")) {
		t.Fatalf("/tickets after closing = %q", tickets.RawText)
	}
	h.noViolations()
}

// TestSupportFromHelpButtonAndPhoto: the Help button leads to support, a
// photo reaches the admin, and an admin closing the ticket tells the buyer.
func TestSupportFromHelpButtonAndPhoto(t *testing.T) {
	h := newHarness(t)
	b := h.supportBot()
	h.Run(b)
	help := h.command(b, supportBuyer, "help", "")
	h.press(b, supportBuyer, help, en("btn.support_write"))
	h.waitText(supportBuyer, en("support.write"))
	n := len(h.Fake.CallsFor("sendPhoto"))
	h.Fake.SendPhoto(supportBuyer, "screenshot of the error")
	h.Wait("sendPhoto", n+1)
	h.waitText(supportBuyer, en("support.sent"))
	h.waitText(supportAdmin, "Support request")
	h.Idle(b)
	tickets := h.command(b, supportAdmin, "tickets", "")
	h.press(b, supportAdmin, tickets, en("btn.close_ticket"))
	h.waitText(supportBuyer, en("support.closed_by_staff"))
	h.noViolations()
}

// TestTermsAndSupportCommandsAreListed: /terms answers with the default
// terms, and the command menu lists /support, /paysupport and /terms.
func TestTermsAndSupportCommandsAreListed(t *testing.T) {
	h := newHarness(t)
	b := h.supportBot()
	h.Run(b)
	if m := h.command(b, supportBuyer, "terms", ""); m.RawText != en("terms.text") {
		t.Fatalf("/terms = %q", m.RawText)
	}
	calls := h.Fake.CallsFor("setMyCommands")
	if len(calls) == 0 {
		t.Fatal("no setMyCommands")
	}
	cmds, _ := calls[0].Params["commands"].([]any)
	var names []string
	for _, c := range cmds {
		if m, ok := c.(map[string]any); ok {
			names = append(names, m["command"].(string))
		}
	}
	for _, want := range []string{"support", "paysupport", "terms"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("command menu %v lacks /%s", names, want)
		}
	}
	h.noViolations()
}

// TestTermsFromConfig: TERMS_TEXT is shown escaped under the title, with a
// button to TERMS_URL.
func TestTermsFromConfig(t *testing.T) {
	h := newHarness(t)
	b := h.NewBot(func(o *bot.Options) { o.TermsText, o.TermsURL = "Codes <are> final.", "https://shop.example/terms" })
	h.Run(b)
	m := h.command(b, supportBuyer, "terms", "")
	if want := en("terms.title") + "\n\nCodes &lt;are&gt; final."; m.RawText != want {
		t.Fatalf("/terms = %q, want %q", m.RawText, want)
	}
	if btns := m.ReplyMarkup.Buttons(); len(btns) != 1 || btns[0].URL != "https://shop.example/terms" {
		t.Fatalf("/terms buttons = %+v", btns)
	}
	h.noViolations()
}

// TestSupportWithoutAdminsSaysNotSent: with no admin to reach, the buyer is
// told the message was not sent (not "sent"), and stays in support.
func TestSupportWithoutAdminsSaysNotSent(t *testing.T) {
	h := newHarness(t)
	b := h.NewBot(nil) // no ADMIN_IDS
	h.Run(b)
	h.command(b, supportBuyer, "support", "")
	h.sayIn(b, supportBuyer, "hello?")
	h.waitText(supportBuyer, "not sent")
	for _, m := range h.Fake.MessagesIn(supportBuyer) {
		if m.RawText == en("support.sent") {
			t.Fatal("told the buyer the message was sent")
		}
	}
	h.noViolations()
}

// TestSupportAdminRepliesWithAPhoto: an admin's photo reaches the buyer with
// an HTML caption (the staff header) and the buttons to answer or close.
func TestSupportAdminRepliesWithAPhoto(t *testing.T) {
	h := newHarness(t)
	b := h.supportBot()
	h.Run(b)
	h.command(b, supportBuyer, "support", "")
	h.sayIn(b, supportBuyer, "which code?")
	relayed := h.waitText(supportAdmin, "which code?")
	h.press(b, supportAdmin, relayed, en("btn.support_reply"))
	n := len(h.Fake.CallsFor("sendPhoto"))
	h.Fake.SendPhoto(supportAdmin, "this <one>")
	calls := h.Wait("sendPhoto", n+1)
	c := calls[len(calls)-1]
	if c.Int("chat_id") != supportBuyer || c.String("parse_mode") != "HTML" ||
		c.String("caption") != en("support.from_staff", "text", "this &lt;one&gt;") {
		t.Fatalf("photo to the buyer: %v", c.Params)
	}
	h.waitText(supportAdmin, "Reply sent to")
	h.noViolations()
}

// TestSupportAdminAnswersByReplyingToTheRelayedMessage: replying to the
// relayed message (no button) reaches the buyer, across a restart; a reply
// to any other message is left to the flows.
func TestSupportAdminAnswersByReplyingToTheRelayedMessage(t *testing.T) {
	h := newHarness(t)
	h.Fake.SetUser(supportBuyer, botapitest.User{FirstName: "Оля", LanguageCode: "uk"})
	b := h.supportBot()
	stop := h.Run(b)
	h.command(b, supportBuyer, "paysupport", "")
	h.sayIn(b, supportBuyer, "Де мій код?")
	relayed := h.waitText(supportAdmin, "Де мій код?")
	stop()

	b = h.supportBot()
	h.Run(b)
	h.Fake.SendReply(supportAdmin, relayed.MessageID, "Код уже в /orders")
	got := h.waitText(supportBuyer, "Код уже в /orders")
	if !strings.HasPrefix(got.RawText, locales.T(locales.Uk, "support.from_staff", "text", "")) {
		t.Fatalf("reply to the buyer = %q", got.RawText)
	}
	h.waitText(supportAdmin, "Reply sent to")

	// A reply to the admin's own menu is an ordinary message.
	menu := h.command(b, supportAdmin, "start", "")
	n := len(h.Fake.MessagesIn(supportBuyer))
	h.Fake.SendReply(supportAdmin, menu.MessageID, "not for the buyer")
	h.waitText(supportAdmin, en("menu.text_hint"))
	h.Idle(b)
	if len(h.Fake.MessagesIn(supportBuyer)) != n {
		t.Fatal("a reply to another message reached the buyer")
	}
	h.noViolations()
}
