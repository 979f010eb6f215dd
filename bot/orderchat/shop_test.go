package orderchat_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/fulfil"
	"shopbot/bot/orderchat"
	"shopbot/bot/storefront"
	"shopbot/flows/golden"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	simchat "shopbot/reseller/resellersim/chat"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

var chatCfg = orderchat.Config{Tick: 10 * time.Millisecond, Lease: 2 * time.Second, PollFast: 20 * time.Millisecond,
	PollSlow: 100 * time.Millisecond, RelayStale: 2 * time.Second}

// newChatShop is a shop whose manual-service orders stay processing until
// the test ends them, as an operator's work would.
func newChatShop(t *testing.T) *shop {
	t.Helper()
	s := newShop(t)
	s.Sim.SetBehavior("manual_service", resellersim.Behavior{Mode: resellersim.Stay})
	return s
}

// chatWorker builds a bot with the fulfilment worker and the chat relay.
// Telegram's per-chat pace (about a message a second) is left out: these
// tests send many messages to one buyer, and the limiter has its own tests.
func (s *shop) chatWorker() *storefront.Shop {
	b := s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Chat, o.Admins = s.Client, s.Cfg, chatCfg, []int64{admin}
	})
	fakePace(b.API)
	return b
}

func chatService() state.Quote {
	return state.Quote{Line: "services", Category: simcatalog.DemoManualService, Item: simcatalog.DemoManualOffer,
		ItemName: "PSN Turkey 500 TRY", Fields: map[string]string{"login": "buyer@example.com", "password": "hunter2"}, Quantity: 1}
}

// placedChatOrder buys a chat-required service through the worker and
// waits for the "being processed" notice with its chat button.
func (s *shop) placedChatOrder() (*state.Order, types.Message) {
	s.T.Helper()
	o := s.Paid(chatService(), state.PayStars)
	o = s.WaitStatus(o.ID, state.OrderPlaced)
	m := s.WaitMessage(chat, "is being processed")
	button(s.T, m, en("oc.btn_open"))
	// The operator's greeting is relayed at once, naming the shop's order
	// number (the one the buyer knows), not the upstream's.
	s.WaitMessage(chat, fmt.Sprintf("I am the operator for order #%d", o.ID))
	return o, m
}

// finish completes the order upstream and waits until it is delivered, so
// the shop's invariants hold at the end of the test.
func (s *shop) finish(o *state.Order) {
	s.T.Helper()
	if err := s.Sim.CompleteOrder(int(o.UpstreamNumber)); err != nil {
		s.T.Fatal(err)
	}
	s.WaitStatus(o.ID, state.OrderDelivered)
}

// openChat presses the button on m and waits for the chat screen.
func (s *shop) openChat(m types.Message, label string) types.Message {
	s.T.Helper()
	before := len(s.Fake.MessagesIn(chat))
	q, err := s.Fake.PressButton(chat, m.MessageID, label)
	if err != nil {
		s.T.Fatal(err)
	}
	s.WaitAnswer(q)
	// A new message below, or the pressed one when it was the live menu.
	var screen types.Message
	if s.Until(func() bool {
		for i, msg := range s.Fake.MessagesIn(chat) {
			if (i >= before || msg.MessageID == m.MessageID) && strings.Contains(msg.RawText, "Chat about order") {
				screen = msg
				return true
			}
		}
		return false
	}) {
		return screen
	}
	s.T.Fatalf("pressing %q showed no chat screen", label)
	return types.Message{}
}

// waitLast waits until the chat's newest bot message contains part.
func (s *shop) waitLast(chatID int64, part string) types.Message {
	s.T.Helper()
	var m types.Message
	if s.Until(func() bool {
		var ok bool
		m, ok = s.Fake.LastMessage(chatID)
		return ok && strings.Contains(m.RawText, part)
	}) {
		return m
	}
	s.T.Fatalf("the last message in chat %d is %q, want it to contain %q", chatID, m.RawText, part)
	return types.Message{}
}

// upstreamTexts are the chat's messages by author, as the simulator has them.
func (s *shop) upstreamTexts(n int64, author string) []string {
	var out []string
	for _, m := range s.Sim.ChatMessages(int(n)) {
		if m.Author == author {
			out = append(out, m.Text)
		}
	}
	return out
}

func (s *shop) waitUpstream(n int64, author, text string) simchat.Message {
	s.T.Helper()
	var found simchat.Message
	if s.Until(func() bool {
		for _, m := range s.Sim.ChatMessages(int(n)) {
			if m.Author == author && m.Text == text {
				found = m
				return true
			}
		}
		return false
	}) {
		return found
	}
	s.T.Fatalf("the upstream chat of %d never got %q from %s (has %q)", n, text, author, s.upstreamTexts(n, author))
	return simchat.Message{}
}

// waitCount waits until exactly n bot messages in the chat contain part.
func (s *shop) waitCount(chatID int64, part string, n int) {
	s.T.Helper()
	if s.Until(func() bool { return s.CountMessages(chatID, part) == n }) {
		return
	}
	s.T.Fatalf("chat %d has %d messages with %q, want %d", chatID, s.CountMessages(chatID, part), part, n)
}

func noViolations(t *testing.T, fake *botapitest.Server) {
	t.Helper()
	if v := fake.Violations(); len(v) > 0 {
		t.Fatalf("Bot API schema violations: %v", v)
	}
}

// The relay both ways: the buyer opens the chat from the "being processed"
// message, writes text and sends a photo (both reach the upstream chat, the
// photo's bytes intact), and every operator message, an image too, reaches
// the buyer exactly once, across a restart of the bot.
func TestOrderChatRelaysBothWaysAcrossARestart(t *testing.T) {
	s := newChatShop(t)
	stop := s.Run(s.chatWorker())
	o, processing := s.placedChatOrder()
	n := o.UpstreamNumber
	if _, ok, _ := s.Sched.Due(context.Background(), orderchat.ChatJob(o.ID)); ok {
		t.Fatal("the chat job is in the order schedule, where the fulfilment worker would claim it")
	}

	greeting := fmt.Sprintf("I am the operator for order #%d", o.ID)
	relayed := s.WaitMessage(chat, greeting)
	if !strings.Contains(relayed.RawText, en("oc.operator", "id", o.ID)) {
		t.Fatalf("relayed greeting %q has no operator header", relayed.RawText)
	}
	button(t, relayed, en("oc.btn_reply"))

	screen := s.openChat(processing, en("oc.btn_open"))
	golden.Check(t, "orderchat/open", renderMessage(screen))

	s.Fake.SendText(chat, "My 2FA code is <1234> & ready")
	s.waitUpstream(n, simchat.AuthorClient, "My 2FA code is <1234> & ready")
	s.WaitMessage(chat, en("oc.sent"))
	s.WaitMessage(chat, "Got it: My 2FA code is &lt;1234&gt; &amp; ready")

	photo := botapitest.TestJPEG(120, 80, color.RGBA{R: 10, G: 200, B: 90, A: 255})
	s.Fake.SendPhotoData(chat, "the receipt", photo)
	sent := s.waitUpstream(n, simchat.AuthorClient, "the receipt")
	if got, ok := s.Sim.ChatImage(sent.Image); !ok || !bytes.Equal(got, photo) {
		t.Fatalf("the upstream got %d image bytes, want the buyer's %d", len(got), len(photo))
	}
	s.WaitMessage(chat, "Got it: the receipt")

	// The bot stops; the operator writes meanwhile; another process carries on.
	stop()
	if err := s.Sim.OperatorSays(int(n), "While you were away: all set"); err != nil {
		t.Fatal(err)
	}
	s.Run(s.chatWorker())
	s.WaitMessage(chat, "While you were away: all set")

	proof := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
	if err := s.Sim.OperatorSendsImage(int(n), "Here is the proof", "image/png", proof); err != nil {
		t.Fatal(err)
	}
	img := s.WaitMessage(chat, "Here is the proof")
	if img.Method != "sendPhoto" || !bytes.Equal(img.FileData, proof) {
		t.Fatalf("operator image came as %s with %d bytes", img.Method, len(img.FileData))
	}
	button(t, img, en("oc.btn_reply"))

	s.finish(o)
	delivered := s.WaitMessage(chat, "is delivered")
	button(t, delivered, en("oc.btn_open"))

	for _, text := range []string{greeting, "Got it: My 2FA code", "Got it: the receipt", "While you were away", "Here is the proof"} {
		if c := s.CountMessages(chat, text); c != 1 {
			t.Errorf("the buyer got %q %d times, want once", text, c)
		}
	}
	// The buyer's own messages are never relayed back.
	if c := s.CountMessages(chat, "hunter2") + s.CountMessages(chat, "My 2FA code is &lt;1234&gt; &amp; ready\n"); c != 0 {
		t.Errorf("the buyer's own words came back %d times", c)
	}
	if got := s.upstreamTexts(n, simchat.AuthorClient); len(got) != 2 {
		t.Errorf("upstream has the buyer's messages %q, want exactly two", got)
	}
	noViolations(t, s.Fake)
}

// /cancel and the Close button leave the chat; text after that is not sent
// to the operator. Commands keep working inside the chat.
func TestOrderChatCloseAndCommands(t *testing.T) {
	s := newChatShop(t)
	b := s.chatWorker()
	s.Run(b)
	o, processing := s.placedChatOrder()
	screen := s.openChat(processing, en("oc.btn_open"))

	s.Fake.SendCommand(chat, "help", "")
	s.waitLast(chat, en("help.text", "payment", en("help.pay_stars"), "more", "\n/settings — "+en("cmd.settings")))
	s.Fake.SendText(chat, "still in the chat")
	s.waitUpstream(o.UpstreamNumber, simchat.AuthorClient, "still in the chat")

	q, err := s.Fake.PressButton(chat, screen.MessageID, en("oc.btn_close"))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.WaitAnswer(q); a.Text != en("oc.closed") {
		t.Fatalf("close answered %q", a.Text)
	}
	s.Idle(b)
	s.Fake.SendText(chat, "after closing")
	s.waitCount(chat, en("menu.text_hint"), 1)

	s.openChat(processing, en("oc.btn_open"))
	s.Fake.SendCommand(chat, "cancel", "")
	s.WaitMessage(chat, en("oc.closed")) // not "Cancelled. Nothing was charged."
	s.Idle(b)
	s.waitCount(chat, en("cancel.done"), 0)
	s.Fake.SendText(chat, "after cancel")
	s.waitCount(chat, en("menu.text_hint"), 2)
	if got := s.upstreamTexts(o.UpstreamNumber, simchat.AuthorClient); len(got) != 1 {
		t.Fatalf("upstream got %q: text outside the chat was sent", got)
	}
	s.finish(o)
	noViolations(t, s.Fake)
}

// The chat is opened from "My orders" too, and only for the buyer's own
// orders that have a chat.
func TestOrderChatOnlyForOwnOrdersWithAChat(t *testing.T) {
	s := newChatShop(t)
	b := s.chatWorker()
	s.Run(b)
	o, _ := s.placedChatOrder()

	// From "My orders": the order's view has the button.
	s.Fake.SendCommand(chat, "orders", "")
	list := s.waitLast(chat, en("orders.title"))
	q, err := s.Fake.PressButton(chat, list.MessageID, "#"+strconv.FormatInt(o.ID, 10)+" · PSN Turkey 500 TRY")
	if err != nil {
		t.Fatal(err)
	}
	s.WaitAnswer(q)
	view := s.waitLast(chat, "Order #")
	s.openChat(view, en("oc.btn_open"))

	// Someone else forging the button sees nothing of the order.
	const other = int64(5002)
	before := len(s.Sim.ChatMessages(int(o.UpstreamNumber)))
	s.WaitAnswer(s.Fake.Press(other, 1, "1:0:oc:"+strconv.FormatInt(o.ID, 10)))
	s.waitLast(other, en("oc.not_found", "id", o.ID))
	s.Fake.SendText(other, "let me in")
	s.waitCount(other, en("menu.text_hint"), 1)
	if got := len(s.Sim.ChatMessages(int(o.UpstreamNumber))); got != before {
		t.Fatalf("a stranger's press changed the upstream chat: %d -> %d messages", before, got)
	}

	// A service without chat, and a gift card, have none.
	noChat := state.Quote{Line: "services", Category: simcatalog.DemoManualServiceNoChat, Item: simcatalog.DemoManualOfferNoChat,
		Fields: map[string]string{"trade_url": "https://steamcommunity.com/tradeoffer/new/?partner=1&token=x"}, Quantity: 1}
	o2 := s.WaitStatus(s.Paid(noChat, state.PayStars).ID, state.OrderPlaced)
	o3 := s.WaitStatus(s.Paid(giftCards(1), state.PayWallet).ID, state.OrderDelivered)
	for _, id := range []int64{o2.ID, o3.ID} {
		s.WaitAnswer(s.Fake.Press(chat, 1, "1:0:oc:"+strconv.FormatInt(id, 10)))
		// Counted, not the last message: the delivery notice of o3 is a
		// paced push and may arrive after the answer.
		s.waitCount(chat, en("oc.no_chat", "id", id), 1)
	}
	if c := s.CountMessages(chat, fmt.Sprintf("order #%d:", o2.ID)); c != 0 {
		t.Fatalf("a service without chat got %d operator messages", c)
	}
	s.finish(o)
	s.finish(o2)
	noViolations(t, s.Fake)
}

// Frozen and read-only chats are explained, and what the buyer writes is
// answered "not sent", never dropped silently. Polling ends once the order
// is finished and the chat frozen.
func TestOrderChatFrozenAndReadOnlyAreExplained(t *testing.T) {
	s := newChatShop(t)
	b := s.chatWorker()
	s.Run(b)
	o, processing := s.placedChatOrder()
	n := int(o.UpstreamNumber)
	s.openChat(processing, en("oc.btn_open"))

	if err := s.Sim.SetChatReadOnly(n, true); err != nil {
		t.Fatal(err)
	}
	s.Fake.SendText(chat, "are you there?")
	s.waitLast(chat, en("oc.not_sent_read_only"))
	s.Fake.SendPhoto(chat, "")
	s.waitLast(chat, en("oc.not_sent_read_only"))
	s.Fake.SendText(chat, "")
	s.waitLast(chat, en("oc.unsupported"))
	screen := s.openChat(processing, en("oc.btn_open"))
	if !strings.Contains(screen.RawText, en("oc.read_only")) {
		t.Fatalf("the chat screen does not say it is read-only: %q", screen.RawText)
	}

	if err := s.Sim.SetChatReadOnly(n, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Sim.FreezeChat(n); err != nil {
		t.Fatal(err)
	}
	s.Fake.SendText(chat, "hello?")
	s.waitLast(chat, en("oc.not_sent_frozen"))
	screen = s.openChat(processing, en("oc.btn_open"))
	if !strings.Contains(screen.RawText, en("oc.frozen")) {
		t.Fatalf("the chat screen does not say it is frozen: %q", screen.RawText)
	}
	if got := s.upstreamTexts(o.UpstreamNumber, simchat.AuthorClient); len(got) != 0 {
		t.Fatalf("upstream got %q from a blocked chat", got)
	}

	s.finish(o)
	chats := sched.NewNamedSchedule(s.Rdb.Client, s.Rdb.Prefix, "chat")
	if !s.Until(func() bool {
		_, ok, err := chats.Due(context.Background(), orderchat.ChatJob(o.ID))
		return err == nil && !ok
	}) {
		t.Fatal("polling of a finished order's frozen chat never ended")
	}
	noViolations(t, s.Fake)
}

// Admins read any order's chat with the achat button; anyone else gets the
// outdated-menu answer and nothing of the chat.
func TestAdminReadsOrderChatTranscript(t *testing.T) {
	s := newChatShop(t)
	b := s.chatWorker()
	s.Run(b)
	o, processing := s.placedChatOrder()
	s.openChat(processing, en("oc.btn_open"))
	s.Fake.SendText(chat, "login is <me>")
	s.WaitMessage(chat, "Got it: login is &lt;me&gt;")
	data := "1:0:achat:" + strconv.FormatInt(o.ID, 10)

	// The admin reaches the transcript from the order's admin view.
	s.Fake.SendCommand(admin, "order", strconv.FormatInt(o.ID, 10))
	view := s.WaitText(admin, en("ao.order.title", "id", o.ID))
	if _, err := s.Fake.PressButton(admin, view.MessageID, en("ao.btn.chat")); err != nil {
		t.Fatalf("no chat button on /order %d: %v\n%s", o.ID, err, renderMessage(view))
	}
	tr := s.WaitText(admin, "Chat of order #"+strconv.FormatInt(o.ID, 10))
	for _, want := range []string{
		"<b>Operator</b>", "<b>Buyer</b>", "login is &lt;me&gt;", "Got it: login is &lt;me&gt;",
		fmt.Sprintf("upstream #%d", o.UpstreamNumber), fmt.Sprintf("I am the operator for order #%d", o.UpstreamNumber),
	} {
		if !strings.Contains(tr.RawText, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr.RawText)
		}
	}
	if strings.Index(tr.RawText, "login is &lt;me&gt;") > strings.Index(tr.RawText, "Got it") {
		t.Errorf("transcript out of order:\n%s", tr.RawText)
	}

	before := len(s.Fake.MessagesIn(chat))
	q := s.Fake.Press(chat, processing.MessageID, data)
	if a := s.WaitAnswer(q); a.Text != en("err.outdated") {
		t.Fatalf("a buyer's achat answered %q", a.Text)
	}
	s.Idle(b)
	for _, m := range s.Fake.MessagesIn(chat)[before:] {
		if strings.Contains(m.RawText, "Chat of order") {
			t.Fatalf("a buyer saw the transcript: %q", m.RawText)
		}
	}
	// Unknown orders are said to be unknown.
	s.WaitAnswer(s.Fake.Press(admin, 1, "1:0:achat:999"))
	s.WaitText(admin, en("oc.admin_not_found", "id", int64(999)))
	s.finish(o)
	noViolations(t, s.Fake)
}

// Upstream 429s and 5xx while polling the chat are waited out; the
// operator's message arrives once afterwards.
func TestOrderChatPollRetries429And5xx(t *testing.T) {
	s := newChatShop(t)
	var chatGets atomic.Int64
	s.Sim.OnRequest(func(r *http.Request, _ []byte) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/chat") {
			chatGets.Add(1)
		}
	})
	s.Run(s.chatWorker())
	o, _ := s.placedChatOrder()
	n := int(o.UpstreamNumber)
	s.WaitMessage(chat, fmt.Sprintf("I am the operator for order #%d", o.ID))

	s.Sim.FailNextOn(fmt.Sprintf("/orders/%d/chat", n), 2, http.StatusServiceUnavailable)
	base := chatGets.Load()
	if err := s.Sim.OperatorSays(n, "Please confirm the region"); err != nil {
		t.Fatal(err)
	}
	s.WaitMessage(chat, "Please confirm the region")
	if got := chatGets.Load() - base; got < 3 {
		t.Fatalf("%d chat polls: the 503s were not met", got)
	}

	s.Sim.RateLimitNext(2, time.Second)
	if err := s.Sim.OperatorSays(n, "Thanks, starting now"); err != nil {
		t.Fatal(err)
	}
	s.WaitMessage(chat, "Thanks, starting now")
	for _, text := range []string{"Please confirm the region", "Thanks, starting now"} {
		if c := s.CountMessages(chat, text); c != 1 {
			t.Errorf("%q relayed %d times", text, c)
		}
	}
	s.finish(o)
	noViolations(t, s.Fake)
}

// An order placed before the relay existed (no chat record, no chat job)
// gets its chat when the buyer opens it from My orders: the upstream order
// says whether a chat is required, and polling starts.
func TestOrderChatOfAnOrderPlacedBeforeTheRelay(t *testing.T) {
	s := newChatShop(t)
	ctx := context.Background()
	q := chatService()
	o := s.Paid(q, state.PayStars)
	if err := s.Sched.Remove(ctx, fulfil.OrderJob(o.ID)); err != nil {
		t.Fatal(err)
	}
	up, err := s.Client.CreateManualServiceOrder(ctx, &reseller.ManualServiceOrderRequest{ServiceID: q.Category, ProductID: q.Item, Fields: q.Fields})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Orders.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, func(n *state.Order) error {
		n.AttemptID, n.PlacingAt = "old", time.Now()
		return nil
	}, "test"); err != nil {
		t.Fatal(err)
	}
	o, err = s.Orders.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderPlaced, func(n *state.Order) error {
		n.UpstreamNumber, n.UpstreamStatus, n.ChargedUSD = up.Number, string(up.Status), up.ChargedUSD.Decimal
		return nil
	}, "test")
	if err != nil {
		t.Fatal(err)
	}
	b := s.chatWorker()
	s.Run(b) // resumes the order's tracking; nothing starts its chat
	greeting := fmt.Sprintf("I am the operator for order #%d", o.ID)
	if c := s.CountMessages(chat, greeting); c != 0 {
		t.Fatalf("greeting relayed %d times before the chat was opened", c)
	}

	s.Fake.SendCommand(chat, "orders", "")
	list := s.waitLast(chat, en("orders.title"))
	qid, err := s.Fake.PressButton(chat, list.MessageID, "#"+strconv.FormatInt(o.ID, 10)+" · PSN Turkey 500 TRY")
	if err != nil {
		t.Fatal(err)
	}
	s.WaitAnswer(qid)
	view := s.waitLast(chat, "Order #")
	s.openChat(view, en("oc.btn_open"))
	s.WaitMessage(chat, greeting)
	info, err := work.NewOrderChats(s.Rdb.Client, s.Rdb.Prefix).Info(ctx, o.ID, state.ChargeTag(o.ChargeID))
	if err != nil || !info.Known || !info.Enabled {
		t.Fatalf("chat record after opening: %+v %v", info, err)
	}
	s.finish(o)
	noViolations(t, s.Fake)
}

// An operator message whose image points inside the shop's network (another
// loopback port, standing for the metrics listener, or the cloud metadata
// address) is never fetched: the buyer gets the text and "image not
// available", and the internal server sees no request.
func TestOrderChatRefusesInternalImageURLs(t *testing.T) {
	s := newChatShop(t)
	var reached atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte("# HELP shopbot_secret internal metrics\n"))
	}))
	t.Cleanup(internal.Close)
	s.Run(s.chatWorker())
	o, _ := s.placedChatOrder()
	n := int(o.UpstreamNumber)
	for i, ref := range []string{internal.URL + "/metrics", "http://169.254.169.254/latest/meta-data/"} {
		text := fmt.Sprintf("Look at this %d", i)
		if err := s.Sim.OperatorSendsImageURL(n, text, ref); err != nil {
			t.Fatal(err)
		}
		m := s.WaitMessage(chat, text)
		if m.Method != "sendMessage" || !strings.Contains(m.RawText, en("oc.image_failed")) {
			t.Fatalf("%s: the buyer got %s %q, want the text and the image-not-available note", ref, m.Method, m.RawText)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the internal server got %d requests", n)
	}
	for _, c := range s.Fake.CallsFor("sendDocument") {
		t.Fatalf("a document was sent: %v", c)
	}
	s.finish(o)
	noViolations(t, s.Fake)
}
