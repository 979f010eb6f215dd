package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/locales"
)

// broadcastBuyer is the first of the buyers who only receive a broadcast.
const broadcastBuyer = 5_000_000

// event is what the bot did in one buyer's chat.
type event struct {
	answer string         // the callback query it answered
	screen bool           // it sent or edited a message with a keyboard
	msg    *types.Message // that message, when Telegram took the call
}

// driver plays Telegram for the buyers: it posts their updates to the
// bot's webhook and routes the bot's calls back to their chats. With
// several webhooks (replicas of the shop behind one URL) it takes them in
// turn, update by update, as a round-robin load balancer would.
type driver struct {
	fake    *botapitest.Server
	urls    []string
	turn    atomic.Uint64
	posted  []atomic.Int64 // updates posted to each of urls
	client  *http.Client
	timeout time.Duration
	mu      sync.Mutex
	chats   map[int64]chan event
	queries sync.Map // callback query id -> chat
	stop    func()
}

func newDriver(fake *botapitest.Server, urls []string, timeout time.Duration) *driver {
	tr := &http.Transport{MaxIdleConnsPerHost: 100, MaxConnsPerHost: 100, DialContext: (&net.Dialer{}).DialContext}
	d := &driver{fake: fake, urls: urls, posted: make([]atomic.Int64, len(urls)), timeout: timeout, chats: map[int64]chan event{},
		client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	calls, stop := fake.Subscribe()
	d.stop = stop
	go d.route(calls)
	return d
}

func (d *driver) close() { d.stop() }

// next is the webhook the next update goes to.
func (d *driver) next() string {
	i := int((d.turn.Add(1) - 1) % uint64(len(d.urls)))
	d.posted[i].Add(1)
	return d.urls[i]
}

func (d *driver) route(calls <-chan calls.Call) {
	for c := range calls {
		var chat int64
		var ev event
		switch c.Method {
		case "answerCallbackQuery":
			id := c.String("callback_query_id")
			v, ok := d.queries.LoadAndDelete(id)
			if !ok {
				continue
			}
			chat, ev.answer = v.(int64), id
		case "sendMessage", "editMessageText", "sendInvoice", "sendPhoto", "editMessageCaption":
			if !c.Has("reply_markup") && c.Method != "sendInvoice" {
				continue // a notice, not the screen
			}
			chat, ev.screen = c.Int("chat_id"), true
			switch m := c.Result.(type) {
			case *types.Message:
				ev.msg = m
			case types.Message:
				ev.msg = &m
			}
		default:
			continue
		}
		d.mu.Lock()
		ch := d.chats[chat]
		d.mu.Unlock()
		if ch != nil {
			select {
			case ch <- ev:
			default: // a buyer who gave up; never block the others
			}
		}
	}
}

// ready waits until the bot on addr listens and fake has seen webhooks
// setWebhook calls.
func ready(ctx context.Context, fake *botapitest.Server, addr string, exited chan error, webhooks int) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err // for the caller, which waits for the exit when it stops the bot
			return fmt.Errorf("the bot exited: %v", err)
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			if len(fake.CallsFor("setWebhook")) >= webhooks {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("the bot did not serve its webhook within 60 s")
		}
		sleep(ctx, 50*time.Millisecond)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

type buyer struct {
	d      *driver
	chat   int64
	events chan event
	screen *types.Message
}

func (d *driver) buyer(chat int64) *buyer {
	b := &buyer{d: d, chat: chat, events: make(chan event, 64)}
	d.mu.Lock()
	d.chats[chat] = b.events
	d.mu.Unlock()
	return b
}

// act posts upd and waits until the bot answered it: the callback answer
// (for a press) and the new screen. It returns how long that took.
func (b *buyer) act(ctx context.Context, upd types.Update) (time.Duration, error) {
	return b.actUntil(ctx, upd, nil)
}

// actUntil is act waiting for a screen want accepts (nil: any).
func (b *buyer) actUntil(ctx context.Context, upd types.Update, want func(*types.Message) bool) (time.Duration, error) {
	for len(b.events) > 0 { // late calls of an earlier action
		<-b.events
	}
	query := ""
	if upd.CallbackQuery != nil {
		query = upd.CallbackQuery.ID
		b.d.queries.Store(query, b.chat)
	}
	start := time.Now()
	if err := postJSON(b.d.client, b.d.next(), upd); err != nil {
		return 0, err
	}
	timeout := time.NewTimer(b.d.timeout)
	defer timeout.Stop()
	answered, shown := query == "", false
	for !answered || !shown {
		select {
		case ev := <-b.events:
			if ev.answer == query && query != "" {
				answered = true
			}
			if ev.screen && (want == nil || ev.msg != nil && want(ev.msg)) {
				shown = true
				if ev.msg != nil && ev.msg.ReplyMarkup != nil {
					b.screen = ev.msg
				}
			}
		case <-timeout.C:
			return 0, fmt.Errorf("chat %d: no answer within %v", b.chat, b.d.timeout)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return time.Since(start), nil
}

// browse opens the menu and presses buttons: a product line from the
// main menu, then back, and so on. It returns the latencies of the
// answered actions and how many were lost.
func (b *buyer) browse(ctx context.Context, presses int, think time.Duration, rng *rand.Rand) (lat []time.Duration, lost int) {
	for i := 0; i <= presses && ctx.Err() == nil; i++ {
		var upd types.Update
		if data := b.next(rng); data == "" {
			upd = b.d.fake.TextUpdate(b.chat, "/start")
		} else {
			upd = b.d.fake.PressUpdate(b.chat, b.screen.MessageID, data)
		}
		took, err := b.act(ctx, upd)
		if err != nil {
			lost++
			b.screen = nil
		} else {
			lat = append(lat, took)
		}
		if think > 0 {
			sleep(ctx, think/2+time.Duration(rng.Int64N(int64(think))))
		}
	}
	return lat, lost
}

// next picks the button to press on the current screen: back (or the main
// menu) when there is one, else a random button; "" to send /start.
func (b *buyer) next(rng *rand.Rand) string {
	if b.screen == nil || b.screen.ReplyMarkup == nil {
		return ""
	}
	var any []string
	for _, btn := range b.screen.ReplyMarkup.Buttons() {
		if btn.CallbackData == "" {
			continue
		}
		if btn.Text == backLabel || btn.Text == locales.T(locales.En, "btn.menu") || btn.Text == locales.T(locales.En, "btn.cancel") {
			return btn.CallbackData
		}
		any = append(any, btn.CallbackData)
	}
	if len(any) == 0 {
		return ""
	}
	return any[rng.IntN(min(len(any), lines))]
}

// startBroadcast registers n buyers who only get the broadcast, and has
// the admin compose one as an owner would: a photo with a caption (the
// file_id the admin sent it with is sent again to each buyer) and a button
// into the shop, to every buyer; it returns once the broadcast is under
// way.
func startBroadcast(ctx context.Context, d *driver, rdb redis.UniversalClient, n int) error {
	users := records.NewUsers(rdb, redisstore.DefaultPrefix)
	for i := range n {
		if err := users.Started(ctx, int64(broadcastBuyer+i), time.Now()); err != nil {
			return err
		}
	}
	a := d.buyer(admin)
	press := func(prefix string) func() types.Update {
		return func() types.Update {
			for _, btn := range a.screen.ReplyMarkup.Buttons() {
				if strings.HasPrefix(btn.Text, prefix) && btn.CallbackData != "" {
					return d.fake.PressUpdate(admin, a.screen.MessageID, btn.CallbackData)
				}
			}
			return types.Update{}
		}
	}
	// hasButton is a screen with a button whose label starts with prefix.
	hasButton := func(prefix string) func(*types.Message) bool {
		return func(m *types.Message) bool {
			for _, btn := range m.ReplyMarkup.Buttons() {
				if strings.HasPrefix(btn.Text, prefix) {
					return true
				}
			}
			return false
		}
	}
	send := locales.T(locales.En, "btn.bc_buttons")
	steps := []struct {
		upd  func() types.Update
		want func(*types.Message) bool // the screen the step waits for
	}{
		{func() types.Update { return d.fake.TextUpdate(admin, "/broadcast") }, hasButton(locales.T(locales.En, "btn.cancel"))},
		// The preview (the photo, no keyboard) comes first, then the summary.
		{func() types.Update { return d.fake.PhotoUpdate(admin, "Big sale today: gift cards -10%") }, hasButton(send)},
		{press(send), hasButton(locales.T(locales.En, "btn.bc_no_buttons"))},
		{func() types.Update { return d.fake.TextUpdate(admin, "Gift cards | giftcards") }, hasButton("📤")},
		{press("📤"), nil},
	}
	for i, step := range steps {
		upd := step.upd()
		if upd.UpdateID == 0 {
			return fmt.Errorf("broadcast step %d: the screen has no such button", i+1)
		}
		if _, err := a.actUntil(ctx, upd, step.want); err != nil {
			return fmt.Errorf("broadcast step %d: %w", i+1, err)
		}
	}
	// Wait until the broadcast is under way.
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, c := range d.fake.CallsFor("sendPhoto") {
			if c.Int("chat_id") >= broadcastBuyer {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("the broadcast did not start")
		}
		sleep(ctx, 20*time.Millisecond)
	}
}
