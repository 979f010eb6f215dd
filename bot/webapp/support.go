package webapp

import (
	"context"
	"net/http"
	"time"

	"shopbot/flows"
	"shopbot/locales"
)

// Support and the terms in the app: the shop's terms (the chat's /terms),
// and a buyer's message to support going through the chat's support
// (bot/support: the same ticket, relay to the staff with the buyer's recent
// orders, fold and rate limit); the staff's answers come to the chat with
// the bot, as they do for a message written there, and show on the page.

// Support is the shop's support (bot/support; storefront wires it).
type Support interface {
	// Terms are the shop's terms (Telegram HTML) and the full terms'
	// address ("" when none).
	Terms(env *flows.Env) (text, url string)
	// HelpdeskURL is the shop's external helpdesk ("" when none).
	HelpdeskURL() string
	// Write takes the buyer's message: "" when taken, else why not in
	// their words (with how long to wait when over the rate limit).
	Write(ctx context.Context, env *flows.Env, text string) (refusal string, wait time.Duration, err error)
	// BuyerThread is whether the buyer's ticket is open and its last
	// messages.
	BuyerThread(ctx context.Context, buyer int64, limit int) (bool, []SupportMsg, error)
	// CloseByBuyer closes the buyer's ticket; it reports whether it was
	// open.
	CloseByBuyer(ctx context.Context, buyer int64) (bool, error)
}

// SupportMsg is one message of a buyer's ticket as the buyer sees it.
type SupportMsg struct {
	At    time.Time
	Staff bool // the shop's answer; else the buyer's own
	Text  string
	Photo bool
}

// threadShown is how many messages of the ticket the page shows.
const threadShown = 30

// maxSupportText is the longest message the page sends (the chat relays
// at most 3,000 characters of one).
const maxSupportText = 3000

type supportMsgJSON struct {
	Date  string `json:"date"`
	Staff bool   `json:"staff,omitempty"`
	Text  string `json:"text"`
	Photo bool   `json:"photo,omitempty"`
}

// terms is the shop's terms as plain text, and the full terms' address.
func (a *App) terms(q *request) (any, *apiError) {
	if a.d.Support == nil {
		return nil, errNotFound
	}
	text, url := a.d.Support.Terms(q.env)
	return map[string]any{"text": plain(text), "url": url}, nil
}

// support is the support page: the buyer's open ticket and its messages,
// and the shop's helpdesk.
func (a *App) support(q *request) (any, *apiError) {
	if a.d.Support == nil {
		return nil, errNotFound
	}
	return a.supportPage(q)
}

func (a *App) supportPage(q *request) (any, *apiError) {
	env := q.env
	open, msgs, err := a.d.Support.BuyerThread(q.r.Context(), env.User.ID, threadShown)
	if err != nil {
		a.log.Warn("mini app: support thread", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	}
	thread := make([]supportMsgJSON, 0, len(msgs))
	for _, m := range msgs {
		thread = append(thread, supportMsgJSON{Date: locales.DateTime(env.Lang, m.At), Staff: m.Staff, Text: m.Text, Photo: m.Photo})
	}
	return map[string]any{"open": open, "thread": thread, "helpdesk": a.d.Support.HelpdeskURL(), "max": maxSupportText}, nil
}

type supportBody struct {
	Text string `json:"text"`
}

// supportWrite sends the buyer's message to support: the page again, or
// why not (the reason beside the text box, which keeps what was typed).
func (a *App) supportWrite(q *request) (any, *apiError) {
	if a.d.Support == nil {
		return nil, errNotFound
	}
	var b supportBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	env := q.env
	refusal, wait, err := a.d.Support.Write(q.r.Context(), env, locales.Clip(b.Text, maxSupportText))
	switch {
	case err != nil:
		a.log.Warn("mini app: write to support", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	case wait > 0:
		return nil, &apiError{status: http.StatusTooManyRequests, Code: "rate_limited", Field: "text", Message: plain(refusal), retry: wait}
	case refusal != "":
		return nil, &apiError{status: http.StatusUnprocessableEntity, Code: "bad_field", Field: "text", Message: plain(refusal)}
	}
	page, e := a.supportPage(q)
	if e != nil {
		return nil, e
	}
	page.(map[string]any)["sent"] = plain(env.T("support.sent"))
	return page, nil
}

// supportClose closes the buyer's ticket.
func (a *App) supportClose(q *request) (any, *apiError) {
	if a.d.Support == nil {
		return nil, errNotFound
	}
	if _, err := a.d.Support.CloseByBuyer(q.r.Context(), q.env.User.ID); err != nil {
		a.log.Warn("mini app: close the support ticket", "user", q.env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", q.env, "webapp.error")
	}
	return a.supportPage(q)
}
