package bot_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state/redisstore/intake"

	"github.com/go-telegram/bot/models"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state/statetest"
)

const chat = bottest.Chat

const admin = bottest.Admin

// harness is the shop's test harness (bottest), with the helpers of this
// package's tests as its methods.
type harness struct {
	*bottest.Harness
	t    *testing.T
	fake *botapitest.Server
	rdb  *statetest.Redis
}

func newHarness(t *testing.T) *harness {
	h := bottest.New(t)
	return &harness{Harness: h, t: t, fake: h.Fake, rdb: h.Rdb}
}

// The shared helpers of bottest, under the names this package's tests use.

func (h *harness) newBot(mod func(*storefront.Options)) *storefront.Shop {
	h.t.Helper()
	return h.NewBot(mod)
}
func (h *harness) run(b *storefront.Shop) (stop func() time.Duration) { return h.Run(b) }
func (h *harness) wait(method string, n int) []calls.Call {
	h.t.Helper()
	return h.Wait(method, n)
}
func (h *harness) idle(b *storefront.Shop) { h.t.Helper(); h.Idle(b) }
func (h *harness) waitAnswer(id string) botapitest.CallbackAnswer {
	h.t.Helper()
	return h.WaitAnswer(id)
}
func (h *harness) menu() types.Message                   { h.t.Helper(); return h.Menu() }
func (h *harness) tap(b *storefront.Shop, prefix string) { h.t.Helper(); h.Tap(b, prefix) }
func (h *harness) say(b *storefront.Shop, text string)   { h.t.Helper(); h.Say(b, text) }
func (h *harness) until(cond func() bool) bool           { return h.Until(cond) }
func (h *harness) untilWithin(d time.Duration, cond func() bool) bool {
	return h.UntilWithin(d, cond)
}
func (h *harness) noViolations() { h.t.Helper(); h.NoViolations() }
func (h *harness) waitText(chatID int64, part string) types.Message {
	h.t.Helper()
	return h.WaitText(chatID, part)
}

var (
	button    = bottest.Button
	hasButton = bottest.HasButton
	en        = bottest.En
)

// shop is the shop with its upstream (shoptest), with the helpers of this
// package's tests as its methods.
type shop struct{ *shoptest.Shop }

func newShop(t *testing.T) *shop { t.Helper(); return &shop{shoptest.New(t)} }

var giftCards = shoptest.GiftCards

func TestStartShowsMainMenuAndRegistersCommands(t *testing.T) {
	h := newHarness(t)
	h.run(h.newBot(nil))
	h.fake.SendCommand(chat, "start", "")
	sent := h.wait("sendMessage", 1)
	if !strings.Contains(sent[0].String("text"), "Welcome") {
		t.Fatalf("menu text = %q", sent[0].String("text"))
	}
	m := h.menu()
	if n := len(m.ReplyMarkup.Buttons()); n < len(flows.Lines)+2 {
		t.Fatalf("main menu has %d buttons", n)
	}
	if cmds := h.fake.CallsFor("setMyCommands"); len(cmds) != 4 {
		t.Fatalf("setMyCommands called %d times, want default + 3 languages", len(cmds))
	}
}

func TestDoubleTapMakesOneTransition(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	stop := h.run(b)
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	m := h.menu()
	data := button(t, m, locales.T(locales.En, "btn.language"))
	stop() // both taps arrive while the bot is down: they are handled back to back
	q1 := h.fake.Press(chat, m.MessageID, data)
	q2 := h.fake.Press(chat, m.MessageID, data)
	h.run(h.newBot(nil))
	a1, a2 := h.waitAnswer(q1), h.waitAnswer(q2)
	if a1.Text == a2.Text {
		t.Fatalf("both taps answered alike (%q): two transitions?", a1.Text)
	}
	if a2.Text != locales.T(locales.En, "err.outdated") {
		t.Fatalf("second tap answered %q, want the outdated notice", a2.Text)
	}
	h.idle(b)
	rev, doc, _ := b.Queue.Conversation(context.Background(), chat)
	// /start saved revision 1, the first tap revision 2; the second tap saved nothing.
	if rev != 2 || !strings.Contains(string(doc), `"step":"language"`) {
		t.Fatalf("conversation rev=%d doc=%s", rev, doc)
	}
}

func TestStaleButtonChangesNothing(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	h.run(b)
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	old := h.menu()
	h.fake.SendCommand(chat, "start", "") // a new menu: the old one's buttons are stale now
	h.wait("sendMessage", 2)
	h.idle(b)
	rev, doc, _ := b.Queue.Conversation(context.Background(), chat)
	q := h.fake.Press(chat, old.MessageID, button(t, old, locales.T(locales.En, "btn.help")))
	if a := h.waitAnswer(q); a.Text != locales.T(locales.En, "err.outdated") {
		t.Fatalf("stale press answered %q", a.Text)
	}
	h.wait("editMessageReplyMarkup", 1) // the stale keyboard is taken off
	rev2, doc2, _ := b.Queue.Conversation(context.Background(), chat)
	if rev2 != rev || string(doc2) != string(doc) {
		t.Fatalf("stale press changed the conversation: %d %s -> %d %s", rev, doc, rev2, doc2)
	}
	if m, _ := h.fake.Message(chat, old.MessageID); len(m.ReplyMarkup.Buttons()) != 0 {
		t.Fatal("stale keyboard still there")
	}
	// A button that is not ours at all is answered too.
	q = h.fake.Press(chat, old.MessageID, "garbage")
	if a := h.waitAnswer(q); a.Text != locales.T(locales.En, "err.outdated") {
		t.Fatalf("foreign button answered %q", a.Text)
	}
}

func TestDuplicateUpdateIsHandledOnce(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(func(o *storefront.Options) { o.WebhookURL = "https://shop.example/hook"; o.WebhookSecret = "s3cret" })
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	h.run(b)
	u := h.fake.SendCommand(chat, "help", "")
	for range 3 { // Telegram redelivers when it missed our 200
		if code, err := h.fake.DeliverWebhook(context.Background(), srv.URL+"/hook", "s3cret", u); err != nil || code != 200 {
			t.Fatalf("webhook = %d, %v", code, err)
		}
	}
	h.wait("sendMessage", 1)
	h.idle(b) // every delivery was taken in (or dropped as seen) and handled
	if n := len(h.fake.CallsFor("sendMessage")); n != 1 {
		t.Fatalf("update handled %d times", n)
	}
}

func TestWebhookWithBadSecretGets401(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(func(o *storefront.Options) { o.WebhookURL = "https://shop.example/hook"; o.WebhookSecret = "s3cret" })
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	for _, secret := range []string{"", "wrong"} {
		code, err := h.fake.DeliverWebhook(context.Background(), srv.URL+"/hook", secret, h.fake.SendCommand(chat, "start", ""))
		if err != nil || code != http.StatusUnauthorized {
			t.Fatalf("secret %q: status %d, %v", secret, code, err)
		}
	}
	if n, _ := b.Queue.Pending(context.Background()); n != 0 {
		t.Fatalf("%d chats queued from unauthorized webhook calls", n)
	}
}

func TestCrashBetweenAcceptAndHandle(t *testing.T) {
	h := newHarness(t)
	// The first process accepts the update (webhook 200) and dies before any worker runs.
	first := h.newBot(func(o *storefront.Options) { o.WebhookURL = "https://shop.example/hook"; o.WebhookSecret = "s" })
	srv := httptest.NewServer(first.Handler())
	code, err := h.fake.DeliverWebhook(context.Background(), srv.URL+"/hook", "s", h.fake.SendCommand(chat, "start", ""))
	srv.Close()
	if err != nil || code != 200 {
		t.Fatalf("accept: %d %v", code, err)
	}
	if len(h.fake.CallsFor("sendMessage")) != 0 {
		t.Fatal("handled before the restart")
	}
	// A new process on the same Redis handles it.
	h.run(h.newBot(nil))
	if got := h.wait("sendMessage", 1)[0].Int("chat_id"); got != chat {
		t.Fatalf("sent to %d", got)
	}
}

func TestWorkerDiedMidUpdateIsRetriedAfterLease(t *testing.T) {
	h := newHarness(t)
	u := h.fake.SendCommand(chat, "help", "")
	raw, _ := json.Marshal(u)
	q := intake.NewQueue(h.rdb.Client, h.rdb.Prefix)
	q.Lease = 300 * time.Millisecond // the dead worker's lease
	if _, err := q.Accept(context.Background(), []intake.Update{{ID: u.UpdateID, Chat: chat, Body: raw}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c, err := q.Claim(context.Background(), time.Now()); c == nil || err != nil { // a worker that then dies
		t.Fatalf("claim: %v %v", c, err)
	}
	b := h.newBot(nil)
	h.run(b) // it also fetches the same update from getUpdates: a duplicate, dropped
	h.wait("sendMessage", 1)
	h.idle(b)
	if n := len(h.fake.CallsFor("sendMessage")); n != 1 {
		t.Fatalf("handled %d times", n)
	}
}

func TestHandlerPanicIsRecovered(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	b.SetTestHook(func(u *models.Update) {
		if u.Message != nil && u.Message.Text == "/boom" {
			panic("boom")
		}
	})
	h.run(b)
	h.fake.SendText(chat, "/boom")
	sent := h.wait("sendMessage", 1)
	if sent[0].String("text") != locales.T(locales.En, "err.internal") {
		t.Fatalf("after a panic the buyer got %q", sent[0].String("text"))
	}
	h.fake.SendCommand(chat, "start", "")
	if !strings.Contains(h.wait("sendMessage", 2)[1].String("text"), "Welcome") {
		t.Fatal("the bot did not live on after a panic")
	}
}

func TestTwoBotsNeverHandleOneChatAtOnce(t *testing.T) {
	h := newHarness(t)
	var inFlight [3]atomic.Int32
	var overlap atomic.Bool
	var mu sync.Mutex
	order := map[int64][]int64{}
	hook := func(u *models.Update) {
		c := u.Message.Chat.ID
		if inFlight[c-1].Add(1) > 1 {
			overlap.Store(true)
		}
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		order[c] = append(order[c], u.ID)
		mu.Unlock()
		inFlight[c-1].Add(-1)
	}
	var urls []string
	for range 2 {
		b := h.newBot(func(o *storefront.Options) { o.WebhookURL = "https://shop.example/hook"; o.WebhookSecret = "s" })
		b.SetTestHook(hook)
		srv := httptest.NewServer(b.Handler())
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/hook")
		h.run(b)
	}
	const perChat = 20
	for i := range perChat * 3 {
		c := int64(i%3 + 1)
		u := h.fake.SendCommand(c, "help", "")
		if code, err := h.fake.DeliverWebhook(context.Background(), urls[i%2], "s", u); err != nil || code != 200 {
			t.Fatalf("deliver: %d %v", code, err)
		}
	}
	h.wait("sendMessage", perChat*3)
	if overlap.Load() {
		t.Fatal("one chat was handled by two workers at once")
	}
	for c, ids := range order {
		for i := 1; i < len(ids); i++ {
			if ids[i] < ids[i-1] {
				t.Fatalf("chat %d handled out of order: %v", c, ids)
			}
		}
	}
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	h := newHarness(t)
	shutting := make(chan struct{})
	b := h.newBot(func(o *storefront.Options) {
		o.Logger = slog.New(&onMessage{Handler: slog.DiscardHandler, msg: "shutting down: no new updates; finishing those in flight", seen: shutting})
	})
	started := make(chan struct{}, 1)
	b.SetTestHook(func(u *models.Update) {
		started <- struct{}{}
		<-shutting // still in flight when the shutdown begins
	})
	stop := h.run(b)
	h.fake.SendCommand(chat, "help", "")
	<-started
	took := stop()
	if took > 10*time.Second {
		t.Fatalf("shutdown took %v", took)
	}
	if len(h.fake.CallsFor("sendMessage")) != 1 {
		t.Fatal("the in-flight update was not finished before exit")
	}
	if n, _ := b.Queue.Pending(context.Background()); n != 0 {
		t.Fatalf("%d chats left pending", n)
	}
}

func TestBotAPI429WaitsAndRetries(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	clock := fakePace(b.API)
	h.run(b)
	h.fake.FailNext("sendMessage", 1, 429, "Too Many Requests: retry after 3", 3)
	h.fake.SendCommand(chat, "help", "")
	calls := h.wait("sendMessage", 2)
	if slept := clock.Slept(); calls[0].ErrorCode != 429 || !calls[1].OK() || len(slept) != 1 || slept[0] != 3*time.Second {
		t.Fatalf("calls %d/%d slept %v", calls[0].ErrorCode, calls[1].ErrorCode, slept)
	}
}

func TestBlockedBuyerIsRecordedNotRetried(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	h.run(b)
	h.fake.BlockChat(chat)
	h.fake.SendCommand(chat, "help", "")
	h.wait("sendMessage", 1)
	if !h.untilWithin(5*time.Second, func() bool { blocked, _ := b.Users.Blocked(context.Background(), chat); return blocked }) {
		t.Fatal("403 not recorded on the buyer")
	}
	h.idle(b) // the update is done: a retry would have come before
	if n := len(h.fake.CallsFor("sendMessage")); n != 1 {
		t.Fatalf("a 403 was retried: %d calls", n)
	}
	// Coming back with /start clears the mark.
	h.fake.UnblockChat(chat)
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 2)
	if blocked, _ := b.Users.Blocked(context.Background(), chat); blocked {
		t.Fatal("still marked blocked after /start")
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	stop := h.run(b)
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	h.idle(b)
	if resp, err := http.Get(srv.URL + "/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/metrics on the webhook's listener: %v %v", resp, err)
	}
	msrv := httptest.NewServer(b.MetricsHandler())
	defer msrv.Close()
	resp, err = http.Get(msrv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`shopbot_updates_total{kind="command",result="ok"}`, "shopbot_handler_seconds_bucket", `shopbot_botapi_calls_total{method="sendMessage",result="ok"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if h.rdb.Mini == nil {
		return // stopping a shared real Redis is not ours to do
	}
	stop()
	h.rdb.Mini.Close()
	resp, err = http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("healthz with Redis down: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestOldSessionMigratesAndUnknownResetsPolitely(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	q := intake.NewQueue(h.rdb.Client, h.rdb.Prefix)
	// Chat 1 has a version-1 document; chat 2 one of a version this code does not know.
	h.rdb.Client.HSet(context.Background(), q.ConvKey(1), "rev", 3, "doc", `{"v":1,"lang":"uk","msg":0,"vars":{}}`)
	h.rdb.Client.HSet(context.Background(), q.ConvKey(2), "rev", 7, "doc", `{"v":99,"lang":"ru","flow":"???"}`)
	h.run(b)
	h.fake.SendCommand(1, "help", "")
	h.fake.SendCommand(2, "help", "")
	h.wait("sendMessage", 3)
	h.idle(b)
	if m := h.fake.MessagesIn(1); len(m) != 1 || m[0].RawText != helpText(locales.Uk) {
		t.Fatalf("migrated chat got %+v", m)
	}
	m := h.fake.MessagesIn(2)
	if len(m) != 2 || m[0].RawText != locales.T(locales.Ru, "err.session_reset") || m[1].RawText != helpText(locales.Ru) {
		t.Fatalf("reset chat got %d messages: %+v", len(m), m)
	}
	for chat, wantRev := range map[int64]int64{1: 4, 2: 8} {
		rev, doc, _ := b.Queue.Conversation(context.Background(), chat)
		if rev != wantRev || !strings.Contains(string(doc), `"v":2`) {
			t.Errorf("chat %d: rev %d doc %s", chat, rev, doc)
		}
	}
}

// Telegram's refunded_payment service message is not the buyer typing:
// it gets no "please send text" answer.
func TestRefundedPaymentServiceMessageIsIgnored(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	h.run(b)
	h.fake.PushUpdate(types.Update{Message: &types.Message{
		MessageID: 900, Date: time.Now().Unix(), Chat: types.Chat{ID: chat, Type: "private", FirstName: "B"},
		From:            &types.User{ID: chat, FirstName: "B"},
		RefundedPayment: &types.RefundedPayment{Currency: "XTR", TotalAmount: 10, InvoicePayload: "q:1", TelegramPaymentChargeID: "ch1"},
	}})
	h.fake.SendCommand(chat, "help", "")
	if got := h.wait("sendMessage", 1); len(got) != 1 || got[0].String("text") != helpText(locales.En) {
		t.Fatalf("sent %+v", got)
	}
	h.idle(b)
	if n := len(h.fake.CallsFor("sendMessage")); n != 1 {
		t.Fatalf("%d messages; the service message was answered", n)
	}
}

var fakePace = bottest.FakePace

type fakeClock = bottest.PaceClock

// onMessage closes seen when a log record says msg.
type onMessage struct {
	slog.Handler
	msg  string
	seen chan struct{}
	once sync.Once
}

func (h *onMessage) Enabled(context.Context, slog.Level) bool { return true }

func (h *onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

// helpText is /help as a buyer sees it when payments take Stars only.
func helpText(lang locales.Lang) string {
	more := "\n/settings — " + locales.T(lang, "cmd.settings")
	return locales.T(lang, "help.text", "payment", locales.T(lang, "help.pay_stars"), "more", more)
}
