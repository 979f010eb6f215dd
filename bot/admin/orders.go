package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/fulfil"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// The admin's shop-wide orders: /orders (for an admin) lists every buyer's
// orders with filters and pages, /order N shows one in full with the actions
// that make sense for its status. Both live in one flow, so the chat
// remembers where the admin is: a stale button shows the current screen
// again and changes nothing, and the action buttons carry the session nonce,
// so a double tap acts once.

// aoFlow is the admin orders flow's name.
const aoFlow = "adminorders"

// aoPerPage is how many orders one page of the admin list shows.
const aoPerPage = 5

// Steps of the admin orders flow.
const (
	aoStepList       = "list"
	aoStepPickStatus = "pick_status"
	aoStepPickLine   = "pick_line"
	aoStepOrder      = "order"
	aoStepRefund     = "refund"        // refund confirmation
	aoStepAdopt      = "adopt"         // waiting for the upstream number
	aoStepAdoptSure  = "adopt_confirm" // adopt confirmation
	aoStepReplace    = "replace"       // place-again confirmation
)

// Button actions of the admin orders flow (session nonce: valid only on the
// current screen).
const (
	aoActPage      flows.Action = "aop"  // arg: page
	aoActPick      flows.Action = "aof"  // arg: "status" or "line"
	aoActStatus    flows.Action = "aos"  // arg: status, "" for all
	aoActLine      flows.Action = "aoln" // arg: line, "" for all
	aoActOpen      flows.Action = "aoo"  // arg: the order's Ref (state.Order.Ref)
	aoActMine      flows.Action = "aomy" // the admin's own buyer "My orders"
	aoActList      flows.Action = "aoli" // back to the list
	aoActView      flows.Action = "aov"  // back to the order (from a confirmation)
	aoActRefresh   flows.Action = "aore" // read the order again
	aoActCodes     flows.Action = "aocd" // arg: "1" show, "" hide
	aoActRetry     flows.Action = "aort" // send a delivered order's result again
	aoActRun       flows.Action = "aorn" // make a waiting order's job due now
	aoActRefund    flows.Action = "aorf" // ask to confirm a refund
	aoActRefundYes flows.Action = "aory" // refund, confirmed
	aoActAdopt     flows.Action = "aoad" // ask for the upstream number
	aoActAdoptYes  flows.Action = "aoay" // adopt, confirmed
	aoActReplace   flows.Action = "aopl" // ask to confirm placing again
	aoActReplaceOK flows.Action = "aopy" // place again, confirmed
)

// Session variables of the admin orders flow.
const (
	// aoKeyOrder is the order shown (its id); aoKeyTag the tag of the
	// charge it was opened as (state.ChargeTag), so an action never
	// reaches another purchase under the same number.
	aoKeyOrder flows.Key = "id"
	aoKeyTag   flows.Key = "tag"
	// aoKeyVia is how /order N found it (aoViaOurs, aoViaUpstream; unset
	// when opened from the list), aoKeyNumber that N, and aoKeyOther the
	// other order whose upstream number N is too.
	aoKeyVia    flows.Key = "via"
	aoKeyNumber flows.Key = "n"
	aoKeyOther  flows.Key = "other"
	// aoKeyPage is the list's page (a number), aoKeyStatus and aoKeyLine
	// its filters ("": all).
	aoKeyPage   flows.Key = "page"
	aoKeyStatus flows.Key = "status"
	aoKeyLine   flows.Key = "line"
	// aoKeyCodes shows the delivered codes ("1") on the order.
	aoKeyCodes flows.Key = "codes"
	// aoKeyFrom is the status the refund confirmation is for.
	aoKeyFrom flows.Key = "from"
	// aoKeyAdopt is the upstream number to adopt (a number).
	aoKeyAdopt flows.Key = "adopt"
)

// aoNeeds are the actions on one order, with the step their button is on
// ("" for any step showing the order).
var aoNeeds = map[flows.Action]string{
	aoActView: "", aoActRefresh: "", aoActCodes: aoStepOrder, aoActRetry: aoStepOrder, aoActRun: aoStepOrder,
	aoActRefund: aoStepOrder, aoActRefundYes: aoStepRefund, aoActAdopt: aoStepOrder, aoActAdoptYes: aoStepAdoptSure,
	aoActReplace: aoStepOrder, aoActReplaceOK: aoStepReplace,
}

// How /order N found the order.
const (
	aoViaOurs     = "ours"
	aoViaUpstream = "upstream"
)

// aoStatuses are the statuses the list can be filtered by, in lifecycle order.
var aoStatuses = []string{state.OrderPaid, state.OrderPlacing, state.OrderPlaced, state.OrderDelivered,
	state.OrderRefunding, state.OrderRefunded, state.OrderNeedsReview}

// upstreamTimeout bounds the live GET /orders/{n} of the order view, so a
// slow upstream does not hold the admin's chat.
const upstreamTimeout = 5 * time.Second

// adminOrders is the flow; it acts on orders through the fulfilment
// worker.
type adminOrders struct{ *Admin }

// registerAdminOrders adds the staff's /orders (the shop-wide list, in
// place of the buyer's own for those who may read orders), /order and the
// admin orders flow, whose actions on an order each need their own perm.
func (ad *Admin) registerAdminOrders(e *flows.Engine) {
	a := adminOrders{ad}
	e.AdminFlow(aoFlow, flows.PermOrdersRead, "cmd.orders_admin", a).
		Action(aoActRetry, flows.PermOrdersResend, "staff.act.resend").
		Action(aoActCodes, flows.PermOrdersResend, "staff.act.codes").
		Action(aoActRun, flows.PermOrdersResend, "staff.act.run").
		Action(aoActRefund, flows.PermOrdersRefund, "staff.act.refund").
		Action(aoActRefundYes, flows.PermOrdersRefund, "staff.act.refund").
		Action(aoActAdopt, flows.PermOrdersRetry, "staff.act.adopt").
		Action(aoActAdoptYes, flows.PermOrdersRetry, "staff.act.adopt").
		Action(aoActReplace, flows.PermOrdersRetry, "staff.act.replace").
		Action(aoActReplaceOK, flows.PermOrdersRetry, "staff.act.replace")
	e.AdminCommand("orders", flows.PermOrdersRead, "cmd.orders_admin", func(ctx context.Context, env *flows.Env, s *flows.Session, _ flows.Event) (*flows.Reply, error) {
		return a.listCommand(ctx, env, s)
	})
	e.AdminCommand("order", flows.PermOrdersRead, "cmd.order", a.orderCommand)
}

func notice(text string) []flows.Notice { return []flows.Notice{{Text: text}} }

// listCommand is an admin's /orders: the first page, no filter.
func (a adminOrders) listCommand(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	s.Enter(aoFlow, aoStepList, env.Now.Add(a.engine.FlowTTL))
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

// orderCommand is /order N: N is tried as our number, then as an upstream
// number.
func (a adminOrders) orderCommand(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	arg := strings.TrimSpace(ev.Arg)
	n, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	switch {
	case arg == "":
		return &flows.Reply{Notices: notice(env.T("ao.order.usage")), NoScreen: true}, nil
	case err != nil || n <= 0:
		return &flows.Reply{Notices: notice(env.T("ao.order.bad", "arg", locales.Escape(arg)) + "\n" + env.T("ao.order.usage")), NoScreen: true}, nil
	}
	orders := a.orders
	ours, err := orders.Get(ctx, n)
	if err != nil && !errors.Is(err, state.ErrOrderNotFound) {
		return nil, err
	}
	theirs, err := orders.ByUpstream(ctx, n)
	if err != nil && !errors.Is(err, state.ErrOrderNotFound) {
		return nil, err
	}
	var id int64
	var opened *state.Order
	via := aoViaOurs
	switch {
	case ours != nil:
		id, opened = ours.ID, ours
	case theirs != nil:
		id, via, opened = theirs.ID, aoViaUpstream, theirs
	default:
		return &flows.Reply{Notices: notice(env.T("ao.order.unknown", "number", strconv.FormatInt(n, 10)) + "\n" + env.T("ao.order.usage")), NoScreen: true}, nil
	}
	s.Enter(aoFlow, aoStepOrder, env.Now.Add(a.engine.FlowTTL))
	s.SetInt(aoKeyOrder, id)
	s.Set(aoKeyTag, state.ChargeTag(opened.ChargeID))
	s.Set(aoKeyVia, via)
	s.SetInt(aoKeyNumber, n)
	if ours != nil && theirs != nil && theirs.ID != ours.ID {
		s.SetInt(aoKeyOther, theirs.ID) // N is also another order's upstream number
	}
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

// Start enters the flow at the list (the engine only calls it for lines;
// /orders and /order enter the flow themselves).
func (a adminOrders) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = aoStepList
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

// Handle takes the admin's presses and, while adopting, the upstream number.
func (a adminOrders) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if ev.Kind != flows.EvButton {
		if s.Step == aoStepAdopt && ev.Kind == flows.EvText {
			return a.adoptNumber(ctx, env, s, ev.Text)
		}
		sc, err := a.Show(ctx, env, s)
		return &flows.Reply{Notices: notice(env.T("err.use_buttons")), Screen: sc}, err
	}
	if need, ok := aoNeeds[ev.Button.Action]; ok && (s.Get(aoKeyOrder) == "" || (need != "" && s.Step != need)) {
		// Not a button of the current screen (forged data): change nothing.
		sc, err := a.Show(ctx, env, s)
		return &flows.Reply{Answer: env.T("err.outdated"), Screen: sc}, err
	}
	if _, ok := aoNeeds[ev.Button.Action]; ok {
		switch _, err := a.current(ctx, s); {
		case errors.Is(err, errOrderReplaced), errors.Is(err, state.ErrOrderNotFound):
			return a.replaced(ctx, env, s, ev.Button.Action)
		case err != nil:
			return nil, err
		}
	}
	arg := ev.Button.Arg
	switch ev.Button.Action {
	case aoActPage:
		s.Set(aoKeyPage, arg)
		return a.show(ctx, env, s, aoStepList, "")
	case aoActPick:
		step := aoStepPickStatus
		if arg == "line" {
			step = aoStepPickLine
		}
		return a.show(ctx, env, s, step, "")
	case aoActStatus:
		s.Set(aoKeyStatus, arg)
		s.Set(aoKeyPage, "")
		return a.show(ctx, env, s, aoStepList, "")
	case aoActLine:
		s.Set(aoKeyLine, arg)
		s.Set(aoKeyPage, "")
		return a.show(ctx, env, s, aoStepList, "")
	case aoActList:
		return a.show(ctx, env, s, aoStepList, "")
	case aoActOpen:
		id, tag, ok := state.ParseRef(arg)
		if !ok {
			return a.show(ctx, env, s, aoStepList, env.T("err.outdated"))
		}
		s.SetInt(aoKeyOrder, id)
		s.Set(aoKeyTag, tag)
		s.Set(aoKeyVia, "")
		s.Set(aoKeyOther, "")
		s.Set(aoKeyCodes, "")
		return a.show(ctx, env, s, aoStepOrder, "")
	case aoActMine:
		s.Clear()
		return a.ordersPage(ctx, env, ev.User.ID, 0)
	case aoActView, aoActRefresh:
		return a.show(ctx, env, s, aoStepOrder, "")
	case aoActCodes:
		s.Set(aoKeyCodes, arg)
		if arg != "" {
			a.log.Info("admin revealed order codes", "admin", ev.User.ID, "order", s.Get(aoKeyOrder))
		}
		return a.show(ctx, env, s, aoStepOrder, "")
	case aoActRetry:
		return a.retry(ctx, env, s)
	case aoActRun:
		return a.run(ctx, env, s)
	case aoActRefund:
		return a.askRefund(ctx, env, s)
	case aoActRefundYes:
		return a.refund(ctx, env, s)
	case aoActAdopt:
		return a.askAdopt(ctx, env, s)
	case aoActAdoptYes:
		return a.adopt(ctx, env, s)
	case aoActReplace:
		return a.askReplace(ctx, env, s)
	case aoActReplaceOK:
		return a.replace(ctx, env, s)
	}
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Answer: env.T("err.outdated"), Screen: sc}, err
}

// show moves to step and renders it, with answer as the press's answer.
func (a adminOrders) show(ctx context.Context, env *flows.Env, s *flows.Session, step, answer string) (*flows.Reply, error) {
	s.Step = step
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Answer: answer, Screen: sc, Save: true}, err
}

// Show renders the current step. The engine leaves off the buttons the
// user's roles do not allow (a support agent sees no refund).
func (a adminOrders) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case aoStepPickStatus:
		return a.pickStatus(env), nil
	case aoStepPickLine:
		return a.pickLine(env), nil
	case aoStepList:
		return a.list(ctx, env, s)
	}
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	switch s.Step {
	case aoStepRefund:
		return a.refundScreen(env, s, o), nil
	case aoStepAdopt:
		return a.adoptScreen(env, o), nil
	case aoStepAdoptSure:
		return a.adoptConfirmScreen(ctx, env, s, o)
	case aoStepReplace:
		return a.replaceScreen(env, o), nil
	}
	return a.orderScreen(ctx, env, s, o), nil
}

// errOrderReplaced: the number the flow is on names another purchase now.
var errOrderReplaced = errors.New("the order's number names another purchase now")

// current reads the order the flow is on: the purchase it was opened as
// (its charge's tag), never another one under the same number.
func (a adminOrders) current(ctx context.Context, s *flows.Session) (*state.Order, error) {
	id := s.Int64(aoKeyOrder)
	if id == 0 {
		return nil, fmt.Errorf("admin orders: no order in step %q", s.Step)
	}
	o, err := a.orders.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !o.Is(s.Get(aoKeyTag)) {
		return nil, errOrderReplaced
	}
	return o, nil
}

// --- the list ---

func (a adminOrders) list(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	filter := state.OrderFilter{Status: s.Get(aoKeyStatus), Line: s.Get(aoKeyLine)}
	page := s.Int(aoKeyPage)
	page = max(page, 0)
	var list []*state.Order
	for {
		var err error
		list, err = a.orders.List(ctx, page*aoPerPage, aoPerPage+1, filter)
		if err != nil {
			return nil, err
		}
		if len(list) > 0 || page == 0 {
			break
		}
		page = 0 // the page emptied meanwhile: back to the first
		s.Set(aoKeyPage, "")
	}
	more := len(list) > aoPerPage
	list = list[:min(len(list), aoPerPage)]

	statusLabel, lineLabel := env.T("ao.all"), env.T("ao.all")
	if filter.Status != "" {
		statusLabel = env.T("ao.status." + filter.Status)
	}
	if filter.Line != "" {
		lineLabel = env.T("line." + filter.Line)
	}
	text := env.T("ao.list.title") + "\n" + env.T("ao.list.filter", "status", statusLabel, "line", lineLabel)
	if len(list) == 0 {
		text += "\n\n" + env.T("ao.list.empty")
	}
	var rows [][]flows.Button
	for _, o := range list {
		text += "\n\n" + env.T("ao.list.item", "id", itoa(o.ID), "status", env.T("ao.status."+o.Status),
			"date", locales.DateTime(env.Lang, o.CreatedAt), "line", env.T("line."+o.Line),
			"item", locales.Escape(upstreamorder.ItemName(env.Lang, o)), "buyer", buyerLink(o.UserID), "paid", a.paid(env, o),
			"upstream", a.upstreamNumber(env, o), "charged", a.charged(env, o), "margin", a.margin(env, o))
		label := locales.Clip("#"+itoa(o.ID)+" · "+upstreamorder.ItemName(env.Lang, o), 40)
		rows = append(rows, []flows.Button{{Text: label, Action: aoActOpen, Arg: o.Ref()}})
	}
	if page > 0 || more {
		text += "\n\n" + env.T("ao.list.page", "page", page+1)
		var nav []flows.Button
		if page > 0 {
			nav = append(nav, flows.Button{Text: env.T("btn.prev"), Action: aoActPage, Arg: strconv.Itoa(page - 1)})
		}
		if more {
			nav = append(nav, flows.Button{Text: env.T("btn.next"), Action: aoActPage, Arg: strconv.Itoa(page + 1)})
		}
		rows = append(rows, nav)
	}
	rows = append(rows,
		[]flows.Button{{Text: env.T("ao.btn.status", "status", statusLabel), Action: aoActPick, Arg: "status"},
			{Text: env.T("ao.btn.line", "line", lineLabel), Action: aoActPick, Arg: "line"}},
		[]flows.Button{{Text: env.T("btn.orders"), Action: aoActMine}})
	return &flows.Screen{Text: text, Rows: rows}, nil
}

func (a adminOrders) pickStatus(env *flows.Env) *flows.Screen {
	rows := [][]flows.Button{{{Text: env.T("ao.all"), Action: aoActStatus}}}
	var row []flows.Button
	for _, st := range aoStatuses {
		row = append(row, flows.Button{Text: env.T("ao.status." + st), Action: aoActStatus, Arg: st})
		if len(row) == 2 {
			rows, row = append(rows, row), nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.back"), Action: aoActList}})
	return &flows.Screen{Text: env.T("ao.pick.status"), Rows: rows}
}

func (a adminOrders) pickLine(env *flows.Env) *flows.Screen {
	rows := [][]flows.Button{{{Text: env.T("ao.all"), Action: aoActLine}}}
	var row []flows.Button
	for _, l := range flows.Lines {
		row = append(row, flows.Button{Text: env.T(l.Label), Action: aoActLine, Arg: l.Name})
		if len(row) == 2 {
			rows, row = append(rows, row), nil
		}
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.back"), Action: aoActList}})
	return &flows.Screen{Text: env.T("ao.pick.line"), Rows: rows}
}

// --- figures ---

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// buyerLink links the buyer's Telegram profile by user id.
func buyerLink(id int64) string {
	return `<a href="tg://user?id=` + itoa(id) + `">` + itoa(id) + `</a>`
}

// paid is what the buyer paid: Stars, or USD for wallet payments.
func (a adminOrders) paid(env *flows.Env, o *state.Order) string {
	if o.PayMethod == state.PayStars {
		return locales.Stars(env.Lang, o.Stars)
	}
	return locales.Money(env.Lang, o.ShopUSD)
}

// chargedKnown: charged_usd is stored with the upstream number (from the
// create or adopt response) and updated on completion.
func chargedKnown(o *state.Order) bool { return o.UpstreamNumber != 0 }

func (a adminOrders) charged(env *flows.Env, o *state.Order) string {
	if !chargedKnown(o) {
		return env.T("ao.none")
	}
	return locales.Money(env.Lang, o.ChargedUSD)
}

// margin is revenue minus charged_usd; unknown ("—") before the upstream
// order exists, for refunded orders, whose revenue went back (the
// upstream credits a failed order back too), and for an impossible stored
// charge (state.Order.ChargeFault), from which nothing is computed.
func (a adminOrders) margin(env *flows.Env, o *state.Order) string {
	if !chargedKnown(o) || o.Status == state.OrderRefunding || o.Status == state.OrderRefunded || o.ChargeFault(o.ChargedUSD) != "" {
		return env.T("ao.none")
	}
	return locales.Money(env.Lang, a.paidUSD(o).Sub(o.ChargedUSD))
}

func (a adminOrders) upstreamNumber(env *flows.Env, o *state.Order) string {
	if o.UpstreamNumber == 0 {
		return env.T("ao.none")
	}
	return "#" + itoa(o.UpstreamNumber)
}

// reasonText shows an order's reason: buyer reasons are locale keys.
func reasonText(env *flows.Env, reason string) string {
	if strings.HasPrefix(reason, "order.reason_") {
		return env.T(reason)
	}
	return locales.Escape(reason)
}

// --- one order ---

// History and upstream steps shown at most, so the view fits a message.
const (
	aoHistorySteps  = 10
	aoUpstreamSteps = 8
	aoNoteChars     = 100
)

func (a adminOrders) orderScreen(ctx context.Context, env *flows.Env, s *flows.Session, o *state.Order) *flows.Screen {
	T := env.T
	item := upstreamorder.ItemName(env.Lang, o)
	// What the buyer typed (player id, server, recipient, login), as their
	// summary showed it: what a "wrong account" complaint is checked
	// against. Secret answers are masked there already.
	entered := ""
	if q, err := upstreamorder.QuoteOf(o); err == nil {
		entered = q.For
	}
	lines := []string{T("ao.order.title", "id", itoa(o.ID))}
	switch s.Get(aoKeyVia) {
	case aoViaOurs:
		lines = append(lines, T("ao.order.via_ours"))
	case aoViaUpstream:
		lines = append(lines, T("ao.order.via_upstream", "number", s.Get(aoKeyNumber)))
	}
	if other := s.Get(aoKeyOther); other != "" {
		lines = append(lines, T("ao.order.also_upstream", "number", s.Get(aoKeyNumber), "other", other))
	}
	lines = append(lines, "",
		T("ao.order.item", "line", T("line."+o.Line), "item", locales.Escape(item)))
	if entered != "" {
		lines = append(lines, T("ao.order.entered", "who", locales.Escape(entered)))
	}
	lines = append(lines, T("ao.order.buyer", "buyer", buyerLink(o.UserID)))
	if o.PayMethod == state.PayStars {
		lines = append(lines, T("ao.order.paid_stars", "stars", locales.Stars(env.Lang, o.Stars), "charge", locales.Escape(o.ChargeID)))
	} else {
		lines = append(lines, T("ao.order.paid_wallet", "amount", locales.Money(env.Lang, o.ShopUSD), "charge", locales.Escape(o.ChargeID)))
	}
	if o.PromoCode != "" {
		lines = append(lines, T("ao.order.promo", "code", locales.Escape(o.PromoCode), "discount", locales.Money(env.Lang, o.DiscountUSD)))
	}
	lines = append(lines,
		T("ao.order.money", "revenue", locales.Money(env.Lang, a.paidUSD(o)), "charged", a.charged(env, o), "margin", a.margin(env, o)),
		T("ao.order.status", "status", T("ao.status."+o.Status)))
	if o.UpstreamNumber != 0 {
		st := o.UpstreamStatus
		if st == "" {
			st = T("ao.none")
		}
		lines = append(lines, T("ao.order.upstream", "number", itoa(o.UpstreamNumber), "status", locales.Escape(st)))
	} else {
		lines = append(lines, T("ao.order.upstream_none"))
	}
	if o.Attempts > 0 {
		lines = append(lines, T("ao.order.attempts", "n", o.Attempts, "at", locales.DateTime(env.Lang, o.PlacingAt)))
	}
	if o.Reason != "" {
		lines = append(lines, T("ao.order.reason", "reason", locales.Clip(reasonText(env, o.Reason), 300)))
	}
	if o.RefundRef != "" {
		lines = append(lines, T("ao.order.refund_ref", "ref", locales.Escape(o.RefundRef)))
	}
	lines = append(lines, T("ao.order.times", "created", locales.DateTime(env.Lang, o.CreatedAt), "updated", locales.DateTime(env.Lang, o.UpdatedAt)))
	if !o.DeliveredAt.IsZero() {
		lines = append(lines, T("ao.order.delivered_at", "at", locales.DateTime(env.Lang, o.DeliveredAt)))
	}
	switch {
	case o.Status == state.OrderDelivered:
		lines = append(lines, "", T("ao.order.no_refund"))
	case o.Status == state.OrderNeedsReview:
		lines = append(lines, "", T("ao.order.review_hint"))
	}

	lines = append(lines, "", T("ao.order.history"))
	hist := o.History
	if len(hist) > aoHistorySteps {
		lines = append(lines, env.N("ao.order.history_more", int64(len(hist)-aoHistorySteps)))
		hist = hist[len(hist)-aoHistorySteps:]
	}
	for _, h := range hist {
		kv := []any{"at", locales.DateTime(env.Lang, h.At), "from", T("ao.status." + h.From), "to", T("ao.status." + h.To)}
		if h.Note != "" {
			lines = append(lines, T("ao.order.step_note", append(kv, "note", locales.Escape(locales.Clip(h.Note, aoNoteChars)))...))
		} else {
			lines = append(lines, T("ao.order.step", kv...))
		}
	}
	if o.UpstreamNumber != 0 {
		lines = append(lines, "", a.liveUpstream(ctx, env, o.UpstreamNumber))
	}

	text := strings.Join(lines, "\n")
	showCodes := s.Get(aoKeyCodes) != ""
	switch {
	case len(o.Codes) > 0 && showCodes:
		var all bool
		text, all = fulfil.FitCodes(text+"\n\n"+env.N("ao.order.codes_shown", int64(len(o.Codes))), fulfil.CodeLines(o.Codes), T("ao.order.codes_cut"))
		if !all {
			text += "\n\n" + T("ao.order.codes_cut")
		}
	case len(o.Codes) > 0:
		text += "\n\n" + env.N("ao.order.codes_hidden", int64(len(o.Codes)))
	case o.Shrunk:
		text += "\n\n" + T("ao.order.shrunk")
	}
	return &flows.Screen{Text: text, Rows: a.orderRows(env, o, showCodes)}
}

// orderRows is the /order view's keyboard: each row below is one line and
// appears only when it makes sense for the order's status, so another
// action is one more row here. The order chat relay adds its "📨 Chat"
// row (action "achat", arg our order id) for manual-service orders next to
// the codes row.
func (a adminOrders) orderRows(env *flows.Env, o *state.Order, codesShown bool) [][]flows.Button {
	var rows [][]flows.Button
	row := func(show bool, b ...flows.Button) {
		if show {
			rows = append(rows, b)
		}
	}
	btn := func(key string, action flows.Action) flows.Button {
		return flows.Button{Text: env.T(key), Action: action}
	}
	review := o.Status == state.OrderNeedsReview
	row(o.Status == state.OrderDelivered && !o.Shrunk, btn("ao.btn.retry", aoActRetry))
	row(waiting(o.Status), btn("ao.btn.run", aoActRun))
	row(refundable(o.Status), btn("ao.btn.refund", aoActRefund))
	row(review, btn("ao.btn.adopt", aoActAdopt))
	row(review && o.UpstreamNumber == 0, btn("ao.btn.replace", aoActReplace))
	row(len(o.Codes) > 0 && !codesShown, flows.Button{Text: env.T("ao.btn.codes_show"), Action: aoActCodes, Arg: "1"})
	row(len(o.Codes) > 0 && codesShown, btn("ao.btn.codes_hide", aoActCodes))
	row(o.UpstreamNumber != 0 && o.Line == "services", a.chats.TranscriptButton(env.T("ao.btn.chat"), o))
	row(true, btn("ao.btn.refresh", aoActRefresh), btn("ao.btn.list", aoActList))
	return rows
}

// waiting statuses have a job the worker runs on its own schedule.
func waiting(status string) bool {
	return status == state.OrderPaid || status == state.OrderPlacing || status == state.OrderPlaced || status == state.OrderRefunding
}

// refundable statuses may move to refunding by the lifecycle table (a
// refunding order is already on its way).
func refundable(status string) bool {
	return status != state.OrderRefunding && state.CanMove(status, state.OrderRefunding)
}

// liveUpstream fetches the upstream order now: its status, charge and
// status history, or one line saying why it could not be read.
func (a adminOrders) liveUpstream(ctx context.Context, env *flows.Env, number int64) string {
	up := a.up
	if up == nil {
		return env.T("ao.live.off")
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
	defer cancel()
	u, err := up.Order(ctx, number)
	switch {
	case reseller.IsNotFound(err):
		return env.T("ao.live.missing", "number", itoa(number))
	case err != nil:
		a.log.Warn("admin view: read upstream order", "upstream", number, "err", err)
		return env.T("ao.live.error", "number", itoa(number), "err", locales.Escape(locales.Clip(err.Error(), 160)))
	}
	lines := []string{env.T("ao.live.title", "number", itoa(number), "status", locales.Escape(string(u.Status)),
		"charged", locales.Money(env.Lang, u.ChargedUSD.Decimal))}
	if u.StatusReason != "" {
		lines = append(lines, env.T("ao.order.reason", "reason", locales.Escape(locales.Clip(u.StatusReason, 200))))
	}
	hist := u.StatusHistory
	if len(hist) > aoUpstreamSteps {
		hist = hist[len(hist)-aoUpstreamSteps:]
	}
	for _, h := range hist {
		kv := []any{"at", locales.DateTime(env.Lang, h.At), "status", locales.Escape(string(h.Status))}
		if h.Reason != "" {
			lines = append(lines, env.T("ao.live.step_reason", append(kv, "reason", locales.Escape(locales.Clip(h.Reason, aoNoteChars)))...))
		} else {
			lines = append(lines, env.T("ao.live.step", kv...))
		}
	}
	return strings.Join(lines, "\n")
}

// changed answers that the order moved on since the admin saw it, and
// shows it as it is now.
func (a adminOrders) changed(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	return a.show(ctx, env, s, aoStepOrder, env.T("ao.ans.changed"))
}

// replaced answers an action on an order the store no longer holds as it
// was shown: Redis lost writes and gave its number to another purchase (or
// lost it). Nothing is done to what is there now; the list is shown.
func (a adminOrders) replaced(ctx context.Context, env *flows.Env, s *flows.Session, action flows.Action) (*flows.Reply, error) {
	a.log.Warn("admin action on an order the store no longer holds as shown", "order", s.Get(aoKeyOrder), "admin", env.User.ID, "action", action)
	s.Set(aoKeyOrder, "")
	s.Set(aoKeyTag, "")
	return a.show(ctx, env, s, aoStepList, env.T("ao.ans.replaced_order"))
}

// --- retry delivery / run now ---

// retry sends a delivered order's result to the buyer again, the way the
// worker delivers it; a delivery the buyer never got is recorded as done.
func (a adminOrders) retry(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if o.Status != state.OrderDelivered || o.Shrunk {
		return a.changed(ctx, env, s)
	}
	err = a.ful.Resend(ctx, chatActor(env), o)
	answer := env.T("ao.ans.retry_sent")
	switch {
	case errors.Is(err, flows.ErrBlocked):
		answer = env.T("ao.ans.retry_blocked")
	case err != nil:
		a.log.Warn("admin resend of an order failed", "order", o.ID, "err", err)
		answer = env.T("ao.ans.retry_failed")
	}
	if err == nil {
		a.log.Info("admin sent an order to the buyer again", "order", o.ID, "admin", env.User.ID)
	}
	return a.show(ctx, env, s, aoStepOrder, answer)
}

// run makes an unfinished order's waiting job due now.
func (a adminOrders) run(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if !waiting(o.Status) {
		return a.changed(ctx, env, s)
	}
	running, err := a.ful.RunNow(ctx, chatActor(env), o.ID)
	if err != nil {
		return nil, err
	}
	answer := env.T("ao.ans.run_queued")
	if running {
		answer = env.T("ao.ans.run_running")
	}
	return a.show(ctx, env, s, aoStepOrder, answer)
}

// --- refund ---

func (a adminOrders) askRefund(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if !refundable(o.Status) {
		return a.refusedRefund(ctx, env, s, o)
	}
	s.Set(aoKeyFrom, o.Status) // the confirmation is for the order as shown
	return a.show(ctx, env, s, aoStepRefund, "")
}

func (a adminOrders) refundScreen(env *flows.Env, s *flows.Session, o *state.Order) *flows.Screen {
	var text string
	if o.PayMethod == state.PayStars {
		text = env.T("ao.refund.confirm_stars", "id", itoa(o.ID), "stars", locales.Stars(env.Lang, o.Stars), "charge", locales.Escape(o.ChargeID))
	} else {
		text = env.T("ao.refund.confirm_wallet", "id", itoa(o.ID), "amount", locales.Money(env.Lang, o.ShopUSD))
	}
	switch s.Get(aoKeyFrom) {
	case state.OrderPlacing:
		text += "\n\n" + env.T("ao.refund.warn_placing")
	case state.OrderPlaced:
		st := o.UpstreamStatus
		if st == "" {
			st = env.T("ao.none")
		}
		text += "\n\n" + env.T("ao.refund.warn_placed", "number", itoa(o.UpstreamNumber), "status", locales.Escape(st))
	case state.OrderNeedsReview:
		text += "\n\n" + env.T("ao.refund.warn_review", "reason", locales.Clip(reasonText(env, o.Reason), 300))
	}
	rows := [][]flows.Button{
		{{Text: env.T("ao.btn.refund_yes"), Action: aoActRefundYes}},
		{{Text: env.T("btn.back"), Action: aoActView}},
	}
	return &flows.Screen{Text: text, Rows: rows}
}

// refund moves the order, from the status the admin confirmed, to
// refunding (compare-and-set) and gets its job running: the worker then
// refunds exactly once, the way the buyer paid, and tells the buyer.
func (a adminOrders) refund(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	from := s.Get(aoKeyFrom)
	id := s.Int64(aoKeyOrder)
	if !refundable(from) {
		return a.changed(ctx, env, s)
	}
	err := a.ful.Refund(ctx, chatActor(env), id, s.Get(aoKeyTag), from)
	switch {
	case errors.Is(err, fulfil.ErrOrderReplaced):
		return a.replaced(ctx, env, s, aoActRefundYes)
	case errors.Is(err, state.ErrBadTransition):
		o, err := a.orders.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return a.refusedRefund(ctx, env, s, o)
	case errors.Is(err, fulfil.ErrDeliveredMeanwhile):
		a.log.Info("admin refund refused by the upstream's state", "order", id, "admin", env.User.ID, "err", err)
		o, gerr := a.orders.Get(ctx, id)
		if gerr != nil {
			return nil, gerr
		}
		key := "ao.refund.refused_completed"
		s.Step = aoStepOrder
		sc, serr := a.Show(ctx, env, s)
		return &flows.Reply{Answer: env.T("ao.ans.refund_refused"), Notices: notice(env.T(key, "id", itoa(o.ID))), Screen: sc, Save: true}, serr
	case err != nil:
		return nil, err
	}
	a.log.Info("admin refunds an order", "order", id, "admin", env.User.ID, "from", from)
	return a.show(ctx, env, s, aoStepOrder, env.T("ao.ans.refund_started"))
}

// refusedRefund explains why the order cannot be refunded now and shows it.
func (a adminOrders) refusedRefund(ctx context.Context, env *flows.Env, s *flows.Session, o *state.Order) (*flows.Reply, error) {
	var why string
	switch o.Status {
	case state.OrderDelivered:
		why = env.T("ao.refund.refused_delivered", "id", itoa(o.ID))
	case state.OrderRefunded:
		why = env.T("ao.refund.refused_refunded", "id", itoa(o.ID))
	case state.OrderRefunding:
		why = env.T("ao.refund.already", "id", itoa(o.ID))
	default:
		return a.changed(ctx, env, s)
	}
	s.Step = aoStepOrder
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Answer: env.T("ao.ans.refund_refused"), Notices: notice(why), Screen: sc, Save: true}, err
}

// --- resolving needs_review ---

func (a adminOrders) askAdopt(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if o.Status != state.OrderNeedsReview {
		return a.changed(ctx, env, s)
	}
	if o.UpstreamNumber != 0 { // its upstream order is known: tracking it again is the adoption
		s.SetInt(aoKeyAdopt, o.UpstreamNumber)
		return a.show(ctx, env, s, aoStepAdoptSure, "")
	}
	return a.show(ctx, env, s, aoStepAdopt, "")
}

func (a adminOrders) adoptScreen(env *flows.Env, o *state.Order) *flows.Screen {
	text := env.T("ao.adopt.ask", "id", itoa(o.ID), "type", string(upstreamorder.TypeOf(o.Line)))
	if o.Reason != "" {
		text += "\n\n" + env.T("ao.order.reason", "reason", locales.Clip(reasonText(env, o.Reason), 300))
	}
	return &flows.Screen{Text: text, Rows: [][]flows.Button{{{Text: env.T("btn.back"), Action: aoActView}}}}
}

// adoptNumber checks the upstream number the admin sent: it must exist
// upstream, be of the order's line, and belong to no other order of ours.
// A bad number is explained and the question stays.
func (a adminOrders) adoptNumber(ctx context.Context, env *flows.Env, s *flows.Session, text string) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if o.Status != state.OrderNeedsReview {
		return a.changed(ctx, env, s)
	}
	again := func(msg string) (*flows.Reply, error) {
		return &flows.Reply{Notices: notice(msg), Screen: a.adoptScreen(env, o)}, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(text), "#"), 10, 64)
	if err != nil || n <= 0 {
		return again(env.T("ao.adopt.bad_number"))
	}
	num := itoa(n)
	var read fulfil.ReadOrder
	if a.up != nil {
		read = a.upstreamOrder
	}
	// The console's check too (fulfil.Fulfiller.CheckAdoptNumber).
	_, err = fulfil.CheckAdopt(ctx, a.orders, read, o, n)
	var no *fulfil.AdoptRefusal
	switch {
	case errors.As(err, &no) && no.Reason == fulfil.AdoptClaimed:
		return again(env.T("ao.adopt.claimed", "number", num, "other", itoa(no.Other)))
	case errors.As(err, &no) && no.Reason == fulfil.AdoptNotFound:
		return again(env.T("ao.adopt.not_found", "number", num))
	case errors.As(err, &no) && no.Reason == fulfil.AdoptWrongType:
		return again(env.T("ao.adopt.wrong_type", "number", num, "got", locales.Escape(no.Got),
			"id", itoa(o.ID), "want", no.Want))
	case errors.As(err, &no):
		return again(env.T("ao.adopt.up_error", "number", num, "err", locales.Escape(locales.Clip(no.Err.Error(), 160))))
	case err != nil:
		return nil, err
	}
	s.Set(aoKeyAdopt, num)
	s.Step = aoStepAdoptSure
	sc, err := a.Show(ctx, env, s)
	return &flows.Reply{Screen: sc, Save: true}, err
}

func (a adminOrders) upstreamOrder(ctx context.Context, n int64) (*reseller.Order, error) {
	if a.up == nil {
		return nil, errors.New("no upstream configured")
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
	defer cancel()
	return a.up.Order(ctx, n)
}

func (a adminOrders) adoptConfirmScreen(ctx context.Context, env *flows.Env, s *flows.Session, o *state.Order) (*flows.Screen, error) {
	n := s.Int64(aoKeyAdopt)
	back := []flows.Button{{Text: env.T("btn.back"), Action: aoActView}}
	up, err := a.upstreamOrder(ctx, n)
	if err != nil {
		msg := env.T("ao.adopt.up_error", "number", itoa(n), "err", locales.Escape(locales.Clip(err.Error(), 160)))
		return &flows.Screen{Text: msg, Rows: [][]flows.Button{back}}, nil
	}
	match := env.T("ao.adopt.match_unknown")
	if known, same := fulfil.Matches(o, up); known {
		match = env.T("ao.adopt.match_no")
		if same {
			match = env.T("ao.adopt.match_yes")
		}
	}
	text := env.T("ao.adopt.confirm", "number", itoa(n), "id", itoa(o.ID), "type", locales.Escape(string(up.Type)),
		"status", locales.Escape(string(up.Status)), "charged", locales.Money(env.Lang, up.ChargedUSD.Decimal),
		"created", locales.DateTime(env.Lang, up.CreatedAt)) + "\n\n" + match
	rows := [][]flows.Button{{{Text: env.T("ao.btn.adopt_yes", "number", itoa(n)), Action: aoActAdoptYes}}, back}
	return &flows.Screen{Text: text, Rows: rows}, nil
}

// adopt makes the upstream order the order's own (needs_review -> placed,
// claiming its number), so the worker tracks it to delivered or refunded.
func (a adminOrders) adopt(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	n := s.Int64(aoKeyAdopt)
	if o.Status != state.OrderNeedsReview || n <= 0 || (o.UpstreamNumber != 0 && o.UpstreamNumber != n) {
		return a.changed(ctx, env, s)
	}
	up, err := a.upstreamOrder(ctx, n)
	if err != nil {
		s.Step = aoStepAdopt
		return &flows.Reply{Notices: notice(env.T("ao.adopt.up_error", "number", itoa(n), "err", locales.Escape(locales.Clip(err.Error(), 160)))),
			Screen: a.adoptScreen(env, o), Save: true}, nil
	}
	err = a.ful.Adopt(ctx, chatActor(env), o.ID, s.Get(aoKeyTag), up)
	switch {
	case errors.Is(err, state.ErrUpstreamClaimed):
		owner, oerr := a.orders.ByUpstream(ctx, n)
		other := "?"
		if oerr == nil {
			other = itoa(owner.ID)
		}
		s.Step = aoStepAdopt
		return &flows.Reply{Notices: notice(env.T("ao.adopt.claimed", "number", itoa(n), "other", other)),
			Screen: a.adoptScreen(env, o), Save: true}, nil
	case errors.Is(err, state.ErrBadTransition), errors.Is(err, fulfil.ErrHasUpstream):
		return a.changed(ctx, env, s)
	case err != nil:
		return nil, err
	}
	a.log.Info("admin adopted an upstream order", "order", o.ID, "upstream", n, "admin", env.User.ID)
	return a.show(ctx, env, s, aoStepOrder, env.T("ao.ans.adopted"))
}

func (a adminOrders) askReplace(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	o, err := a.current(ctx, s)
	if err != nil {
		return nil, err
	}
	if o.Status != state.OrderNeedsReview || o.UpstreamNumber != 0 {
		return a.changed(ctx, env, s)
	}
	return a.show(ctx, env, s, aoStepReplace, "")
}

func (a adminOrders) replaceScreen(env *flows.Env, o *state.Order) *flows.Screen {
	text := env.T("ao.replace.confirm", "id", itoa(o.ID))
	if o.Reason != "" {
		text += "\n\n" + env.T("ao.order.reason", "reason", locales.Clip(reasonText(env, o.Reason), 300))
	}
	rows := [][]flows.Button{{{Text: env.T("ao.btn.replace_yes"), Action: aoActReplaceOK}}, {{Text: env.T("btn.back"), Action: aoActView}}}
	return &flows.Screen{Text: text, Rows: rows}
}

// replace sends a needs_review order back to placing with no attempt in
// flight, on the admin's word that nothing was created upstream: the
// worker then places it afresh instead of reconciling.
func (a adminOrders) replace(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	id := s.Int64(aoKeyOrder)
	err := a.ful.PlaceAgain(ctx, chatActor(env), id, s.Get(aoKeyTag))
	if errors.Is(err, state.ErrBadTransition) || errors.Is(err, fulfil.ErrHasUpstream) || errors.Is(err, fulfil.ErrOrderReplaced) {
		return a.changed(ctx, env, s)
	}
	if err != nil {
		return nil, err
	}
	a.log.Info("admin places an order again", "order", id, "admin", env.User.ID)
	return a.show(ctx, env, s, aoStepOrder, env.T("ao.ans.replaced"))
}
