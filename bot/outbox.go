package bot

import (
	"context"
	"time"
)

// The outbox holds the replies Telegram refused during a chat's flood wait
// and sends them once it ends, on a goroutine of the chat's own: the
// worker that handled the buyer's update is free at once (Do), and the
// chat's next updates wait until the outbox is empty (deferFlooded), so
// the buyer reads the answers in order. It lives in memory: a restart
// loses what it holds. Bounded: outboxChats chats of outboxPerChat calls;
// a reply beyond is dropped and counted (shopbot_botapi_calls_total,
// result "flood_dropped").
const (
	outboxChats   = 1000
	outboxPerChat = 4
)

// outboxMethods are the replies the outbox takes: messages and edits sent
// as JSON, whose callers read nothing back from a call that failed.
var outboxMethods = map[string]bool{
	"sendMessage": true, "editMessageText": true, "editMessageCaption": true, "editMessageReplyMarkup": true,
}

type heldCall struct {
	method string
	call   func(ctx context.Context) error
}

// hold queues a refused reply for chatID and reports whether it did; the
// first one starts the chat's sender.
func (a *API) hold(method string, chatID int64, call func(ctx context.Context) error) bool {
	if !outboxMethods[method] {
		return false
	}
	a.mu.Lock()
	q, busy := a.outbox[chatID]
	if len(q) >= outboxPerChat || !busy && len(a.outbox) >= outboxChats {
		a.mu.Unlock()
		return false
	}
	a.outbox[chatID] = append(q, heldCall{method, call})
	a.mu.Unlock()
	if !busy {
		go a.sendHeld(chatID)
	}
	return true
}

// sendHeld sends chatID's held replies in order, each waiting out the
// chat's flood wait and pace as a Push does, until none is left.
func (a *API) sendHeld(chatID int64) {
	ctx := WithClass(a.life(), Push)
	for {
		a.mu.Lock()
		q := a.outbox[chatID]
		if len(q) == 0 || ctx.Err() != nil {
			delete(a.outbox, chatID)
			a.mu.Unlock()
			return
		}
		h := q[0]
		a.mu.Unlock()
		if err := a.Do(ctx, h.method, chatID, h.call); err != nil && !IsNotModified(err) {
			a.log.Warn("send a reply held during a flood wait", "method", h.method, "chat", chatID, "err", err)
		}
		a.mu.Lock()
		a.outbox[chatID] = a.outbox[chatID][1:]
		a.mu.Unlock()
	}
}

// Holding reports whether replies to chat wait in the outbox.
func (a *API) Holding(chat int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.outbox[chat]
	return ok
}

// life is the context the outbox's senders stop with (setLife).
func (a *API) life() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lifeCtx == nil {
		return context.Background()
	}
	return a.lifeCtx
}

// setLife makes the outbox's senders stop when ctx ends (the bot's run).
func (a *API) setLife(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lifeCtx = ctx
}

// heldRecheck is how soon a chat whose flood wait is over but whose held
// replies are still going out is looked at again.
const heldRecheck = time.Second
