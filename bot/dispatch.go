package bot

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"shopbot/state/redisstore/intake"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/flows"
	"shopbot/locales"
)

// maxAttempts bounds how often one update is retried after its worker died
// mid-way; a poison update is then dropped and logged.
const maxAttempts = 5

// maxStreak is how many updates of one chat a worker handles in a row
// before giving other chats a turn.
const maxStreak = 16

// work claims chats and handles their updates on at most Workers goroutines
// until stop is cancelled; in-flight updates then finish under workCtx.
//
// A hint (b.ready) names a chat to claim in one round trip; the shard scan
// (Queue.Claim) finds the rest: chats whose hint was dropped (the hint
// channel was full, or the chat was busy when its hint was taken), whose
// streak ended, whose flood wait or lease ran out, or that another replica
// accepted. Hints keep coming while the workers are saturated, so a scan
// also comes first whenever the last one is IdlePoll old, the waiting hint
// kept for the next turn: a scan claims one of the chats ready without a
// hint (the oldest of a shard first) at least every IdlePoll, not only once
// the hints pause. Unsaturated, a scan
// follows every claim anyway, so this adds no Redis commands.
func (b *Bot) work(stop, workCtx context.Context) {
	sem := make(chan struct{}, b.opts.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	idle := time.NewTimer(0)
	defer idle.Stop()
	var hint int64          // a chat this process just stored an update for
	scanned := b.opts.Now() // when the shards were last scanned
	for {
		select {
		case <-stop.Done():
			return
		case sem <- struct{}{}:
		}
		if hint == 0 {
			select {
			case hint = <-b.ready:
			default:
			}
		}
		now := b.opts.Now()
		scan := hint == 0 || now.Sub(scanned) >= b.opts.IdlePoll
		var c *intake.Claim
		var err error
		if scan {
			scanned = now
			c, err = b.Queue.Claim(stop, now)
		} else {
			c, err = b.Queue.ClaimChat(stop, hint, now)
			hint = 0
		}
		if err != nil && stop.Err() == nil {
			b.log.Error("claim a chat", "err", err)
		}
		if c == nil {
			<-sem
			if err == nil && (!scan || hint != 0) {
				continue // that chat is busy or done, or a hint waits: look again at once
			}
			idle.Reset(b.opts.IdlePoll)
			ready := b.ready
			if hint != 0 {
				ready = nil // keep the waiting hint
			}
			select {
			case <-stop.Done():
				return
			case hint = <-ready:
			case <-b.wake:
			case <-idle.C:
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b.serveChat(stop, workCtx, c)
		}()
	}
}

// notify tells a waiting test that something changed (Options.Notify).
func (b *Bot) notify() {
	if b.opts.Notify != nil {
		b.opts.Notify()
	}
}

// serveChat handles the claimed chat's updates in order, keeping the lease
// alive, until its queue is empty, the streak ends or shutdown begins.
func (b *Bot) serveChat(stop, ctx context.Context, c *intake.Claim) {
	ctx = WithClass(ctx, Reply) // what the buyer's update asks for goes out at once
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go b.heartbeat(hbCtx, c)
	for streak := 1; ; streak++ {
		if b.deferFlooded(ctx, c) || b.leaveForNewer(ctx, c) {
			return
		}
		save, doc := b.handleClaim(ctx, c)
		keep := streak < maxStreak && stop.Err() == nil
		next, err := b.Queue.Done(ctx, c, save, doc, keep, b.opts.Now())
		b.notify()
		switch {
		case errors.Is(err, intake.ErrLeaseLost), errors.Is(err, intake.ErrConflict):
			b.log.Warn("update will be handled again", "chat", c.Chat, "update", c.UpdateID, "reason", err)
			return
		case err != nil:
			b.log.Error("finish update", "chat", c.Chat, "update", c.UpdateID, "err", err)
			return
		case !next:
			return
		}
	}
}

// deferFlooded puts the claimed chat back, due when Telegram's flood wait
// for it (or for the whole bot) ends, and reports whether it did: every
// reply would be refused until then, and a worker waiting it out is a
// worker no other buyer has. A payment is handled at once all the same
// (what it records must not wait; its messages are refused like any
// reply), and a pre-checkout lane has no chat to wait for.
func (b *Bot) deferFlooded(ctx context.Context, c *intake.Claim) bool {
	if laneUser(c.Chat) != 0 {
		return false
	}
	until, held := b.API.FloodUntil(c.Chat), b.API.Holding(c.Chat)
	if until.IsZero() && !held {
		return false
	}
	if _, _, payment, err := chatKey(c.Body); err == nil && payment {
		return false
	}
	// The flood wait is on the API's clock, the queue's due times on the
	// dispatcher's. Replies still held go out first.
	wait := heldRecheck
	if !until.IsZero() {
		wait = max(until.Sub(b.API.Now()), time.Millisecond)
	}
	due := b.opts.Now().Add(wait)
	if err := b.Queue.Defer(ctx, c, due); err != nil {
		b.log.Warn("defer a chat in a flood wait; its lease lapses instead", "chat", c.Chat, "err", err)
	}
	b.metrics.Updates.WithLabelValues("any", "deferred").Inc()
	b.log.Debug("chat deferred until its flood wait ends", "chat", c.Chat, "until", until)
	b.notify()
	return true
}

// workLanes handles the pre-checkout queries (and inline queries) this
// process accepted, each in its sender's lane (preCheckoutLane) and on
// slots of their own, so an answer waits neither behind the sender's chat
// nor for a free worker. A
// lane this process did not hear of (another replica accepted it and
// died) is found by the workers' own claims once its lease ends.
func (b *Bot) workLanes(stop, workCtx context.Context) {
	sem := make(chan struct{}, laneWorkers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var lane int64
		select {
		case <-stop.Done():
			return
		case lane = <-b.lanes:
		}
		select {
		case <-stop.Done():
			return
		case sem <- struct{}{}:
		}
		c, err := b.Queue.ClaimChat(stop, lane, b.opts.Now())
		if err != nil && stop.Err() == nil {
			b.log.Error("claim a pre-checkout query", "err", err)
		}
		if c == nil {
			<-sem
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b.serveChat(stop, workCtx, c)
		}()
	}
}

// laneWorkers is how many pre-checkout queries one process answers at once
// besides its workers.
const laneWorkers = 8

func (b *Bot) heartbeat(ctx context.Context, c *intake.Claim) {
	t := time.NewTicker(b.Queue.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := b.Queue.Extend(ctx, c, b.opts.Now()); err != nil && ctx.Err() == nil {
				b.log.Warn("extend chat lease", "chat", c.Chat, "err", err)
			}
		}
	}
}

// handleClaim handles one update and returns whether to save the session
// and its new document. A panic is recovered: logged, the buyer gets a
// polite error, and nothing is saved.
func (b *Bot) handleClaim(ctx context.Context, c *intake.Claim) (save bool, doc []byte) {
	start := time.Now()
	var u models.Update
	kind := "invalid"
	result := "ok"
	defer func() {
		b.metrics.Updates.WithLabelValues(kind, result).Inc()
		b.metrics.Latency.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	}()
	chat := c.Chat
	if user := laneUser(chat); user != 0 {
		chat = user // the buyer's chat: the lane has no conversation of its own
	}
	if err := decodeUpdate(c.Body, &u); err != nil {
		b.log.Warn("dropping an undecodable update", "update", c.UpdateID, "err", err)
		result = "dropped"
		return false, nil
	}
	kind = updateKind(&u)
	if c.Attempts > maxAttempts {
		b.log.Error("dropping an update that failed too often", "update", c.UpdateID, "chat", c.Chat, "attempts", c.Attempts)
		result = "dropped"
		return false, nil
	}
	sess, loaded := flows.DecodeSession(c.Doc)
	lang := b.Engine.LangFor(&sess, userOf(&u))
	defer func() {
		if p := recover(); p != nil {
			result = "panic"
			save, doc = false, nil
			b.log.Error("handler panic", "update", c.UpdateID, "chat", c.Chat, "kind", kind, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			b.apologize(ctx, chat, &u, lang)
		}
	}()
	if b.handleHook != nil {
		b.handleHook(&u)
	}
	if !privateChat(&u) {
		// The shop lives in private chats: a press on a message in a group
		// (or an inline message) is answered, so the client stops waiting,
		// and nothing is sent or edited there.
		if u.CallbackQuery != nil {
			b.answer(ctx, u.CallbackQuery.ID, "", false)
		}
		result = "ignored"
		return false, nil
	}
	noted := laneUser(c.Chat) == 0 && b.noteUsername(ctx, c.Chat, &u, &sess)
	changed, err := b.handleUpdate(ctx, chat, &u, &sess, loaded)
	if err != nil {
		result = "error"
		b.log.Error("handle update", "update", c.UpdateID, "chat", c.Chat, "kind", kind, "err", err)
		b.apologize(ctx, chat, &u, lang)
		return false, nil
	}
	if !changed && !noted {
		return false, nil
	}
	return true, sess.Encode()
}

// apologize answers the buyer politely after a failure of ours.
func (b *Bot) apologize(ctx context.Context, chat int64, u *models.Update, lang locales.Lang) {
	text := locales.T(lang, "err.internal")
	if u.CallbackQuery != nil {
		b.answer(ctx, u.CallbackQuery.ID, locales.T(lang, "err.internal_short"), false)
	}
	if u.PreCheckoutQuery != nil {
		_ = b.API.Do(ctx, "answerPreCheckoutQuery", 0, func(ctx context.Context) error {
			_, err := b.API.TG.AnswerPreCheckoutQuery(ctx, &tgbot.AnswerPreCheckoutQueryParams{
				PreCheckoutQueryID: u.PreCheckoutQuery.ID, OK: false, ErrorMessage: locales.T(lang, "err.internal_short"),
			})
			return err
		})
	}
	if chat != 0 && u.InlineQuery == nil && u.ChosenInlineResult == nil { // typed in another chat: nothing to say in ours
		_, _ = b.Send(ctx, chat, text, nil)
	}
}

// privateChat reports whether a message or button press comes from a
// private chat; other kinds of updates are not in a chat and pass.
func privateChat(u *models.Update) bool {
	switch {
	case u.CallbackQuery != nil:
		m := u.CallbackQuery.Message
		switch {
		case m.Message != nil:
			return m.Message.Chat.Type == models.ChatTypePrivate
		case m.InaccessibleMessage != nil:
			return m.InaccessibleMessage.Chat.Type == models.ChatTypePrivate
		}
		return false // a button on an inline message: not the shop's
	case u.Message != nil:
		return u.Message.Chat.Type == models.ChatTypePrivate
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.Type == models.ChatTypePrivate
	}
	return true
}

func userOf(u *models.Update) flows.User {
	switch {
	case u.Message != nil && u.Message.From != nil:
		return flows.User{ID: u.Message.From.ID, LanguageCode: u.Message.From.LanguageCode}
	case u.CallbackQuery != nil:
		return flows.User{ID: u.CallbackQuery.From.ID, LanguageCode: u.CallbackQuery.From.LanguageCode}
	case u.InlineQuery != nil && u.InlineQuery.From != nil:
		return flows.User{ID: u.InlineQuery.From.ID, LanguageCode: u.InlineQuery.From.LanguageCode}
	case u.PreCheckoutQuery != nil && u.PreCheckoutQuery.From != nil:
		return flows.User{ID: u.PreCheckoutQuery.From.ID, LanguageCode: u.PreCheckoutQuery.From.LanguageCode}
	}
	return flows.User{}
}

// SetTestHook installs a function called with every update before it is
// handled (tests use it to panic, slow down or observe handling).
func (b *Bot) SetTestHook(f func(u *models.Update)) { b.handleHook = f }
