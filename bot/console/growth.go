package console

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/work"
)

// promoJSON is a promo code as the page lists it.
type promoJSON struct {
	Code     string     `json:"code"`
	Percent  string     `json:"percent,omitempty"`
	OffUSD   string     `json:"off_usd,omitempty"`
	Lines    []string   `json:"lines,omitempty"`
	MinUSD   string     `json:"min_usd,omitempty"`
	MaxUses  int        `json:"max_uses,omitempty"`
	PerBuyer bool       `json:"per_buyer,omitempty"`
	Expires  *time.Time `json:"expires,omitempty"`
	Disabled bool       `json:"disabled"`
	Used     int        `json:"used"`
	Held     int        `json:"held"`
}

func promoOf(p *state.Promo) promoJSON {
	out := promoJSON{Code: p.Code, Lines: p.Lines, MaxUses: p.MaxUses, PerBuyer: p.PerBuyer, Disabled: p.Disabled, Used: p.Used, Held: p.Held}
	if p.Percent.IsPositive() {
		out.Percent = p.Percent.String()
	}
	if p.OffUSD.IsPositive() {
		out.OffUSD = p.OffUSD.StringFixed(2)
	}
	if p.MinUSD.IsPositive() {
		out.MinUSD = p.MinUSD.StringFixed(2)
	}
	if !p.Expires.IsZero() {
		e := p.Expires
		out.Expires = &e
	}
	return out
}

// promos lists the promo codes with their uses.
func (c *Console) promos(q *request) (any, *apiError) {
	if c.d.Promos == nil {
		return map[string]any{"promos": []promoJSON{}, "total": 0}, nil
	}
	list, total, err := c.d.Promos.List(q.r.Context(), 200)
	if err != nil {
		return nil, internal()
	}
	out := make([]promoJSON, 0, len(list))
	for _, p := range list {
		out = append(out, promoOf(p))
	}
	return map[string]any{"promos": out, "total": total}, nil
}

type promoBody struct {
	// Spec is /promo add's arguments: "SPRING 10% uses=100 until=2026-12-31".
	Spec string `json:"spec"`
}

// addPromo adds a promo code, checked as /promo add checks it.
func (c *Console) addPromo(q *request) (any, *apiError) {
	var b promoBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	p, refusal, err := c.d.Growth.AddPromo(q.r.Context(), q.actor, q.env.Lang, b.Spec)
	switch {
	case err != nil:
		return nil, internal()
	case refusal != "":
		return nil, refused(refusal)
	}
	return map[string]any{"promo": promoOf(p)}, nil
}

// disablePromo disables a promo code.
func (c *Console) disablePromo(q *request) (any, *apiError) {
	did, err := c.d.Growth.DisablePromo(q.r.Context(), q.actor, q.r.PathValue("code"))
	switch {
	case errors.Is(err, state.ErrPromoUnknown):
		return nil, errNotFound
	case err != nil:
		return nil, internal()
	}
	return map[string]any{"done": "disabled", "was_enabled": did}, nil
}

// referrals are the referral program's figures: today, 7 and 30 days.
func (c *Console) referrals(q *request) (any, *apiError) {
	now := q.env.Now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	out := map[string]any{}
	for _, p := range []struct {
		key  string
		days int
	}{{"today", 1}, {"week", 7}, {"month", 30}} {
		f, err := c.d.Books.Referrals(q.r.Context(), today.AddDate(0, 0, -(p.days-1)))
		if err != nil {
			return nil, internal()
		}
		out["on"] = f.On
		out[p.key] = map[string]any{"joined": f.Joined, "rewards": f.Rewards, "usd": f.USD.StringFixed(2)}
	}
	return out, nil
}

// broadcastJSON is a broadcast's progress and results.
type broadcastJSON struct {
	ID       string     `json:"id"`
	Status   string     `json:"status"`
	Audience string     `json:"audience"`
	Media    string     `json:"media,omitempty"`
	At       *time.Time `json:"at,omitempty"` // when a scheduled one goes
	Total    int64      `json:"total"`
	Done     int64      `json:"done"`
	Sent     int64      `json:"sent"`
	Blocked  int64      `json:"blocked"`
	Failed   int64      `json:"failed"`
	OptedOut int64      `json:"skipped_optout"`
	Opens    int64      `json:"opens"`
}

func broadcastOf(j *work.BroadcastJob) broadcastJSON {
	out := broadcastJSON{ID: j.ID, Status: j.Status, Audience: j.Audience, Media: j.Media, Total: j.Total, Done: min(j.Pos, j.Total),
		Sent: j.Sent, Blocked: j.Blocked, Failed: j.Failed, OptedOut: j.OptedOut, Opens: j.Opens}
	if out.Audience == "" {
		out.Audience = state.AudienceAll
	}
	if !j.At.IsZero() {
		at := j.At.UTC()
		out.At = &at
	}
	return out
}

// broadcastPlanner is the admin side's targeted broadcasts (admin.Admin
// implements it beside Growth): audiences, buttons, schedules and results.
type broadcastPlanner interface {
	PlanBroadcast(ctx context.Context, by state.Actor, lang locales.Lang, p state.BroadcastPlan) (id, refusal string, err error)
	AudienceSize(ctx context.Context, a state.Audience) (state.AudienceCount, error)
	AudienceName(lang locales.Lang, a state.Audience) string
	ScheduledBroadcasts(ctx context.Context) ([]string, error)
	RecentBroadcasts(ctx context.Context, n int) ([]string, error)
}

// recentBroadcasts is how many finished broadcasts the page lists.
const recentBroadcasts = 10

// broadcasts lists the running and scheduled broadcasts and the last
// finished ones with their results (and ?id= one of any status), with how
// many buyers a new one to everyone would reach; ?audience= (as
// state.Audience writes it: "lang:ru", "line:giftcards", "recent:30"...)
// previews that audience's size.
func (c *Console) broadcasts(q *request) (any, *apiError) {
	ctx := q.r.Context()
	ids, err := c.d.Growth.ActiveBroadcasts(ctx)
	if err != nil {
		return nil, internal()
	}
	planner, _ := c.d.Growth.(broadcastPlanner)
	if planner != nil {
		scheduled, err := planner.ScheduledBroadcasts(ctx)
		if err != nil {
			return nil, internal()
		}
		recent, err := planner.RecentBroadcasts(ctx, recentBroadcasts)
		if err != nil {
			return nil, internal()
		}
		ids = append(append(ids, scheduled...), recent...)
	}
	if id := q.r.URL.Query().Get("id"); id != "" {
		ids = append(ids, id)
	}
	out := []broadcastJSON{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		j, err := c.d.Growth.Broadcast(ctx, id)
		if err != nil || j == nil {
			continue
		}
		out = append(out, broadcastOf(j))
	}
	n, err := c.d.Growth.BuyersCount(ctx)
	if err != nil {
		return nil, internal()
	}
	res := map[string]any{"broadcasts": out, "buyers": n}
	if raw := q.r.URL.Query().Get("audience"); raw != "" && planner != nil {
		a, err := state.ParseAudience(raw)
		if err != nil {
			return nil, refused(locales.T(q.env.Lang, "bc.bad_audience"))
		}
		size, err := planner.AudienceSize(ctx, a)
		if err != nil {
			return nil, internal()
		}
		res["audience"] = map[string]any{"audience": a.String(), "name": planner.AudienceName(q.env.Lang, a),
			"members": size.Members, "skipped_optout": size.OptedOut, "blocked": size.Blocked, "reach": size.Reach()}
	}
	return res, nil
}

type broadcastBody struct {
	Text string `json:"text"`
	// Audience is who gets it, as state.Audience writes it ("" is all).
	Audience string `json:"audience,omitempty"`
	// Buttons are up to three buttons: a label with a deep link into the
	// shop (link: "giftcards", "gc-steam-us") or a web address (url).
	Buttons []broadcastButtonBody `json:"buttons,omitempty"`
	// At is when to send it: RFC 3339, "2026-07-01 18:00" (UTC) or a
	// delay ("+2h"); "" sends it at once.
	At string `json:"at,omitempty"`
}

type broadcastButtonBody struct {
	Label string `json:"label"`
	Link  string `json:"link,omitempty"`
	URL   string `json:"url,omitempty"`
}

// startBroadcast sends a text to an audience at once or at a time (the
// chat's /broadcast job, checked as the chat checks it); media stays the
// chat's, where the admin sends the file.
func (c *Console) startBroadcast(q *request) (any, *apiError) {
	var b broadcastBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if strings.TrimSpace(b.Text) == "" || len([]rune(b.Text)) > 3500 {
		return nil, bad("write a text of at most 3500 characters")
	}
	planner, _ := c.d.Growth.(broadcastPlanner)
	if planner == nil {
		if b.Audience != "" || len(b.Buttons) > 0 || b.At != "" {
			return nil, refused(locales.T(q.env.Lang, "bc.bad_audience"))
		}
		id, err := c.d.Growth.StartBroadcast(q.r.Context(), q.actor, q.env.Lang, b.Text)
		if err != nil {
			return nil, internal()
		}
		return map[string]any{"id": id}, nil
	}
	a, err := state.ParseAudience(b.Audience)
	if err != nil {
		return nil, refused(locales.T(q.env.Lang, "bc.bad_audience"))
	}
	p := state.BroadcastPlan{Text: b.Text, Audience: a}
	for _, bb := range b.Buttons {
		p.Buttons = append(p.Buttons, state.BroadcastButton{Label: bb.Label, Link: bb.Link, URL: bb.URL})
	}
	if b.At != "" {
		at, ok := parseBroadcastAt(b.At, q.env.Now)
		if !ok {
			return nil, refused(locales.T(q.env.Lang, "bc.when_bad"))
		}
		p.At = at
	}
	id, refusal, err := planner.PlanBroadcast(q.r.Context(), q.actor, q.env.Lang, p)
	switch {
	case err != nil:
		return nil, internal()
	case refusal != "":
		return nil, refused(refusal)
	}
	out := map[string]any{"id": id}
	if !p.At.IsZero() {
		out["at"] = p.At.UTC().Truncate(time.Minute)
	}
	return out, nil
}

// parseBroadcastAt reads when a broadcast goes: RFC 3339, "2006-01-02
// 15:04" in UTC, or a delay from now ("+30m", "+2h", "+1d").
func parseBroadcastAt(s string, now time.Time) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutPrefix(s, "+"); ok && len(d) >= 2 {
		n, err := strconv.Atoi(d[:len(d)-1])
		unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[d[len(d)-1]]
		if err != nil || n <= 0 || unit == 0 {
			return time.Time{}, false
		}
		return now.Add(time.Duration(n) * unit), true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	t, err := time.ParseInLocation("2006-01-02 15:04", s, time.UTC)
	return t, err == nil
}

// stopBroadcast stops a running broadcast or cancels a scheduled one.
func (c *Console) stopBroadcast(q *request) (any, *apiError) {
	did, err := c.d.Growth.StopBroadcast(q.r.Context(), q.actor, q.r.PathValue("id"))
	if err != nil {
		return nil, internal()
	}
	return map[string]any{"done": "stopped", "was_running": did}, nil
}

type creditBody struct {
	User   int64  `json:"user"`
	Amount string `json:"amount"`
	// Ref is the credit's ledger ref, drawn when the form was shown
	// (GET-less: the page draws one with the first try and keeps it for
	// retries, so a retried credit credits once); "" draws one.
	Ref string `json:"ref"`
}

// credit credits a buyer's wallet (/credit's code).
func (c *Console) credit(q *request) (any, *apiError) {
	var b creditBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	amount, err := decimal.NewFromString(strings.TrimPrefix(strings.TrimSpace(b.Amount), "$"))
	limit := c.d.Books.CreditLimit()
	if err != nil || !amount.IsPositive() || amount.GreaterThan(limit) || amount.Exponent() < -2 {
		return nil, bad("console.err.amount", "limit", limit.String())
	}
	if b.User <= 0 {
		return nil, bad("console.err.user")
	}
	ref := b.Ref
	if ref == "" || !strings.HasPrefix(ref, "credit:"+strconv.FormatInt(q.user.ID, 10)+":") {
		ref = c.d.Books.NewCreditRef(q.user.ID)
	}
	bal, dup, told, err := c.d.Books.Credit(q.r.Context(), q.actor, b.User, amount, ref)
	if err != nil {
		return nil, internal()
	}
	return map[string]any{"balance": bal.StringFixed(2), "replay": dup, "told": told, "ref": ref}, nil
}
