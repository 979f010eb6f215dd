package bot_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"shopbot/bot/storefront"
	"shopbot/locales"
)

// syncBuffer is a log sink safe for the bot's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// textsSince returns the texts the bot sent or edited in after the first n
// calls of each kind.
func textsSince(h *harness, sent, edited int) []string {
	var out []string
	for i, c := range h.fake.CallsFor("sendMessage") {
		if i >= sent {
			out = append(out, c.String("text"))
		}
	}
	for i, c := range h.fake.CallsFor("editMessageText") {
		if i >= edited {
			out = append(out, c.String("text"))
		}
	}
	return out
}

// A buyer forging callback data cannot open a screen its buttons do not
// open: the "open a flow" action with an admin flow or the order chat's
// flow, with the real session nonce or with nonce 0, and nonce 0 on any
// action that is not a global button's, are all answered as outdated; no
// admin screen is shown, no flow is entered and nothing is logged as an
// error.
func TestForgedButtonsAreAnsweredAsOutdated(t *testing.T) {
	h := newHarness(t)
	logs := &syncBuffer{}
	b := h.newBot(func(o *storefront.Options) {
		o.Admins = []int64{999}
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	h.run(b)
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	h.idle(b)
	m := h.menu()
	parts := strings.Split(button(t, m, locales.T(locales.En, "btn.help")), ":")
	if len(parts) != 3 || parts[1] == "0" {
		t.Fatalf("help button data %v", parts)
	}
	nonce := parts[1]
	sent, edited := len(h.fake.CallsFor("sendMessage")), len(h.fake.CallsFor("editMessageText"))
	for _, data := range []string{
		"1:0:l:broadcast", "1:0:l:rep_credit", "1:0:l:rep_tx", "1:0:l:adminorders", "1:0:l:orderchat",
		"1:" + nonce + ":l:broadcast", "1:" + nonce + ":l:rep_credit", "1:" + nonce + ":l:adminorders", "1:" + nonce + ":l:orderchat",
		"1:" + nonce + ":l:nosuchflow", "1:0:l:giftcards", "1:0:langs", "1:0:lang:en", "1:0:x", "1:0:confirm", "1:0:send",
	} {
		q := h.fake.Press(chat, m.MessageID, data)
		if a := h.waitAnswer(q); a.Text != locales.T(locales.En, "err.outdated") {
			t.Errorf("%s answered %q, want the outdated notice", data, a.Text)
		}
	}
	h.idle(b)
	_, doc, _ := b.Queue.Conversation(context.Background(), chat)
	if strings.Contains(string(doc), `"flow":"`) && !strings.Contains(string(doc), `"flow":""`) {
		t.Fatalf("a forged press entered a flow: %s", doc)
	}
	for _, text := range textsSince(h, sent, edited) {
		if text != m.Text && !strings.Contains(text, locales.T(locales.En, "menu.title")) {
			t.Errorf("a forged press showed %q", text)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("forged presses logged errors:\n%s", logs.String())
	}
	h.noViolations()
}

// An admin screen checks the admin flag when it is shown, not only when it
// is acted on: someone removed from ADMIN_IDS while on the broadcast compose
// screen who presses an older (stale) button, which shows the current
// screen again, gets the menu instead, and leaves the flow.
func TestAdminScreenChecksTheAdminFlagWhenShown(t *testing.T) {
	h := newHarness(t)
	stop := h.run(h.newBot(func(o *storefront.Options) { o.Admins = []int64{chat} }))
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	old := h.menu()
	h.fake.SendCommand(chat, "broadcast", "")
	compose := h.wait("sendMessage", 2)[1]
	if !strings.Contains(compose.String("text"), "Broadcast") {
		t.Fatalf("the admin did not get the compose screen: %q", compose.String("text"))
	}
	stop()

	b := h.newBot(nil) // no admins any more
	h.run(b)
	sent, edited := len(h.fake.CallsFor("sendMessage")), len(h.fake.CallsFor("editMessageText"))
	q := h.fake.Press(chat, old.MessageID, button(t, old, locales.T(locales.En, "btn.language")))
	if a := h.waitAnswer(q); a.Text != locales.T(locales.En, "err.outdated") {
		t.Fatalf("stale press answered %q", a.Text)
	}
	h.fake.SendText(chat, "Hello everyone")
	h.wait("sendMessage", sent+1)
	h.idle(b)
	for _, text := range textsSince(h, sent, edited) {
		if strings.Contains(text, "Broadcast") {
			t.Errorf("a former admin was shown %q", text)
		}
	}
	_, doc, _ := b.Queue.Conversation(context.Background(), chat)
	if strings.Contains(string(doc), "broadcast") {
		t.Fatalf("the former admin is still in the broadcast flow: %s", doc)
	}
	h.noViolations()
}

// A button press on a message in a group (or on an inline message) is
// answered and otherwise ignored: nothing is sent or edited in the group.
// A command sent in a group is ignored too.
func TestGroupPressIsAnsweredAndIgnored(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	h.run(b)
	const group = int64(-4001)
	h.fake.SendCommand(group, "start", "")
	for _, data := range []string{"1:0:m", "1:0:help", "1:0:l:broadcast", "garbage"} {
		q := h.fake.Press(group, 77, data)
		h.waitAnswer(q)
	}
	h.idle(b)
	for _, m := range []string{"sendMessage", "editMessageText", "editMessageReplyMarkup", "sendPhoto", "sendDocument"} {
		for _, c := range h.fake.CallsFor(m) {
			t.Errorf("%s in chat %d after group updates", m, c.Int("chat_id"))
		}
	}
	h.noViolations()
}
