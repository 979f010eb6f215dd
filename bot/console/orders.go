package console

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/fulfil"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
)

// session is who the page is for: the user, their roles, and the
// endpoints the gate lets them call (the page shows only those).
func (c *Console) session(q *request) (any, *apiError) {
	var allowed, perms []string
	for _, e := range c.eps {
		if c.d.Engine.ConsoleAllows(e.name(), q.user) {
			allowed = append(allowed, e.name())
		}
	}
	for _, p := range flows.Perms {
		if q.user.Can(p) {
			perms = append(perms, string(p))
		}
	}
	var lines []map[string]string
	for _, l := range flows.Lines {
		lines = append(lines, map[string]string{"name": l.Name, "label": locales.Plain(q.env.T(l.Label))})
	}
	langs := make([]map[string]string, 0, len(c.d.Engine.Langs))
	for _, l := range c.d.Engine.Langs {
		langs = append(langs, map[string]string{"code": string(l), "name": locales.LanguageName(l)})
	}
	return map[string]any{
		"user":      map[string]any{"id": q.user.ID, "name": q.user.FirstName, "username": q.user.Username},
		"role":      q.user.RoleName(),
		"lang":      string(q.env.Lang),
		"langs":     langs,
		"texts":     pageTexts(q.env.Lang),
		"perms":     perms,
		"endpoints": allowed,
		"statuses":  state.OrderStatuses,
		"lines":     lines,
	}, nil
}

// orderRow is an order in a list.
type orderRow struct {
	Ref      string    `json:"ref"`
	ID       int64     `json:"id"`
	Status   string    `json:"status"`
	Line     string    `json:"line"`
	Item     string    `json:"item"`
	Buyer    int64     `json:"buyer"`
	Username string    `json:"username,omitempty"` // the buyer's @username as last seen
	Paid     string    `json:"paid"`
	Upstream int64     `json:"upstream,omitempty"`
	Created  time.Time `json:"created"`
}

func (c *Console) row(q *request, o *state.Order) orderRow {
	return orderRow{Ref: o.Ref(), ID: o.ID, Status: o.Status, Line: o.Line, Item: upstreamorder.ItemName(q.env.Lang, o),
		Buyer: o.UserID, Paid: paidText(q.env.Lang, o), Upstream: o.UpstreamNumber, Created: o.CreatedAt}
}

func paidText(lang locales.Lang, o *state.Order) string {
	if o.PayMethod == state.PayStars {
		return locales.Plain(locales.Stars(lang, o.Stars))
	}
	return locales.Plain(locales.Money(lang, o.ShopUSD))
}

// rows are orders as a list shows them, with their buyers' usernames.
func (c *Console) rows(q *request, list []*state.Order) []orderRow {
	rows := make([]orderRow, 0, len(list))
	ids := make([]int64, 0, len(list))
	for _, o := range list {
		rows = append(rows, c.row(q, o))
		ids = append(ids, o.UserID)
	}
	if c.d.Users != nil && len(ids) > 0 {
		names, err := c.d.Users.Usernames(q.r.Context(), ids)
		if err != nil {
			c.log.Warn("console: read usernames", "err", err)
		}
		for i := range rows {
			rows[i].Username = names[rows[i].Buyer]
		}
	}
	return rows
}

// searchBuyer is the user a search names: a user id, or an @username as
// the buyer registry last saw it (known false: no such buyer is known).
func (c *Console) searchBuyer(q *request, s string) (id int64, known bool, e *apiError) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "@") {
		if c.d.Users == nil || !records.ValidUsername(s[1:]) {
			return 0, false, bad("console.err.buyer")
		}
		id, found, err := c.d.Users.ByUsername(q.r.Context(), s)
		if err != nil {
			return 0, false, internal()
		}
		return id, found, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, false, bad("console.err.buyer")
	}
	return id, true, nil
}

// Search bounds.
const (
	searchMax  = 50   // orders one search returns
	searchScan = 5000 // orders one search looks at, newest first
)

// searchOrders finds orders: q is an order number or ref (#12,
// 12.abcd…), an upstream order number, a Stars charge id, or a buyer's
// @username; buyer is a buyer's user id or @username; status, line and
// the dates (from, to: YYYY-MM-DD, UTC) narrow the list, newest first. An
// @username is the buyer registry's (records.Users: kept from the
// buyers' own updates); one nobody has is answered with no orders and
// unknown_username.
func (c *Console) searchOrders(q *request) (any, *apiError) {
	ctx := q.r.Context()
	v := q.r.URL.Query()
	text := strings.TrimPrefix(strings.TrimSpace(v.Get("q")), "#")
	status, line := v.Get("status"), v.Get("line")
	if status != "" && !slices.Contains(state.OrderStatuses, status) {
		return nil, bad("console.err.status")
	}
	var from, to time.Time
	if s := v.Get("from"); s != "" {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, bad("console.err.date", "field", "from")
		}
		from = d
	}
	if s := v.Get("to"); s != "" {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, bad("console.err.date", "field", "to")
		}
		to = d.AddDate(0, 0, 1)
	}
	match := func(o *state.Order) bool {
		return (status == "" || o.Status == status) && (line == "" || o.Line == line) &&
			(from.IsZero() || !o.CreatedAt.Before(from)) && (to.IsZero() || o.CreatedAt.Before(to))
	}
	var found []*state.Order
	add := func(o *state.Order) {
		if o != nil && match(o) && !slices.ContainsFunc(found, func(x *state.Order) bool { return x.ID == o.ID }) {
			found = append(found, o)
		}
	}
	who := strings.TrimSpace(v.Get("buyer"))
	if strings.HasPrefix(text, "@") {
		who, text = text, ""
	}
	switch {
	case text != "":
		if id, tag, ok := state.ParseRef(text); ok {
			if o, err := c.d.Orders.Get(ctx, id); err == nil && o.Is(tag) {
				add(o)
			}
			if tag == "" {
				if o, err := c.d.Orders.ByUpstream(ctx, id); err == nil {
					add(o)
				}
			}
		}
		if o, err := c.d.Orders.ByCharge(ctx, text); err == nil {
			add(o)
		}
	case who != "":
		buyer, known, e := c.searchBuyer(q, who)
		if e != nil {
			return nil, e
		}
		if !known {
			return map[string]any{"orders": []orderRow{}, "unknown_username": strings.TrimPrefix(who, "@")}, nil
		}
		list, err := c.d.Orders.ListByUser(ctx, buyer, 0, searchScan)
		if err != nil {
			return nil, internal()
		}
		for _, o := range list {
			if len(found) < searchMax {
				add(o)
			}
		}
	default:
		filter := state.OrderFilter{Status: status, Line: line}
	scan:
		for offset := 0; offset < searchScan; offset += 200 {
			list, err := c.d.Orders.List(ctx, offset, 200, filter)
			if err != nil {
				return nil, internal()
			}
			for _, o := range list {
				if !from.IsZero() && o.CreatedAt.Before(from.Add(-time.Hour)) {
					break scan // ids follow creation time (give or take replicas' clocks)
				}
				add(o)
				if len(found) == searchMax {
					break scan
				}
			}
			if len(list) < 200 {
				break
			}
		}
	}
	return map[string]any{"orders": c.rows(q, found)}, nil
}

// current reads the order a ref names: that purchase, never another one
// under the same number (Redis lost writes and handed it out again).
func (c *Console) current(q *request) (*state.Order, string, *apiError) {
	id, tag, ok := state.ParseRef(q.r.PathValue("ref"))
	if !ok {
		return nil, "", bad("console.err.ref")
	}
	o, err := c.d.Orders.Get(q.r.Context(), id)
	if errors.Is(err, state.ErrOrderNotFound) || err == nil && !o.Is(tag) {
		return nil, "", errNotFound
	}
	if err != nil {
		return nil, "", internal()
	}
	return o, state.ChargeTag(o.ChargeID), nil
}

// order is the order page: what the buyer entered, the promo, the price,
// cost and margin, the timeline (the order's history and the audit of
// staff actions on it) and the actions its status and the role allow.
func (c *Console) order(q *request) (any, *apiError) {
	o, _, e := c.current(q)
	if e != nil {
		return nil, e
	}
	out := map[string]any{"order": c.rows(q, []*state.Order{o})[0], "pay_method": o.PayMethod, "charge": o.ChargeID,
		"upstream_status": o.UpstreamStatus, "reason": o.Reason, "shop_usd": o.ShopUSD.StringFixed(2),
		"upstream_usd": o.UpstreamUSD.StringFixed(2), "stars": o.Stars, "codes": len(o.Codes), "shrunk": o.Shrunk}
	if qt, err := upstreamorder.QuoteOf(o); err == nil {
		out["fields"], out["for"], out["quantity"] = qt.Fields, qt.For, qt.Quantity
	}
	if o.PromoCode != "" {
		out["promo"] = map[string]string{"code": o.PromoCode, "discount": o.DiscountUSD.StringFixed(2)}
	}
	if o.UpstreamNumber != 0 && o.ChargeFault(o.ChargedUSD) == "" {
		out["charged_usd"] = o.ChargedUSD.StringFixed(2)
		if m, ok := o.Margin(c.opts.StarsUSDRate); ok {
			out["margin_usd"] = m.StringFixed(2)
		}
	}
	out["paid_usd"] = o.PaidUSD(c.opts.StarsUSDRate).StringFixed(2)
	var steps []step
	for _, h := range o.History {
		steps = append(steps, step{At: h.At, Kind: "status", From: h.From, To: h.To, Note: h.Note})
	}
	if c.d.Audit != nil {
		if log, err := c.d.Audit.Recent(q.r.Context(), 500); err == nil {
			for _, a := range log {
				if a.Target == state.AuditOrder(o.ID) && !a.At.Before(o.CreatedAt) {
					actor := a.Actor
					steps = append(steps, step{At: a.At, Kind: "audit", Action: a.Action, Actor: &actor, Note: a.Detail})
				}
			}
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return a.At.Compare(b.At) })
	out["timeline"] = steps
	var actions []string
	for _, a := range c.actionsFor(o) {
		if c.d.Engine.ConsoleAllows("POST orders/{ref}/"+a, q.user) {
			actions = append(actions, a)
		}
	}
	out["actions"] = actions
	if o.Status == state.OrderNeedsReview && o.UpstreamNumber != 0 {
		out["adopt_number"] = o.UpstreamNumber // tracking it again is the adoption
	}
	return out, nil
}

// step is one line of an order's timeline: a change of status (with the
// order history's note) or a staff action of the audit log; the page
// words it.
type step struct {
	At     time.Time    `json:"at"`
	Kind   string       `json:"kind"` // status, audit
	From   string       `json:"from,omitempty"`
	To     string       `json:"to,omitempty"`
	Action string       `json:"action,omitempty"`
	Actor  *state.Actor `json:"actor,omitempty"`
	Note   string       `json:"note,omitempty"`
}

// actionsFor are the actions that make sense for the order's status (the
// chat's /order N buttons).
func (c *Console) actionsFor(o *state.Order) []string {
	if c.d.Fulfil == nil {
		return nil
	}
	var out []string
	switch o.Status {
	case state.OrderDelivered:
		if !o.Shrunk {
			out = append(out, "resend")
		}
	case state.OrderPaid, state.OrderPlacing, state.OrderPlaced, state.OrderRefunding:
		out = append(out, "run")
	}
	if o.Status != state.OrderRefunding && state.CanMove(o.Status, state.OrderRefunding) {
		out = append(out, "refund")
	}
	if o.Status == state.OrderNeedsReview {
		out = append(out, "adopt")
	}
	if o.Status == state.OrderNeedsReview && o.UpstreamNumber == 0 {
		out = append(out, "retry")
	}
	return out
}

// codes shows a delivered order's codes (logged, never their values).
func (c *Console) codes(q *request) (any, *apiError) {
	o, _, e := c.current(q)
	if e != nil {
		return nil, e
	}
	c.log.Info("console: admin revealed order codes", "admin", q.user.ID, "order", o.ID)
	return map[string]any{"codes": o.Codes}, nil
}

func (c *Console) noFulfil() *apiError {
	return conflict("unavailable", "console.err.no_fulfil")
}

// resend sends a delivered order's result to the buyer again (the chat's
// "send again").
func (c *Console) resend(q *request) (any, *apiError) {
	o, _, e := c.current(q)
	if e != nil {
		return nil, e
	}
	if c.d.Fulfil == nil {
		return nil, c.noFulfil()
	}
	if o.Status != state.OrderDelivered || o.Shrunk {
		return nil, conflict("changed", "console.err.not_delivered")
	}
	err := c.d.Fulfil.Resend(q.r.Context(), q.actor, o)
	switch {
	case errors.Is(err, flows.ErrBlocked):
		return nil, conflict("blocked", "console.err.blocked")
	case err != nil:
		c.log.Warn("console: resend", "order", o.ID, "err", err)
		return nil, internal()
	}
	return map[string]any{"done": "sent"}, nil
}

// run makes a waiting order's job due now.
func (c *Console) run(q *request) (any, *apiError) {
	o, _, e := c.current(q)
	if e != nil {
		return nil, e
	}
	if c.d.Fulfil == nil {
		return nil, c.noFulfil()
	}
	if state.Terminal(o.Status) || o.Status == state.OrderNeedsReview {
		return nil, conflict("changed", "console.err.not_waiting")
	}
	running, err := c.d.Fulfil.RunNow(q.r.Context(), q.actor, o.ID)
	if err != nil {
		return nil, internal()
	}
	return map[string]any{"done": "run", "running": running}, nil
}

// refundBody is the status the admin saw when they asked for the refund.
type refundBody struct {
	From string `json:"from"`
}

// refund is the chat's /order N refund, through the same call
// (fulfil.Fulfiller.Refund): from the status the admin saw, the upstream
// order read again first (completed: no refund, it is delivered).
func (c *Console) refund(q *request) (any, *apiError) {
	var b refundBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	o, tag, e := c.current(q)
	if e != nil {
		return nil, e
	}
	if c.d.Fulfil == nil {
		return nil, c.noFulfil()
	}
	if b.From == "" || b.From == state.OrderRefunding || !state.CanMove(b.From, state.OrderRefunding) {
		return nil, conflict("not_refundable", "console.err.not_refundable", "status", b.From)
	}
	err := c.d.Fulfil.Refund(q.r.Context(), q.actor, o.ID, tag, b.From)
	switch {
	case errors.Is(err, fulfil.ErrOrderReplaced):
		return nil, errNotFound
	case errors.Is(err, fulfil.ErrDeliveredMeanwhile):
		return nil, conflict("delivered_meanwhile", "console.err.delivered_meanwhile")
	case errors.Is(err, state.ErrBadTransition):
		return nil, conflict("changed", "console.err.changed")
	case err != nil:
		c.log.Warn("console: refund", "order", o.ID, "err", err)
		return nil, &apiError{status: http.StatusBadGateway, Code: "upstream", key: "console.err.refund_failed", args: []any{"error", locales.Clip(err.Error(), 200)}}
	}
	return map[string]any{"done": "refunding"}, nil
}

// retry places an order in review again, on the admin's word that nothing
// was created upstream (the chat's "place again").
func (c *Console) retry(q *request) (any, *apiError) {
	o, tag, e := c.current(q)
	if e != nil {
		return nil, e
	}
	if c.d.Fulfil == nil {
		return nil, c.noFulfil()
	}
	err := c.d.Fulfil.PlaceAgain(q.r.Context(), q.actor, o.ID, tag)
	if errors.Is(err, state.ErrBadTransition) || errors.Is(err, fulfil.ErrHasUpstream) || errors.Is(err, fulfil.ErrOrderReplaced) {
		return nil, conflict("changed", "console.err.changed")
	}
	if err != nil {
		return nil, internal()
	}
	return map[string]any{"done": "placing"}, nil
}

// live is what the page polls: the newest paid orders, (for those who
// answer tickets) the open tickets with unread ones, and (for those who
// read the books) how many Star charges wait for review, so new ones
// appear without a reload.
func (c *Console) live(q *request) (any, *apiError) {
	ctx := q.r.Context()
	list, err := c.d.Orders.List(ctx, 0, 10, state.OrderFilter{})
	if err != nil {
		return nil, internal()
	}
	out := map[string]any{"orders": c.rows(q, list)}
	if q.user.Can(flows.PermTickets) && c.d.Support != nil {
		ts, err := c.d.Support.Inbox(ctx, 50)
		if err != nil {
			return nil, internal()
		}
		unread := 0
		for _, t := range ts {
			if t.Unread() {
				unread++
			}
		}
		out["tickets"], out["unread"] = len(ts), unread
	}
	if e := c.chargesLive(q, out); e != nil {
		return nil, e
	}
	return out, nil
}

// audit is the audit log, newest first.
func (c *Console) audit(q *request) (any, *apiError) {
	if c.d.Audit == nil {
		return map[string]any{"entries": []state.AuditEntry{}}, nil
	}
	n, _ := strconv.Atoi(q.r.URL.Query().Get("n"))
	if n <= 0 || n > 500 {
		n = 100
	}
	list, err := c.d.Audit.Recent(q.r.Context(), n)
	if err != nil {
		return nil, internal()
	}
	return map[string]any{"entries": list}, nil
}

// adoptNumber is the upstream order number an adoption names: the one
// given ("#1234" or "1234"), else the order's own when it has one.
func adoptNumber(given string, o *state.Order) (int64, *apiError) {
	given = strings.TrimPrefix(strings.TrimSpace(given), "#")
	if given == "" && o.UpstreamNumber != 0 {
		return o.UpstreamNumber, nil
	}
	n, err := strconv.ParseInt(given, 10, 64)
	if err != nil || n <= 0 {
		return 0, bad("console.err.adopt_number")
	}
	return n, nil
}

// adoptError is the answer to an adoption the shop refused.
func adoptError(err error) *apiError {
	var no *fulfil.AdoptRefusal
	switch {
	case errors.As(err, &no) && no.Reason == fulfil.AdoptClaimed:
		return conflict("adopt_claimed", "console.err.adopt_claimed", "number", strconv.FormatInt(no.Number, 10), "other", strconv.FormatInt(no.Other, 10))
	case errors.As(err, &no) && no.Reason == fulfil.AdoptNotFound:
		return conflict("adopt_not_found", "console.err.adopt_not_found", "number", strconv.FormatInt(no.Number, 10))
	case errors.As(err, &no) && no.Reason == fulfil.AdoptWrongType:
		return conflict("adopt_wrong_type", "console.err.adopt_wrong_type", "number", strconv.FormatInt(no.Number, 10), "got", no.Got, "want", no.Want)
	case errors.As(err, &no):
		return &apiError{status: http.StatusBadGateway, Code: "upstream", key: "console.err.adopt_upstream",
			args: []any{"number", strconv.FormatInt(no.Number, 10), "error", locales.Clip(no.Err.Error(), 160)}}
	case errors.Is(err, state.ErrBadTransition), errors.Is(err, fulfil.ErrHasUpstream), errors.Is(err, fulfil.ErrOrderReplaced):
		return conflict("changed", "console.err.changed")
	}
	return internal()
}

// adoptCheck checks the upstream order number the owner names for an
// order in review (?number=), as the chat's /order N does, and shows what
// it is for them to confirm: type, status, charge, date, and whether it
// matches what the order asked for. Nothing changes.
func (c *Console) adoptCheck(q *request) (any, *apiError) {
	o, _, e := c.current(q)
	if e != nil {
		return nil, e
	}
	if c.d.Fulfil == nil {
		return nil, c.noFulfil()
	}
	n, e := adoptNumber(q.r.URL.Query().Get("number"), o)
	if e != nil {
		return nil, e
	}
	cand, err := c.d.Fulfil.CheckAdoptNumber(q.r.Context(), o, n)
	if err != nil {
		if e := adoptError(err); e.Code != "error" {
			return nil, e
		}
		c.log.Warn("console: check an adoption", "order", o.ID, "err", err)
		return nil, internal()
	}
	match := "unknown"
	if cand.Known {
		match = map[bool]string{true: "yes", false: "no"}[cand.Same]
	}
	return map[string]any{"number": cand.Number, "type": cand.Type, "status": cand.Status,
		"charged_usd": cand.ChargedUSD.StringFixed(2), "created": cand.CreatedAt, "match": match}, nil
}

type adoptBody struct {
	// Number is the upstream order the owner confirmed.
	Number string `json:"number"`
}

// adopt makes the upstream order the owner confirmed the order's own (the
// chat's "adopt": checked again, then fulfil's Adopt, audited): the order
// goes back to placed and the worker tracks it to delivered or refunded.
func (c *Console) adopt(q *request) (any, *apiError) {
	var b adoptBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	o, tag, e := c.current(q)
	if e != nil {
		return nil, e
	}
	if c.d.Fulfil == nil {
		return nil, c.noFulfil()
	}
	if strings.TrimSpace(b.Number) == "" {
		return nil, bad("console.err.adopt_number")
	}
	n, e := adoptNumber(b.Number, o)
	if e != nil {
		return nil, e
	}
	if err := c.d.Fulfil.AdoptNumber(q.r.Context(), q.actor, o, tag, n); err != nil {
		if e := adoptError(err); e.Code != "error" {
			return nil, e
		}
		c.log.Warn("console: adopt", "order", o.ID, "err", err)
		return nil, internal()
	}
	return map[string]any{"done": "placed", "upstream": n}, nil
}
