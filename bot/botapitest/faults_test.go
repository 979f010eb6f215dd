package botapitest

import (
	"context"
	"encoding/json"
	"errors"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
)

func TestFaultInjection(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	ctx := t.Context()
	send := func(chat int64) error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "hi"})
		return err
	}

	t.Run("429 with retry_after", func(t *testing.T) {
		s.FailNext("sendMessage", 2, 429, "", 7)
		for range 2 {
			err := send(1)
			var tooMany *bot.TooManyRequestsError
			if !errors.As(err, &tooMany) || tooMany.RetryAfter != 7 {
				t.Fatalf("err = %v, want *bot.TooManyRequestsError with RetryAfter 7", err)
			}
		}
		if err := send(1); err != nil {
			t.Errorf("third call: %v", err)
		}
		calls := s.CallsFor("sendMessage")
		if c := calls[0]; c.ErrorCode != 429 || c.Description != "Too Many Requests: retry after 7" {
			t.Errorf("recorded call = %+v", c)
		}
	})

	t.Run("403 blocked", func(t *testing.T) {
		s.FailNext("sendMessage", 1, 403, "", 0)
		if err := send(1); !errors.Is(err, bot.ErrorForbidden) || !strings.Contains(err.Error(), "bot was blocked by the user") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("400 with a description, any method", func(t *testing.T) {
		s.FailNext("*", 1, 400, "Bad Request: chat not found", 0)
		if _, err := b.GetMe(ctx); !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "chat not found") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("BlockChat", func(t *testing.T) {
		pending := s.PendingUpdates()
		s.BlockChat(9)
		if err := send(9); !errors.Is(err, bot.ErrorForbidden) {
			t.Errorf("send to a blocked chat: err = %v", err)
		}
		if err := send(8); err != nil {
			t.Errorf("send to another chat: %v", err)
		}
		s.UnblockChat(9)
		if err := send(9); err != nil {
			t.Errorf("send after unblock: %v", err)
		}
		if s.PendingUpdates() != pending+2 {
			t.Fatalf("my_chat_member updates: pending %d, want %d", s.PendingUpdates(), pending+2)
		}
		_, a := postJSON(t, s, "getUpdates", map[string]any{"offset": -2})
		var ups []types.Update
		_ = json.Unmarshal(a.Result, &ups)
		if len(ups) != 2 || ups[0].MyChatMember.NewChatMember.Status != "kicked" || ups[1].MyChatMember.NewChatMember.Status != "member" {
			t.Errorf("updates = %s", a.Result)
		}
	})

	t.Run("latency", func(t *testing.T) {
		s.SetLatency(time.Second)
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := b.GetMe(short)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want a deadline", err)
		}
		s.SetLatency(0)
	})

	t.Run("stub", func(t *testing.T) {
		s.Stub("getChat", func(c calls.Call) (any, error) {
			return map[string]any{"id": c.Int("chat_id"), "type": "private", "accent_color_id": 0, "max_reaction_count": 11, "accepted_gift_types": map[string]any{"unlimited_gifts": true, "limited_gifts": true, "unique_gifts": true, "premium_subscription": true, "gifts_from_channels": true}}, nil
		})
		if c, err := b.GetChat(ctx, &bot.GetChatParams{ChatID: 5}); err != nil || c.ID != 5 {
			t.Errorf("getChat = %+v, %v", c, err)
		}
		s.Stub("getChat", func(calls.Call) (any, error) {
			return nil, &APIError{Code: 400, Description: "Bad Request: chat not found"}
		})
		if _, err := b.GetChat(ctx, &bot.GetChatParams{ChatID: 5}); !errors.Is(err, bot.ErrorBadRequest) {
			t.Errorf("err = %v", err)
		}
	})
}

// Telegram's per-chat limit: messages over it are refused with 429 and
// retry_after, and so is every message to that chat until the wait ends;
// other chats and answers to queries go on.
func TestChatFloodLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := NewT(t, WithClock(clock))
	b := newBot(t, s)
	ctx := t.Context()
	s.ChatFloodLimit(3, time.Second, 10*time.Second)
	send := func(chat int64) error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: chat, Text: "hi"})
		return err
	}
	retryAfter := func(err error) int {
		var tooMany *bot.TooManyRequestsError
		if !errors.As(err, &tooMany) {
			return 0
		}
		return tooMany.RetryAfter
	}
	for i := range 3 {
		if err := send(1); err != nil {
			t.Fatalf("message %d within the limit: %v", i+1, err)
		}
	}
	if got := retryAfter(send(1)); got != 10 {
		t.Fatalf("the fourth message: retry_after %d, want 10", got)
	}
	if err := send(2); err != nil {
		t.Fatalf("another chat: %v", err)
	}
	advance(3500 * time.Millisecond)
	if got := retryAfter(send(1)); got != 7 {
		t.Fatalf("during the wait: retry_after %d, want the 7 s left", got)
	}
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 1, MessageID: 1, Text: "x"}); retryAfter(err) != 7 {
		t.Fatalf("an edit during the wait: %v", err)
	}
	advance(7 * time.Second)
	if err := send(1); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
}
