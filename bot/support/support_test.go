package support_test

import (
	"strings"
	"testing"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/locales"
)

const (
	supportAdmin = int64(9001)
	supportBuyer = int64(501)
)

func supportBot(h *bottest.Harness) *storefront.Shop {
	return h.NewBot(func(o *storefront.Options) { o.Admins = []int64{supportAdmin} })
}

// TestSupportTicketRoundTripAcrossRestart: a Russian-speaking buyer opens
// /paysupport, the bot restarts, the buyer's message reaches the admin (in
// English, with the buyer's link and orders and a Reply button), the bot
// restarts again mid-reply, the admin's reply reaches the buyer in Russian,
// and the buyer closes the ticket.
func TestSupportTicketRoundTripAcrossRestart(t *testing.T) {
	h := bottest.New(t)
	h.Fake.SetUser(supportBuyer, types.User{FirstName: "Оля", Username: "olya", LanguageCode: "ru"})
	ru := func(key string, kv ...any) string { return locales.T(locales.Ru, key, kv...) }

	b := supportBot(h)
	stop := h.Run(b)
	m := h.Command(b, supportBuyer, "paysupport", "")
	if m.RawText != ru("support.write") {
		t.Fatalf("/paysupport screen = %q", m.RawText)
	}
	stop() // the ticket's state must survive a restart

	b = supportBot(h)
	stop = h.Run(b)
	h.SayIn(b, supportBuyer, "Не пришёл код, заказ №12")
	h.WaitText(supportBuyer, ru("support.sent"))
	relayed := h.WaitText(supportAdmin, "Не пришёл код, заказ №12")
	for _, want := range []string{`<a href="tg://user?id=501">Оля</a>`, "@olya", en("support.no_orders")} {
		if !strings.Contains(relayed.RawText, want) && !strings.Contains(relayed.Text, want) {
			t.Errorf("relayed message lacks %q: %q", want, relayed.RawText)
		}
	}
	h.Press(b, supportAdmin, relayed, en("btn.support_reply"))
	stop() // the admin's reply state survives too

	b = supportBot(h)
	h.Run(b)
	h.SayIn(b, supportAdmin, "Код отправлен повторно, проверьте /orders")
	got := h.WaitText(supportBuyer, "Код отправлен повторно")
	if !strings.Contains(got.RawText, ru("support.from_staff", "text", "")) {
		t.Fatalf("reply to the buyer = %q", got.RawText)
	}
	h.WaitText(supportAdmin, strings.TrimSuffix(en("support.replied", "user", ""), "."))

	// /tickets lists the open ticket; the buyer closes it from the reply.
	tickets := h.Command(b, supportAdmin, "tickets", "")
	if !strings.Contains(tickets.RawText, "Оля") {
		t.Fatalf("/tickets = %q", tickets.RawText)
	}
	h.Press(b, supportBuyer, got, ru("btn.close_ticket"))
	h.WaitText(supportAdmin, "closed their support request")
	if tickets := h.Command(b, supportAdmin, "tickets", ""); !strings.Contains(tickets.RawText, en("support.tickets_none")) {
		t.Fatalf("/tickets after closing = %q", tickets.RawText)
	}
	h.NoViolations()
}

// TestSupportFromHelpButtonAndPhoto: the Help button leads to support, a
// photo reaches the admin, and an admin closing the ticket tells the buyer.
func TestSupportFromHelpButtonAndPhoto(t *testing.T) {
	h := bottest.New(t)
	b := supportBot(h)
	h.Run(b)
	help := h.Command(b, supportBuyer, "help", "")
	h.Press(b, supportBuyer, help, en("btn.support_write"))
	h.WaitText(supportBuyer, en("support.write"))
	n := len(h.Fake.CallsFor("sendPhoto"))
	h.Fake.SendPhoto(supportBuyer, "screenshot of the error")
	h.Wait("sendPhoto", n+1)
	h.WaitText(supportBuyer, en("support.sent"))
	h.WaitText(supportAdmin, "Support request")
	h.Idle(b)
	tickets := h.Command(b, supportAdmin, "tickets", "")
	h.Press(b, supportAdmin, tickets, en("btn.close_ticket"))
	h.WaitText(supportBuyer, en("support.closed_by_staff"))
	h.NoViolations()
}

// TestTermsAndSupportCommandsAreListed: /terms answers with the default
// terms, and the command menu lists /support, /paysupport and /terms.
func TestTermsAndSupportCommandsAreListed(t *testing.T) {
	h := bottest.New(t)
	b := supportBot(h)
	h.Run(b)
	if m := h.Command(b, supportBuyer, "terms", ""); m.RawText != en("terms.text") {
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
	h.NoViolations()
}

// TestTermsFromConfig: TERMS_TEXT is shown escaped under the title, with a
// button to TERMS_URL.
func TestTermsFromConfig(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) {
		o.Support.TermsText, o.Support.TermsURL = "Codes <are> final.", "https://shop.example/terms"
	})
	h.Run(b)
	m := h.Command(b, supportBuyer, "terms", "")
	if want := en("terms.title") + "\n\nCodes &lt;are&gt; final."; m.RawText != want {
		t.Fatalf("/terms = %q, want %q", m.RawText, want)
	}
	if btns := m.ReplyMarkup.Buttons(); len(btns) != 1 || btns[0].URL != "https://shop.example/terms" {
		t.Fatalf("/terms buttons = %+v", btns)
	}
	h.NoViolations()
}

// TestSupportWithoutAdminsSaysNotSent: with no admin to reach, the buyer is
// told the message was not sent (not "sent"), and stays in support.
func TestSupportWithoutAdminsSaysNotSent(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(nil) // no ADMIN_IDS
	h.Run(b)
	h.Command(b, supportBuyer, "support", "")
	h.SayIn(b, supportBuyer, "hello?")
	h.WaitText(supportBuyer, "not sent")
	for _, m := range h.Fake.MessagesIn(supportBuyer) {
		if m.RawText == en("support.sent") {
			t.Fatal("told the buyer the message was sent")
		}
	}
	h.NoViolations()
}

// TestSupportAdminRepliesWithAPhoto: an admin's photo reaches the buyer with
// an HTML caption (the staff header) and the buttons to answer or close.
func TestSupportAdminRepliesWithAPhoto(t *testing.T) {
	h := bottest.New(t)
	b := supportBot(h)
	h.Run(b)
	h.Command(b, supportBuyer, "support", "")
	h.SayIn(b, supportBuyer, "which code?")
	relayed := h.WaitText(supportAdmin, "which code?")
	h.Press(b, supportAdmin, relayed, en("btn.support_reply"))
	n := len(h.Fake.CallsFor("sendPhoto"))
	h.Fake.SendPhoto(supportAdmin, "this <one>")
	calls := h.Wait("sendPhoto", n+1)
	c := calls[len(calls)-1]
	if c.Int("chat_id") != supportBuyer || c.String("parse_mode") != "HTML" ||
		c.String("caption") != en("support.from_staff", "text", "this &lt;one&gt;") {
		t.Fatalf("photo to the buyer: %v", c.Params)
	}
	h.WaitText(supportAdmin, "Reply sent to")
	h.NoViolations()
}

// TestSupportAdminAnswersByReplyingToTheRelayedMessage: replying to the
// relayed message (no button) reaches the buyer, across a restart; a reply
// to any other message is left to the flows.
func TestSupportAdminAnswersByReplyingToTheRelayedMessage(t *testing.T) {
	h := bottest.New(t)
	h.Fake.SetUser(supportBuyer, types.User{FirstName: "Оля", LanguageCode: "uk"})
	b := supportBot(h)
	stop := h.Run(b)
	h.Command(b, supportBuyer, "paysupport", "")
	h.SayIn(b, supportBuyer, "Де мій код?")
	relayed := h.WaitText(supportAdmin, "Де мій код?")
	stop()

	b = supportBot(h)
	h.Run(b)
	h.Fake.SendReply(supportAdmin, relayed.MessageID, "Код уже в /orders")
	got := h.WaitText(supportBuyer, "Код уже в /orders")
	if !strings.HasPrefix(got.RawText, locales.T(locales.Uk, "support.from_staff", "text", "")) {
		t.Fatalf("reply to the buyer = %q", got.RawText)
	}
	h.WaitText(supportAdmin, "Reply sent to")

	// A reply to the admin's own menu is an ordinary message.
	menu := h.Command(b, supportAdmin, "start", "")
	n := len(h.Fake.MessagesIn(supportBuyer))
	h.Fake.SendReply(supportAdmin, menu.MessageID, "not for the buyer")
	h.WaitText(supportAdmin, en("menu.text_hint"))
	h.Idle(b)
	if len(h.Fake.MessagesIn(supportBuyer)) != n {
		t.Fatal("a reply to another message reached the buyer")
	}
	h.NoViolations()
}

func en(key string, kv ...any) string { return locales.T(locales.En, key, kv...) }
