// Package reviews lets buyers rate what they bought and shows it on the
// products: after a delivery the buyer is asked once, in a message of its
// own after the codes, to rate the order with 1 to 5 stars; a star pressed
// records the review exactly once (a second press, or two replicas at
// once, change nothing) and asks for an optional short text; the
// product's screens show the average and the latest reviews
// (flows/shop/reviews.go, through bot/catalog.Reviews); staff with
// flows.PermReviews list the latest reviews (/reviews) and hide or show
// one.
//
// Asking never holds up a delivery: it runs as fulfilment's OnDelivered,
// after the buyer got the order, and a question that cannot be sent is
// asked again with the order's next look, never twice. The store is
// records.Reviews.
package reviews

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
)

// The review flow's session variables (the strings stored sessions hold).
const (
	keyRef   flows.Key = "ref"   // the order rated (state.Order.Ref)
	keyStars flows.Key = "stars" // the rating given (1-5)
	keyItem  flows.Key = "item"  // the item's name, for the prompt
)

// Telegram is what the feature needs of the Bot API. Errors wrap
// flows.ErrBlocked when the buyer blocked the bot.
type Telegram interface {
	Send(ctx context.Context, chat int64, text string, rows [][]flows.Button) (int, error)
}

// Deps are the stores and services the feature uses.
type Deps struct {
	Telegram Telegram
	Store    *records.Reviews
	Orders   *records.Orders
	Lang     locales.Lang // the language of an order without one
	Log      *slog.Logger
	Now      func() time.Time
}

// Reviews is the feature.
type Reviews struct {
	d Deps
}

// New returns the feature over d.
func New(d Deps) *Reviews {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Reviews{d: d}
}

// Actions and names the feature registers.
const (
	// ActRate is a star of the rating question (arg "<order ref>:<stars>").
	ActRate = "rv"
	// actHide hides or shows a review (arg "<order ref>:1" or ":0").
	actHide = "rvh"
	// actSkip leaves the text step.
	actSkip = "skip"
	// Flow is the buyer's text step after a rating.
	Flow     = "review"
	stepText = "text"
)

// latestShown is how many reviews /reviews lists.
const latestShown = 10

// Register adds the rating buttons and the text step for buyers, and
// /reviews with its hide button for the staff who may (PermReviews).
func (rv *Reviews) Register(e *flows.Engine) {
	e.HandleButton(ActRate, rv.rate)
	e.Register(Flow, &textStep{rv: rv, e: e})
	e.AdminCommand("reviews", flows.PermReviews, "cmd.reviews", rv.list)
	e.AdminButton(actHide, flows.PermReviews, "adm.review_hide", rv.hide)
}

// Product is the deep link of what order o bought (flows.ProductLink), under
// which its review is kept.
func Product(o *state.Order) string {
	category := ""
	if q, err := upstreamorder.QuoteOf(o); err == nil {
		category = q.Category
	}
	return flows.ProductLink(o.Line, category)
}

// OnDelivered asks the buyer of a delivered order to rate it, once
// (fulfilment's OnDelivered, after the codes went out). A buyer who blocked
// the bot is not asked; a question that could not be sent otherwise is
// asked at the order's next look (the error makes the job come back).
func (rv *Reviews) OnDelivered(ctx context.Context, o *state.Order) error {
	if o.Status != state.OrderDelivered {
		return nil
	}
	ref := o.Ref()
	first, err := rv.d.Store.Ask(ctx, ref)
	if err != nil || !first {
		return err
	}
	lang := rv.langOf(o)
	text := locales.T(lang, "review.ask", "id", o.ID, "item", locales.Escape(upstreamorder.ItemName(lang, o)))
	_, err = rv.d.Telegram.Send(ctx, o.ChatID, text, StarRows(ref))
	switch {
	case errors.Is(err, flows.ErrBlocked):
		return nil
	case err != nil:
		if uerr := rv.d.Store.Unask(ctx, ref); uerr != nil {
			rv.d.Log.Warn("review question: take the mark back", "order", o.ID, "err", uerr)
		}
		return fmt.Errorf("ask to rate order %d: %w", o.ID, err)
	}
	return nil
}

// StarRows are the rating question's buttons: one to five stars, valid
// in any state of the chat (they go on a message the worker sends).
func StarRows(ref string) [][]flows.Button {
	row := make([]flows.Button, 5)
	for n := 1; n <= 5; n++ {
		d, _ := flows.EncodeCallback(flows.GlobalNonce, ActRate, ref+":"+strconv.Itoa(n)) // a ref always fits
		row[n-1] = flows.Button{Text: strconv.Itoa(n) + "⭐", Data: d}
	}
	return [][]flows.Button{row}
}

// langOf is the order's language (the buyer's when they paid).
func (rv *Reviews) langOf(o *state.Order) locales.Lang {
	if l, ok := locales.Parse(o.Lang); ok {
		return l
	}
	return rv.d.Lang
}

// rate takes a star pressed: the order must be the presser's and
// delivered; the first press records the review and opens the text step,
// any later one (a double tap, another replica's copy) is told the order
// is rated.
func (rv *Reviews) rate(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	ref, n, ok := strings.Cut(ev.Button.Arg, ":")
	stars, err := strconv.Atoi(n)
	id, tag, okRef := state.ParseRef(ref)
	gone := &flows.Reply{Answer: env.T("review.gone"), Alert: true, NoScreen: true}
	if !ok || err != nil || !state.ValidStars(stars) || !okRef || tag == "" {
		return gone, nil
	}
	o, err := rv.d.Orders.Get(ctx, id)
	if errors.Is(err, state.ErrOrderNotFound) || err == nil && (o.UserID != env.User.ID || !o.Is(tag) || o.Status != state.OrderDelivered) {
		return gone, nil
	}
	if err != nil {
		return nil, err
	}
	added, err := rv.d.Store.Add(ctx, state.Review{Order: ref, User: env.User.ID, Product: Product(o), Stars: stars, At: rv.d.Now()})
	if err != nil {
		return nil, err
	}
	if !added {
		return &flows.Reply{Answer: env.T("review.already"), NoScreen: true}, nil
	}
	s.Enter(Flow, stepText, ev.Now.Add(30*time.Minute))
	s.Set(keyRef, ref)
	s.Set(keyStars, strconv.Itoa(stars))
	s.Set(keyItem, upstreamorder.ItemName(env.Lang, o))
	sc := textScreen(env, s)
	sc.Fresh = true // below the question, not in place of the menu above
	return &flows.Reply{Answer: env.T("review.thanks"), Screen: sc, Save: true}, nil
}

// textScreen asks for the optional text of the review just rated.
func textScreen(env *flows.Env, s *flows.Session) *flows.Screen {
	stars, _ := strconv.Atoi(s.Get(keyStars))
	return &flows.Screen{
		Text: env.T("review.text_prompt", "stars", shop.Stars(stars), "item", locales.Escape(shop.ClipName(s.Get(keyItem))), "max", state.MaxReviewText),
		Rows: [][]flows.Button{{{Text: env.T("btn.review_skip"), Action: actSkip}}},
	}
}

// textStep is the buyer's step after a rating: one message of text, or
// Skip.
type textStep struct {
	rv *Reviews
	e  *flows.Engine
}

func (t *textStep) Start(_ context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	return &flows.Reply{Screen: textScreen(env, s), Save: true}, nil
}

func (t *textStep) Show(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	return textScreen(env, s), nil
}

func (t *textStep) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if ev.Kind == flows.EvButton {
		if ev.Button.Action != actSkip {
			return &flows.Reply{Answer: env.T("err.outdated"), Screen: textScreen(env, s)}, nil
		}
		s.Clear()
		return &flows.Reply{Answer: env.T("review.saved"), Screen: t.e.MenuScreen(env), Save: true}, nil
	}
	again := func(key string) *flows.Reply {
		sc := textScreen(env, s)
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T(key, "max", state.MaxReviewText)}}, Screen: sc}
	}
	if ev.Kind != flows.EvText {
		return again("review.text_only"), nil
	}
	text, ok := state.CleanReviewText(ev.Text)
	if !ok {
		if text == "" {
			return again("review.text_only"), nil
		}
		return again("review.too_long"), nil
	}
	ref := s.Get(keyRef)
	if _, err := t.rv.d.Store.SetText(ctx, ref, env.User.ID, text); err != nil && !errors.Is(err, state.ErrReviewNotFound) && !errors.Is(err, state.ErrReviewNotYours) {
		return nil, err
	}
	s.Clear()
	return &flows.Reply{Notices: []flows.Notice{{Text: env.T("review.saved")}}, Screen: t.e.MenuScreen(env), Save: true}, nil
}

// list is /reviews: the shop's latest reviews, hidden ones marked, each
// with a button to hide or show it.
func (rv *Reviews) list(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	sc, err := rv.listScreen(ctx, env)
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Screen: sc, Save: true}, nil
}

func (rv *Reviews) listScreen(ctx context.Context, env *flows.Env) (*flows.Screen, error) {
	list, err := rv.d.Store.Latest(ctx, 0, latestShown)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return &flows.Screen{Text: env.T("reviews.list_title") + "\n\n" + env.T("reviews.list_none")}, nil
	}
	var b strings.Builder
	b.WriteString(env.T("reviews.list_title"))
	var rows [][]flows.Button
	for _, r := range list {
		num, _, _ := strings.Cut(r.Order, ".")
		hidden, btn, arg := "", "btn.review_hide", r.Order+":1"
		if r.Hidden {
			hidden, btn, arg = " · "+env.T("reviews.hidden_mark"), "btn.review_show", r.Order+":0"
		}
		b.WriteString("\n\n" + env.T("reviews.list_line", "stars", shop.Stars(r.Stars), "order", num, "product", locales.Escape(r.Product),
			"user", r.User, "date", locales.Date(env.Lang, r.At), "hidden", hidden))
		if r.Text != "" {
			b.WriteString("\n" + env.T("reviews.list_text", "text", locales.Escape(locales.Clip(r.Text, 300))))
		}
		rows = append(rows, []flows.Button{{Text: env.T(btn, "order", num), Action: actHide, Arg: arg}})
	}
	return &flows.Screen{Text: b.String(), Rows: rows}, nil
}

// hide hides a review from the buyers, or shows it again, and shows the
// list as it is now.
func (rv *Reviews) hide(ctx context.Context, env *flows.Env, _ *flows.Session, ev flows.Event) (*flows.Reply, error) {
	ref, flag, ok := strings.Cut(ev.Button.Arg, ":")
	if _, _, okRef := state.ParseRef(ref); !ok || !okRef || flag != "0" && flag != "1" {
		return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
	}
	changed, err := rv.d.Store.SetHidden(ctx, ref, flag == "1")
	if errors.Is(err, state.ErrReviewNotFound) {
		return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
	}
	if err != nil {
		return nil, err
	}
	answer := env.T("reviews.hidden_done")
	if flag == "0" {
		answer = env.T("reviews.shown_done")
	}
	if changed {
		rv.d.Log.Info("review visibility changed", "order", ref, "hidden", flag == "1", "by", env.User.ID)
	}
	sc, err := rv.listScreen(ctx, env)
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Answer: answer, Screen: sc, Save: true}, nil
}
