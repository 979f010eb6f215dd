// Package bottest runs the whole shop for tests: the shop as
// storefront.New assembles it (the adapter and every feature), over the fake Bot API server
// (botapitest) and a throwaway Redis (statetest). Feature packages test
// themselves end to end with it: a buyer's taps and payments go in through
// the fake Telegram, and the test waits on the calls the shop makes.
package bottest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot"
	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state/statetest"
)

// Chat is the buyer's chat (and user id) of the tests.
const Chat = int64(5001)

// Admin is the admin's chat (and user id) of the tests that need one.
const Admin = int64(9000)

// En is the English text of a locale key, what the tests expect to see.
func En(key string, kv ...any) string { return locales.T(locales.En, key, kv...) }

// Harness is a fake Telegram and a Redis for one test.
type Harness struct {
	T    *testing.T
	Fake *botapitest.Server
	Rdb  *statetest.Redis

	mu      sync.Mutex
	changed chan struct{} // closed when a bot of the harness changed something
}

// New returns a harness whose servers close when the test ends; opts
// configure its fake Bot API server (its clock, for one).
func New(t *testing.T, opts ...botapitest.Option) *Harness {
	return &Harness{T: t, Fake: botapitest.NewT(t, opts...), Rdb: statetest.New(t), changed: make(chan struct{})}
}

// Notify wakes every Until (the bots' Options.Notify).
func (h *Harness) Notify() {
	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

func (h *Harness) changes() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// WaitLimit is how long Until waits before giving up.
const WaitLimit = 10 * time.Second

// recheck is how often Until looks again when nothing told it to: the
// safety net for the few changes no notice covers (a field of an order
// that keeps its status, the upstream simulator's own state).
const recheck = 20 * time.Millisecond

// Until waits until cond holds and reports whether it did within
// WaitLimit. It looks again whenever the shop does something a test can
// see: a Bot API call (the fake server's notice), an update handled or an
// order moved (the bots' Notify); and every recheck for what no notice
// covers. It never sleeps.
func (h *Harness) Until(cond func() bool) bool { return h.UntilWithin(WaitLimit, cond) }

// UntilWithin is Until with its own limit.
func (h *Harness) UntilWithin(limit time.Duration, cond func() bool) bool {
	calls, stop := h.Fake.Subscribe()
	defer stop()
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	expire := time.NewTimer(limit)
	defer expire.Stop()
	for !cond() {
		select {
		case _, ok := <-calls:
			if !ok {
				calls = nil // the server closed
			}
		case <-h.changes():
		case <-tick.C:
		case <-expire.C:
			return cond()
		}
	}
	return true
}

// NewBot builds a shop on the harness's fake server and Redis; mod adjusts
// its options (nil: the defaults of the tests).
func (h *Harness) NewBot(mod func(*storefront.Options)) *storefront.Shop {
	h.T.Helper()
	opts := storefront.Options{Options: bot.Options{
		Token: h.Fake.Token(), APIURL: h.Fake.URL(), Prefix: h.Rdb.Prefix,
		PollTimeout: time.Second, IdlePoll: 10 * time.Millisecond, Workers: 4,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Notify: h.Notify,
	}}
	// Support relays fold a buyer's messages for 50 ms, not seconds.
	opts.Support.Fold, opts.Support.Tick = 50*time.Millisecond, 10*time.Millisecond
	if os.Getenv("TEST_LOG") != "" { // the shop's logs, to debug a test
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-4 * len(os.Getenv("TEST_LOG")) / 5)}))
	}
	if mod != nil {
		mod(&opts)
	}
	b, err := storefront.New(opts, h.Rdb.Client, flows.NewEngine(nil, locales.En))
	if err != nil {
		h.T.Fatal(err)
	}
	return b
}

// Run starts b and returns a stop function that cancels it and checks that
// Run returned nil (it reports how long stopping took). The test's end
// stops it too.
func (h *Harness) Run(b *storefront.Shop) (stop func() time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	stop = func() time.Duration {
		var took time.Duration
		once.Do(func() {
			start := time.Now()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					h.T.Errorf("Run returned %v", err)
				}
			case <-time.After(15 * time.Second):
				h.T.Error("Run did not return within 15s of cancel")
			}
			took = time.Since(start)
		})
		return took
	}
	h.T.Cleanup(func() { stop() })
	return stop
}

// Wait waits until the shop made n calls of method and returns them.
func (h *Harness) Wait(method string, n int) []calls.Call {
	h.T.Helper()
	return h.WaitWithin(WaitLimit, method, n)
}

// WaitWithin is Wait with its own limit, for a test that makes the shop
// handle many updates.
func (h *Harness) WaitWithin(limit time.Duration, method string, n int) []calls.Call {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	calls, err := h.Fake.WaitFor(ctx, method, n)
	if err != nil {
		h.T.Fatalf("waiting for %d %s: %v (have %d)", n, method, err, len(h.Fake.CallsFor(method)))
	}
	return calls
}

// Listening waits until a bot polls for updates: it has set itself up
// (getMe, the webhook, the command menu) and listens.
func (h *Harness) Listening() {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	defer cancel()
	if err := h.Fake.WaitPolling(ctx, 1); err != nil {
		h.T.Fatal(err)
	}
}

// Idle waits until no chat has updates queued or in progress.
func (h *Harness) Idle(b *storefront.Shop) {
	h.T.Helper()
	if !h.Until(func() bool { n, err := b.Queue.Pending(context.Background()); return err == nil && n == 0 }) {
		h.T.Fatal("the queue never drained")
	}
}

// WaitAnswer waits for the answer to callback query id.
func (h *Harness) WaitAnswer(id string) botapitest.CallbackAnswer {
	h.T.Helper()
	var a botapitest.CallbackAnswer
	if !h.Until(func() bool { var ok bool; a, ok = h.Fake.CallbackAnswer(id); return ok }) {
		h.T.Fatalf("callback query %s never answered", id)
	}
	return a
}

// Menu is the bot's last message in the buyer's chat.
func (h *Harness) Menu() types.Message {
	h.T.Helper()
	m, ok := h.Fake.LastMessage(Chat)
	if !ok {
		h.T.Fatal("no bot message in the chat")
	}
	return m
}

// HasButton reports whether m has a button labelled label.
func HasButton(m types.Message, label string) bool {
	for _, b := range m.ReplyMarkup.Buttons() {
		if b.Text == label {
			return true
		}
	}
	return false
}

// Tap presses the live menu's button whose label starts with prefix and
// waits until the bot has handled it.
func (h *Harness) Tap(b *storefront.Shop, prefix string) {
	h.T.Helper()
	m := h.Menu()
	for _, btn := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(btn.Text, prefix) {
			h.WaitAnswer(h.Fake.Press(Chat, m.MessageID, btn.CallbackData))
			h.Idle(b)
			return
		}
	}
	h.T.Fatalf("no button %q on %q", prefix, m.Text)
}

// Say sends text and waits for the screen the bot sends anew in answer.
func (h *Harness) Say(b *storefront.Shop, text string) {
	h.T.Helper()
	n := len(h.Fake.CallsFor("sendMessage"))
	h.Fake.SendText(Chat, text)
	h.Wait("sendMessage", n+1)
	h.Idle(b)
}

// Button returns the callback data of the button labelled label on m.
func Button(t *testing.T, m types.Message, label string) string {
	t.Helper()
	for _, b := range m.ReplyMarkup.Buttons() {
		if b.Text == label {
			return b.CallbackData
		}
	}
	t.Fatalf("no button %q on message %d", label, m.MessageID)
	return ""
}

// FakePace puts the API on a fake clock that moves only when it sleeps:
// every pace and flood wait stays in force, and a test never waits for it.
func FakePace(a *bot.API) *PaceClock {
	c := &PaceClock{now: time.Now()}
	a.Now, a.Sleep = c.Now, c.Sleep
	return c
}

// PaceClock is the fake clock of FakePace.
type PaceClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// Now is the clock's time.
func (c *PaceClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Sleep moves the clock by d at once.
func (c *PaceClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return ctx.Err()
}

// Slept returns the sleeps so far.
func (c *PaceClock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// JumpClock runs with the wall clock and jumps over every sleep at once.
// An API on it (Pace) keeps every pace and flood wait in force on this
// clock, and a test never waits for one. Unlike FakePace's clock it also
// moves with real time, so what the shop waits for on the wall clock (a
// lock handed over between processes, a lease) passes on it too; one
// JumpClock can pace several bots and be the fake server's clock
// (botapitest.WithClock(c.Now)), so the times the server records are the
// times the pace ran on.
type JumpClock struct {
	mu     sync.Mutex
	ahead  time.Duration // the sleeps jumped over so far
	jumped int
}

// NewJumpClock returns a clock at the wall clock's time.
func NewJumpClock() *JumpClock { return &JumpClock{} }

// Pace puts a's pacing on the clock.
func (c *JumpClock) Pace(a *bot.API) { a.Now, a.Sleep = c.Now, c.Sleep }

// Now is the wall clock's time plus every sleep jumped over.
func (c *JumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.ahead)
}

// Sleep moves the clock by d at once.
func (c *JumpClock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.mu.Lock()
		c.ahead += d
		c.jumped++
		c.mu.Unlock()
	}
	return ctx.Err()
}

// Jumped is how many sleeps the clock jumped over.
func (c *JumpClock) Jumped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.jumped
}

// BotMessages are the bot's messages in chatID.
func (h *Harness) BotMessages(chatID int64) []types.Message {
	var out []types.Message
	for _, m := range h.Fake.MessagesIn(chatID) {
		if m.From != nil && m.From.IsBot {
			out = append(out, m)
		}
	}
	return out
}

// Command sends /cmd arg from chatID and waits for the bot's new message
// there, then until the bot is idle; it returns that message.
func (h *Harness) Command(b *storefront.Shop, chatID int64, cmd, arg string) types.Message {
	h.T.Helper()
	n := len(h.BotMessages(chatID))
	h.Fake.SendCommand(chatID, cmd, arg)
	if !h.Until(func() bool { return len(h.BotMessages(chatID)) > n }) {
		h.T.Fatalf("no answer to /%s %s in chat %d", cmd, arg, chatID)
	}
	h.Idle(b)
	msgs := h.BotMessages(chatID)
	return msgs[len(msgs)-1]
}

// Press taps the button labelled label on message m in chatID and waits
// until the bot has handled it; it returns the message as it is then.
func (h *Harness) Press(b *storefront.Shop, chatID int64, m types.Message, label string) types.Message {
	h.T.Helper()
	q, err := h.Fake.PressButton(chatID, m.MessageID, label)
	if err != nil {
		h.T.Fatal(err)
	}
	h.WaitAnswer(q)
	h.Idle(b)
	got, _ := h.Fake.Message(chatID, m.MessageID)
	return got
}

// NoViolations fails the test when the shop broke the Bot API schema.
func (h *Harness) NoViolations() {
	h.T.Helper()
	if v := h.Fake.Violations(); len(v) > 0 {
		h.T.Fatalf("Bot API schema violations: %v", v)
	}
}

// WaitText waits until a message in chatID contains part.
func (h *Harness) WaitText(chatID int64, part string) types.Message {
	h.T.Helper()
	var found types.Message
	if h.Until(func() bool {
		for _, m := range h.Fake.MessagesIn(chatID) {
			if strings.Contains(m.RawText, part) {
				found = m
				return true
			}
		}
		return false
	}) {
		return found
	}
	h.T.Fatalf("chat %d never showed %q", chatID, part)
	return types.Message{}
}

// SayIn sends text from chatID and waits until the bot has handled it.
func (h *Harness) SayIn(b *storefront.Shop, chatID int64, text string) {
	h.T.Helper()
	n := len(h.BotMessages(chatID))
	h.Fake.SendText(chatID, text)
	h.WaitBotMessages(chatID, n+1)
	h.Idle(b)
}

// WaitBotMessages waits until chatID has n bot messages.
func (h *Harness) WaitBotMessages(chatID int64, n int) {
	h.T.Helper()
	if !h.Until(func() bool { return len(h.BotMessages(chatID)) >= n }) {
		h.T.Fatalf("chat %d: %d bot messages, want %d", chatID, len(h.BotMessages(chatID)), n)
	}
}

// Render prints a bot message as a person sees it: the text (or
// caption, or document name) and the inline buttons, one row a line. Button
// callback data is left out (it carries random nonces); URL buttons show
// their URL.
func Render(m types.Message) string {
	var b strings.Builder
	switch {
	case m.Document != nil:
		b.WriteString("[file " + m.Document.FileName + "]\n")
		if m.Caption != "" {
			b.WriteString(m.Caption + "\n")
		}
	case m.Invoice != nil:
		b.WriteString("[invoice " + m.Invoice.Title + "]\n")
	case m.Caption != "":
		b.WriteString(m.Caption + "\n")
	default:
		b.WriteString(m.Text + "\n")
	}
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			labels := make([]string, len(row))
			for i, btn := range row {
				labels[i] = "[" + btn.Text + "]"
				if btn.URL != "" {
					labels[i] = "[" + btn.Text + " -> " + btn.URL + "]"
				}
			}
			b.WriteString(strings.Join(labels, " ") + "\n")
		}
	}
	return b.String()
}
