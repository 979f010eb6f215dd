//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"shopbot/bot/botapitest"
)

// webhookFeed plays Telegram's webhook delivery for the chaos test: the
// fake Bot API server queues the updates (buyers' messages, presses,
// pre-checkout queries, payments); the feed POSTs each to a random replica
// (a load balancer in front of the replicas), several at once across chats
// and one at a time within a chat, and forgets it only after a 2xx. A
// delivery that fails (a killed or frozen replica) is retried on another
// replica. With probability dupRate an update that was answered 2xx is
// delivered once more, with the same update_id, to a random replica: what
// Telegram does when the answer to a webhook request is lost.
type webhookFeed struct {
	fake    *botapitest.Server
	ports   []int
	path    string
	secret  string
	dupRate float64
	client  *http.Client

	mu       sync.Mutex
	inflight map[int64]bool // update ids being delivered
	busy     map[int64]bool // chats with an update being delivered

	delivered atomic.Int64 // updates confirmed
	dups      atomic.Int64 // extra deliveries of an update already answered 2xx
	failures  atomic.Int64 // delivery attempts that got no 2xx
}

func newWebhookFeed(fake *botapitest.Server, ports []int, path, secret string, dupRate float64) *webhookFeed {
	return &webhookFeed{
		fake: fake, ports: ports, path: path, secret: secret, dupRate: dupRate,
		client:   &http.Client{Timeout: 5 * time.Second},
		inflight: map[int64]bool{}, busy: map[int64]bool{},
	}
}

// setDupRate changes the redelivery probability (0 stops duplicates).
func (f *webhookFeed) setDupRate(p float64) {
	f.mu.Lock()
	f.dupRate = p
	f.mu.Unlock()
}

// run delivers until ctx ends.
func (f *webhookFeed) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	freed := make(chan struct{}, 1) // a chat's delivery ended: its next update may go
	for ctx.Err() == nil {
		changed := f.fake.UpdatesChanged()
		blocked := map[int64]bool{} // chats whose older update waits: keep their order
		for _, u := range f.fake.QueuedUpdates() {
			chat := updateChat(u.Raw)
			f.mu.Lock()
			if f.inflight[u.ID] || f.busy[chat] || blocked[chat] {
				f.mu.Unlock()
				blocked[chat] = true
				continue
			}
			f.inflight[u.ID], f.busy[chat] = true, true
			f.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.deliver(ctx, u)
				f.mu.Lock()
				delete(f.inflight, u.ID)
				delete(f.busy, chat)
				f.mu.Unlock()
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-freed:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// deliver POSTs u until a replica answers 2xx, then maybe once more.
func (f *webhookFeed) deliver(ctx context.Context, u botapitest.QueuedUpdate) {
	for ctx.Err() == nil {
		if f.post(ctx, u.Raw) {
			f.fake.ConfirmUpdate(u.ID)
			f.delivered.Add(1)
			f.mu.Lock()
			dup := f.dupRate > 0 && rand.Float64() < f.dupRate
			f.mu.Unlock()
			if dup {
				f.dups.Add(1)
				_ = f.post(ctx, u.Raw)
			}
			return
		}
		f.failures.Add(1)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(100+rand.IntN(200)) * time.Millisecond):
		}
	}
}

// post sends one delivery to a random replica and reports a 2xx.
func (f *webhookFeed) post(ctx context.Context, raw []byte) bool {
	port := f.ports[rand.IntN(len(f.ports))]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(port)+f.path, bytes.NewReader(raw))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", f.secret)
	resp, err := f.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode <= 299
}

// updateChat returns the chat an update belongs to (the private chat of
// the user who acted), 0 when it has none.
func updateChat(raw []byte) int64 {
	var u struct {
		Message *struct {
			Chat struct {
				ID int64 `json:"id"`
			} `json:"chat"`
		} `json:"message"`
		CallbackQuery *struct {
			From struct {
				ID int64 `json:"id"`
			} `json:"from"`
		} `json:"callback_query"`
		PreCheckoutQuery *struct {
			From struct {
				ID int64 `json:"id"`
			} `json:"from"`
		} `json:"pre_checkout_query"`
		MyChatMember *struct {
			Chat struct {
				ID int64 `json:"id"`
			} `json:"chat"`
		} `json:"my_chat_member"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return 0
	}
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.CallbackQuery != nil:
		return u.CallbackQuery.From.ID
	case u.PreCheckoutQuery != nil:
		return u.PreCheckoutQuery.From.ID
	case u.MyChatMember != nil:
		return u.MyChatMember.Chat.ID
	}
	return 0
}
