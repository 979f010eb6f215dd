package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"shopbot/flows"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"golang.org/x/time/rate"
)

// ErrBlocked means the buyer blocked the bot (Telegram answered 403). It is
// recorded on the buyer and never retried.
var ErrBlocked = flows.ErrBlocked

// Limits of outgoing messages: Telegram allows about one message a second
// in one chat (short bursts pass) and about thirty a second overall.
const (
	perChatRate  = 1
	perChatBurst = 3
	globalRate   = 30
	max429Tries  = 4
)

// messageMethods are the calls that count against Telegram's message
// limits; answers to queries, payments and reads do not.
var messageMethods = map[string]bool{
	"sendMessage": true, "sendDocument": true, "sendPhoto": true, "sendInvoice": true, "copyMessage": true,
	"editMessageText": true, "editMessageReplyMarkup": true, "editMessageCaption": true,
}

// API wraps the Bot API client with the outgoing limits, 429 retries, 403
// handling and metrics. Every outgoing call goes through Do.
type API struct {
	TG        *tgbot.Bot
	metrics   *Metrics
	log       *slog.Logger
	global    *rate.Limiter
	mu        sync.Mutex
	chats     map[int64]*chatLimiter
	OnBlocked func(ctx context.Context, chatID int64) // called once per 403
	Sleep     func(ctx context.Context, d time.Duration) error
	Unlimited bool // no local rate limits (benchmarks measure the rest)
}

type chatLimiter struct {
	l    *rate.Limiter
	used time.Time
}

// NewAPI returns an API over tg.
func NewAPI(tg *tgbot.Bot, m *Metrics, log *slog.Logger) *API {
	return &API{
		TG: tg, metrics: m, log: log,
		global: rate.NewLimiter(globalRate, globalRate),
		chats:  map[int64]*chatLimiter{},
		Sleep:  sleepCtx,
	}
}

// Do runs one Bot API call for chatID (0 when not chat-bound), waiting for
// the rate limits, retrying after a 429's retry_after, and turning a 403
// into ErrBlocked.
func (a *API) Do(ctx context.Context, method string, chatID int64, call func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		if messageMethods[method] && !a.Unlimited {
			if err := a.wait(ctx, chatID); err != nil {
				return err
			}
		}
		err := call(ctx)
		var tooMany *tgbot.TooManyRequestsError
		switch {
		case err == nil:
			a.count(method, "ok")
			return nil
		case errors.As(err, &tooMany):
			a.count(method, "429")
			if attempt >= max429Tries {
				return fmt.Errorf("%s: still rate limited after %d tries: %w", method, attempt, err)
			}
			d := time.Duration(max(tooMany.RetryAfter, 1)) * time.Second
			a.log.Warn("bot api rate limited", "method", method, "chat", chatID, "retry_after_s", d.Seconds())
			if err := a.Sleep(ctx, d); err != nil {
				return err
			}
		case errors.Is(err, tgbot.ErrorForbidden):
			a.count(method, "403")
			if chatID != 0 && a.OnBlocked != nil {
				a.OnBlocked(ctx, chatID)
			}
			return fmt.Errorf("%s: %w", method, ErrBlocked)
		case errors.Is(err, tgbot.ErrorBadRequest):
			a.count(method, "400")
			return err
		default:
			a.count(method, "error")
			return err
		}
	}
}

func (a *API) count(method, result string) {
	if a.metrics != nil {
		a.metrics.BotAPI.WithLabelValues(method, result).Inc()
	}
}

func (a *API) wait(ctx context.Context, chatID int64) error {
	if chatID != 0 {
		if err := a.chat(chatID).Wait(ctx); err != nil {
			return err
		}
	}
	return a.global.Wait(ctx)
}

func (a *API) chat(id int64) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	c := a.chats[id]
	if c == nil {
		if len(a.chats) > 10000 { // forget chats idle long enough to have a full bucket
			for k, v := range a.chats {
				if now.Sub(v.used) > perChatBurst*time.Second {
					delete(a.chats, k)
				}
			}
		}
		c = &chatLimiter{l: rate.NewLimiter(perChatRate, perChatBurst)}
		a.chats[id] = c
	}
	c.used = now
	return c.l
}

// IsNotModified reports Telegram's "message is not modified" answer to an
// edit that changes nothing, which is harmless.
func IsNotModified(err error) bool {
	return err != nil && strings.Contains(err.Error(), "message is not modified")
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
