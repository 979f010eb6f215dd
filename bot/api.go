package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"shopbot/bot/metrics"
	"shopbot/flows"
	"shopbot/state/redisstore/work"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"golang.org/x/time/rate"
)

// ErrFlooded means Telegram refuses messages to the chat (or from the whole
// bot) for a while (429 retry_after): a reply met it and was not sent. A
// reply never waits out a flood wait, as the worker that handles the
// buyer's update would be held all that time; the dispatcher defers the
// chat's next updates until the wait ends instead (dispatch.go).
var ErrFlooded = errors.New("telegram flood wait")

// BroadcastRate is the most broadcast messages sent per second, below
// Telegram's 30/s so buyers' own conversations keep flowing.
const BroadcastRate = 25

// Class says how urgent an outgoing call is. Telegram documents no limit
// for answering a user; it signals its limits with 429 and retry_after,
// which every class honours. Local pacing applies only to messages the
// shop starts on its own.
type Class uint8

const (
	// Push is a message the shop starts for one chat: a delivery, a refund
	// notice, an operator message, an alert to an admin. Paced per chat at
	// about one a second (short bursts pass), Telegram's guidance.
	Push Class = iota
	// Reply answers a person's own action: the callback answer, the edited
	// or new menu, notices, the pre-checkout answer, an invoice. It goes
	// out at once; a message to a chat in a flood wait fails at once with
	// ErrFlooded instead of waiting.
	Reply
	// Bulk is a broadcast: paced per chat and shop-wide at BroadcastRate,
	// so it never takes the capacity replies need.
	Bulk
)

// WithClass returns ctx whose Bot API calls are of class c. Calls made
// without a class are Push.
func WithClass(ctx context.Context, c Class) context.Context {
	return context.WithValue(ctx, classKey{}, c)
}

type classKey struct{}

func classOf(ctx context.Context) Class {
	c, _ := ctx.Value(classKey{}).(Class)
	return c
}

const (
	perChatRate  = 1
	perChatBurst = 3
	max429Tries  = 4
	// floodAllAfter distinct chats refused within floodWindow mean that
	// Telegram refuses the whole bot, not one chat.
	floodAllAfter = 3
	floodWindow   = time.Second
)

// pacedMethods are the calls that count against Telegram's message limits;
// answers to queries, payments and reads do not.
var pacedMethods = map[string]bool{
	"sendMessage": true, "sendDocument": true, "sendPhoto": true, "sendVideo": true, "sendInvoice": true, "copyMessage": true,
	"editMessageText": true, "editMessageReplyMarkup": true, "editMessageCaption": true, "editMessageMedia": true,
}

// API wraps the Bot API client with pacing by class, flood waits shared
// between replicas, 429 retries, 403 handling and metrics. Every outgoing
// call goes through Do.
type API struct {
	TG        *tgbot.Bot
	metrics   *metrics.Metrics
	log       *slog.Logger
	OnBlocked func(ctx context.Context, chatID int64) // called once per 403
	// Sleep and Now are the clock; tests make both fake, which keeps every
	// limit in force while the test runs at once.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// Floods shares flood waits between replicas (nil: this process only).
	Floods *work.Floods

	client *http.Client
	base   string // the Bot API URL with the token, up to the method
	token  string

	mu    sync.Mutex
	chats map[int64]*chatPace
	all   time.Time // the whole bot waits until then
	hits  []floodHit
	bulk  *rate.Limiter

	outbox  map[int64][]heldCall // replies refused in a flood wait (outbox.go)
	lifeCtx context.Context
}

type chatPace struct {
	l     *rate.Limiter // Push and Bulk messages to the chat
	until time.Time     // Telegram's flood wait for the chat
	used  time.Time
	// sent counts the messages Telegram took for the chat since sentFrom
	// (a window of floodWindow): a chat refused after a burst of its own
	// is at its own limit, not a sign that the whole bot is.
	sent     int
	sentFrom time.Time
}

type floodHit struct {
	chat int64
	at   time.Time
}

// NewAPI returns an API over tg; the hot calls go straight to the Bot API
// server at serverURL with token, through client.
func NewAPI(tg *tgbot.Bot, m *metrics.Metrics, log *slog.Logger, client *http.Client, serverURL, token string) *API {
	return &API{
		TG: tg, metrics: m, log: log,
		client: client, base: strings.TrimSuffix(serverURL, "/") + "/bot" + token + "/", token: token,
		chats: map[int64]*chatPace{}, outbox: map[int64][]heldCall{},
		bulk:  rate.NewLimiter(BroadcastRate, 1),
		Sleep: sleepCtx, Now: time.Now,
	}
}

// Do runs one Bot API call for chatID (0 when not chat-bound): it waits out
// any flood wait Telegram set for the chat or the bot and, for Push and
// Bulk messages, the local pace; then it retries after a 429's retry_after
// and turns a 403 into ErrBlocked. A Reply to a chat never waits out a
// flood wait: it fails with ErrFlooded (see Reply).
func (a *API) Do(ctx context.Context, method string, chatID int64, call func(ctx context.Context) error) error {
	class := classOf(ctx)
	noWait := class == Reply && chatID != 0
	for attempt := 1; ; attempt++ {
		if noWait {
			if until := a.FloodUntil(chatID); !until.IsZero() || a.Holding(chatID) {
				return a.refused(method, chatID, call, fmt.Errorf("%s: %w for %v more", method, ErrFlooded, until.Sub(a.Now()).Round(time.Second)))
			}
		}
		// A pre-checkout answer is no message and is due within 10 s:
		// it tries at once, whatever the bot's flood wait (a 429 of its
		// own is waited out like any).
		if attempt > 1 || method != "answerPreCheckoutQuery" {
			if err := a.wait(ctx, method, chatID, class); err != nil {
				return err
			}
		}
		err := call(ctx)
		var tooMany *tgbot.TooManyRequestsError
		switch {
		case err == nil:
			a.count(method, "ok")
			a.sentTo(chatID)
			return nil
		case errors.As(err, &tooMany):
			a.count(method, "429")
			d := time.Duration(max(tooMany.RetryAfter, 1)) * time.Second
			a.flooded(ctx, chatID, d)
			a.log.Warn("bot api rate limited", "method", method, "chat", chatID, "retry_after_s", d.Seconds())
			if noWait {
				return a.refused(method, chatID, call, fmt.Errorf("%s: %w of %v: %w", method, ErrFlooded, d, err))
			}
			if attempt >= max429Tries {
				return fmt.Errorf("%s: still rate limited after %d tries: %w", method, attempt, err)
			}
		case errors.Is(err, tgbot.ErrorForbidden):
			a.count(method, "403")
			if chatID != 0 && a.OnBlocked != nil {
				a.OnBlocked(ctx, chatID)
			}
			return fmt.Errorf("%s: %w", method, flows.ErrBlocked)
		case errors.Is(err, tgbot.ErrorBadRequest):
			a.count(method, "400")
			return telegramError(err)
		default:
			a.count(method, "error")
			return err
		}
	}
}

// refused hands a reply the chat's flood wait refused to the outbox and
// returns err (wrapping ErrFlooded) either way: the caller goes on without
// it.
func (a *API) refused(method string, chatID int64, call func(ctx context.Context) error, err error) error {
	if a.hold(method, chatID, call) {
		a.count(method, "flood_held")
	} else {
		a.count(method, "flood_dropped")
	}
	return err
}

func (a *API) count(method, result string) {
	if a.metrics != nil {
		a.metrics.BotAPI.WithLabelValues(method, result).Inc()
	}
}

// sentTo counts a message Telegram took for chatID (see chatPace.sent).
func (a *API) sentTo(chatID int64) {
	if chatID == 0 {
		return
	}
	now := a.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.chatLocked(chatID, now, true)
	if now.Sub(c.sentFrom) >= floodWindow {
		c.sent, c.sentFrom = 0, now
	}
	c.sent++
}

// wait sleeps until the call may go: past the flood waits, and for a Push
// or Bulk message (a retry too: it is one more message), its turn in the
// chat's pace (and the broadcast pace for Bulk).
func (a *API) wait(ctx context.Context, method string, chatID int64, class Class) error {
	paced := class != Reply && pacedMethods[method]
	for {
		now := a.Now()
		a.mu.Lock()
		until := a.all
		var c *chatPace
		if chatID != 0 && (paced || len(a.chats) > 0) {
			c = a.chatLocked(chatID, now, paced)
			if c != nil && c.until.After(until) {
				until = c.until
			}
		}
		if !until.After(now) {
			var d time.Duration
			if paced && c != nil {
				d = c.l.ReserveN(now, 1).DelayFrom(now)
				if class == Bulk {
					d = max(d, a.bulk.ReserveN(now.Add(d), 1).DelayFrom(now))
				}
			}
			a.mu.Unlock()
			if d <= 0 {
				return nil
			}
			return a.Sleep(ctx, d)
		}
		a.mu.Unlock()
		if err := a.Sleep(ctx, until.Sub(now)); err != nil {
			return err
		}
	}
}

// chatLocked returns the chat's pace; when create is false and the chat
// has none, nil. Idle chats are forgotten once there are many.
func (a *API) chatLocked(id int64, now time.Time, create bool) *chatPace {
	c := a.chats[id]
	if c == nil {
		if !create {
			return nil
		}
		if len(a.chats) > 10000 {
			for k, v := range a.chats {
				if now.Sub(v.used) > perChatBurst*time.Second && !v.until.After(now) {
					delete(a.chats, k)
				}
			}
		}
		c = &chatPace{l: rate.NewLimiter(perChatRate, perChatBurst)}
		a.chats[id] = c
	}
	c.used = now
	return c
}

// flooded records Telegram's wait d for chatID, or for the whole bot when
// the call was bound to no chat or several chats were refused at once, and
// shares it with the other replicas.
func (a *API) flooded(ctx context.Context, chatID int64, d time.Duration) {
	now := a.Now()
	until := now.Add(d)
	scope := a.noteFlood(chatID, until, now)
	if a.Floods != nil {
		if err := a.Floods.Publish(ctx, scope, until, now); err != nil {
			a.log.Warn("share flood wait", "err", err)
		}
	}
}

// noteFlood applies a flood wait locally and returns its scope: chatID, or
// work.FloodAll.
func (a *API) noteFlood(chatID int64, until, now time.Time) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if chatID == work.FloodAll {
		a.all = later(a.all, until)
		return work.FloodAll
	}
	c := a.chatLocked(chatID, now, true)
	c.until = later(c.until, until)
	if c.sent >= perChatBurst && now.Sub(c.sentFrom) < floodWindow {
		return chatID // refused after a burst of its own: the chat's limit
	}
	keep := a.hits[:0]
	seen := map[int64]bool{chatID: true}
	for _, h := range a.hits {
		if now.Sub(h.at) < floodWindow {
			keep = append(keep, h)
			seen[h.chat] = true
		}
	}
	a.hits = append(keep, floodHit{chatID, now})
	if len(seen) >= floodAllAfter {
		a.all = later(a.all, until)
		return work.FloodAll
	}
	return chatID
}

// Flooded applies a flood wait another replica shared.
func (a *API) Flooded(chat int64, until time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if chat == work.FloodAll {
		a.all = later(a.all, until)
		return
	}
	c := a.chatLocked(chat, a.Now(), true)
	c.until = later(c.until, until)
}

// FloodUntil reports until when calls to chat wait (zero: they do not).
func (a *API) FloodUntil(chat int64) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	until := a.all
	if c := a.chats[chat]; c != nil && c.until.After(until) {
		until = c.until
	}
	if !until.After(a.Now()) {
		return time.Time{}
	}
	return until
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
