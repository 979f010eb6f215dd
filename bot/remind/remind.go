// Package remind reminds a buyer of a priced quote they did not pay: once,
// After the quote was made (QUOTE_REMINDER; off by default), of their
// latest quote only, never when they bought anything since or turned
// reminders off (the reminder's own "no reminders" button).
//
// A quote saved by the product lines (bot/catalog.Quotes.Saved) becomes
// the buyer's pending quote and puts their job ("u:<user>") on the
// reminders' durable schedule at the quote's time plus After; a newer
// quote moves it. Any replica runs the due job under its lease; the
// reminder of a quote is marked sent before it goes (records.Reminders),
// so it goes at most once whatever replicas or retries run it.
package remind

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/jobs"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
)

// Options configure the reminders.
type Options struct {
	// After is how long after a quote its buyer is reminded
	// (QUOTE_REMINDER); 0: no reminders.
	After time.Duration
	// Tick is how often due reminders are claimed; default 5 s.
	Tick time.Duration
}

// Telegram is what the feature needs of the Bot API. Errors wrap
// flows.ErrBlocked when the buyer blocked the bot.
type Telegram interface {
	Send(ctx context.Context, chat int64, text string, rows [][]flows.Button) (int, error)
}

// Sessions reads a chat's stored conversation (intake.Queue), for the
// buyer's language.
type Sessions interface {
	Conversation(ctx context.Context, chat int64) (int64, []byte, error)
}

// Deps are the stores and services the feature uses.
type Deps struct {
	Telegram Telegram
	Store    *records.Reminders
	Orders   *records.Orders // whether the buyer bought since
	Schedule *sched.Schedule // the reminders' own
	Sessions Sessions        // nil: the shop's language
	Engine   *flows.Engine
	// BotName is the bot's username (getMe at start), for the button that
	// opens the product again.
	BotName func() string
	Log     *slog.Logger
	Now     func() time.Time
}

// Reminders is the feature.
type Reminders struct {
	o Options
	d Deps
}

// New returns the feature; Enabled says whether it reminds anyone.
func New(o Options, d Deps) *Reminders {
	if o.Tick <= 0 {
		o.Tick = 5 * time.Second
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Reminders{o: o, d: d}
}

// Enabled reports whether reminders are on.
func (r *Reminders) Enabled() bool { return r != nil && r.o.After > 0 }

// actOff is the reminder's "no reminders" button.
const actOff = "rmoff"

// Register adds the "no reminders" button (a buyer's, valid in any state).
func (r *Reminders) Register(e *flows.Engine) { e.HandleButton(actOff, r.turnOff) }

// jobOf is the schedule's job of user's reminder.
func jobOf(user int64) string { return "u:" + strconv.FormatInt(user, 10) }

// Quoted takes a quote the product lines saved: it becomes its buyer's
// quote to remind of, due After from its making. A failure is logged: a
// reminder is never worth failing a quote for.
func (r *Reminders) Quoted(ctx context.Context, q *state.Quote) {
	if !r.Enabled() || q.UserID == 0 {
		return
	}
	p := records.PendingQuote{Quote: q.ID, Chat: q.ChatID, Lang: q.Lang, Line: q.Line, Category: q.Category, Item: q.ItemName,
		Stars: q.Stars, USD: q.ShopUSD, Created: q.Created}
	if err := r.d.Store.SetPending(ctx, q.UserID, p); err != nil {
		r.d.Log.Warn("quote reminder: remember the quote", "user", q.UserID, "err", err)
		return
	}
	if err := r.d.Schedule.Put(ctx, jobOf(q.UserID), q.Created.Add(r.o.After)); err != nil {
		r.d.Log.Warn("quote reminder: schedule it", "user", q.UserID, "err", err)
	}
}

// Run sends the due reminders until ctx ends.
func (r *Reminders) Run(ctx context.Context) {
	w := &jobs.Worker{
		What: "quote reminder", Sched: r.d.Schedule, Now: r.d.Now, Log: r.d.Log,
		Tick: r.o.Tick, Lease: 30 * time.Second, Timeout: 30 * time.Second, Parallel: 4,
		Step: r.step,
	}
	w.Run(ctx)
}

// step runs user's reminder job: it says when to look again, or zero when
// done.
func (r *Reminders) step(ctx context.Context, j sched.Job) (time.Time, bool) {
	user, err := strconv.ParseInt(strings.TrimPrefix(j.Name, "u:"), 10, 64)
	if err != nil || !strings.HasPrefix(j.Name, "u:") {
		return time.Time{}, false
	}
	next, err := r.remind(ctx, user)
	if err != nil {
		r.d.Log.Warn("quote reminder", "user", user, "err", err)
		return r.d.Now().Add(time.Minute), false
	}
	return next, false
}

// remind sends user the reminder of their pending quote when it is due
// and still wanted; it returns when to look again (zero: done).
func (r *Reminders) remind(ctx context.Context, user int64) (time.Time, error) {
	p, ok, err := r.d.Store.Pending(ctx, user)
	if err != nil || !ok {
		return time.Time{}, err
	}
	if due := p.Created.Add(r.o.After); r.d.Now().Before(due) {
		return due, nil // a newer quote moved it
	}
	done := func() (time.Time, error) { return time.Time{}, r.d.Store.ClearPending(ctx, user, p.Quote) }
	if off, err := r.d.Store.Off(ctx, user); err != nil || off {
		if err != nil {
			return time.Time{}, err
		}
		return done()
	}
	if bought, err := r.boughtSince(ctx, user, p.Created); err != nil || bought {
		if err != nil {
			return time.Time{}, err
		}
		return done()
	}
	first, err := r.d.Store.MarkSent(ctx, p.Quote)
	if err != nil {
		return time.Time{}, err
	}
	if first {
		r.send(ctx, user, p)
	}
	return done()
}

// boughtSince reports whether user has an order paid at or after from (a
// wallet top-up is no purchase).
func (r *Reminders) boughtSince(ctx context.Context, user int64, from time.Time) (bool, error) {
	list, err := r.d.Orders.ListByUser(ctx, user, 0, 5)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(list, func(o *state.Order) bool {
		at := o.PaidAt
		if at.IsZero() {
			at = o.CreatedAt
		}
		return !at.Before(from)
	}), nil
}

// send sends the reminder; one that does not go is not tried again.
func (r *Reminders) send(ctx context.Context, user int64, p records.PendingQuote) {
	lang := r.langOf(ctx, p)
	price := locales.Money(lang, p.USD)
	if p.Stars > 0 {
		price = locales.Stars(lang, p.Stars)
	}
	text := locales.T(lang, "remind.text", "item", locales.Escape(locales.Clip(p.Item, 120)), "price", price)
	off, _ := flows.EncodeCallback(flows.GlobalNonce, actOff, "")
	rows := [][]flows.Button{{{Text: locales.T(lang, "btn.remind_off"), Data: off}}}
	if name := r.d.BotName(); name != "" {
		link := "https://t.me/" + name + "?start=" + flows.ProductLink(p.Line, p.Category)
		rows = append([][]flows.Button{{{Text: locales.T(lang, "btn.remind_open"), URL: link}}}, rows...)
	}
	if _, err := r.d.Telegram.Send(ctx, p.Chat, text, rows); err != nil {
		if !errors.Is(err, flows.ErrBlocked) {
			r.d.Log.Warn("send a quote reminder", "user", user, "err", err)
		}
		return
	}
	r.d.Log.Info("quote reminder sent", "user", user, "quote", p.Quote)
}

// langOf is the language the buyer chose with /language, else the one
// they saw the quote in, else the shop's.
func (r *Reminders) langOf(ctx context.Context, p records.PendingQuote) locales.Lang {
	e := r.d.Engine
	if r.d.Sessions != nil {
		if _, doc, err := r.d.Sessions.Conversation(ctx, p.Chat); err == nil && doc != nil {
			s, _ := flows.DecodeSession(doc)
			if l, ok := locales.Parse(s.Lang); ok && slices.Contains(e.Langs, l) {
				return l
			}
		}
	}
	if l, ok := locales.Parse(p.Lang); ok && slices.Contains(e.Langs, l) {
		return l
	}
	return e.DefaultLang
}

// turnOff is the "no reminders" button: the buyer gets no more reminders.
func (r *Reminders) turnOff(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	if err := r.d.Store.SetOff(ctx, env.User.ID, true); err != nil {
		return nil, err
	}
	return &flows.Reply{Answer: env.T("remind.off_done"), Alert: true, NoScreen: true}, nil
}
