package support

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/jobs"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// Support is a buyer's conversation with the shop's staff (/paysupport,
// /support, the Help button): what the buyer writes goes to every agent
// (the staff whose roles allow flows.PermTickets: owners and support
// agents) with the buyer's link and recent orders and a Reply button; an
// agent's reply goes back to the buyer. A ticket (one per buyer) stays open
// until the buyer or an agent closes it. Tickets live in the store (work.Tickets) and
// sessions are Redis-backed, so both survive restarts and are shared by
// replicas.

// Global button actions of support (the buyer opens support with
// flows.ActSupport).
const (
	actSupportReply flows.Action = "sr" // arg: buyer id; an agent answers a ticket
	actSupportClose flows.Action = "sx" // arg: buyer id; the buyer or an agent closes a ticket
	actTickets      flows.Action = "tk" // an agent's list of open tickets
)

// Support's flows: the buyer's conversation and an agent's reply.
const (
	supportFlow = "support"
	replyFlow   = "supportreply"
)

// Session variables of an agent's reply: the buyer answered (a number)
// and their name.
const (
	replyKeyTo   flows.Key = "to"
	replyKeyName flows.Key = "name"
)

// Limits of what support relays.
const (
	maxSupportText  = 3000 // of one relayed message, leaving room for the header
	maxTicketsShown = 20
	supportOrders   = 5 // recent orders shown to admins
)

// Support keeps tickets in the store (work.Tickets): one per buyer, the
// open ones by last activity.
type Support struct {
	opts    Options
	sched   *sched.Schedule
	limiter Limiter
	told    Limiter
	tg      Telegram
	orders  *records.Orders
	engine  *flows.Engine
	agents  []int64 // who gets the buyers' messages (Deps.Agents)
	log     *slog.Logger
	now     func() time.Time
	store   *work.Tickets
	// auditLog is Deps.Audit; roles is Deps.RoleName.
	auditLog *records.AuditLog
	roles    func(id int64) string
}

// New returns support over d's stores and services.
func New(opts Options, d Deps) *Support {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Fold <= 0 {
		opts.Fold = 3 * time.Second
	}
	if opts.Tick <= 0 {
		opts.Tick = 500 * time.Millisecond
	}
	return &Support{
		sched: d.Schedule, limiter: d.Limiter, told: d.Told,
		opts: opts, tg: d.Telegram, orders: d.Orders, engine: d.Engine, agents: d.Agents, log: d.Log, now: d.Now,
		store: d.Tickets, auditLog: d.Audit, roles: d.RoleName,
	}
}

// relayedTTL is how long an admin can answer a relayed message by replying
// to it.
const relayedTTL = 30 * 24 * time.Hour

// Reply is an admin's reply (Telegram's reply to a message) in their
// private chat with the bot, not a command.
type Reply struct {
	Admin        int64 // the admin's chat (and user id)
	ReplyTo      int   // the message replied to
	LanguageCode string
	Text         string // the text, or a photo's caption
	Photo        string // the photo's file id, if any
}

// TakeReply takes an admin's reply to a relayed support message and sends
// it to that buyer, without going through the admin's menu. It reports
// false for anything else, which is left to the flows.
func (sp *Support) TakeReply(ctx context.Context, m Reply) bool {
	buyer, err := sp.store.RelayedFrom(ctx, m.Admin, m.ReplyTo)
	if err != nil {
		return false // not a relayed support message (or too old): the flows answer
	}
	text, photo := m.Text, m.Photo
	lang := sp.engine.LangFor(&flows.Session{}, flows.User{LanguageCode: m.LanguageCode})
	name := sp.ticketName(ctx, buyer)
	if strings.TrimSpace(text) == "" && photo == "" {
		_, _ = sp.tg.Send(ctx, m.Admin, locales.T(lang, "support.text_or_photo"), nil)
		return true
	}
	reply := locales.T(lang, "support.replied", "user", userLink(buyer, name))
	by := state.Actor{ID: m.Admin, Role: sp.roleName(m.Admin), Via: state.ViaChat}
	if err := sp.answer(ctx, by, buyer, strings.TrimSpace(text), photo); err != nil {
		reply = locales.T(lang, "support.not_replied")
		if errors.Is(err, flows.ErrBlocked) {
			reply = locales.T(lang, "support.buyer_blocked")
		}
		sp.log.Warn("support: swipe reply to the buyer", "buyer", buyer, "err", err)
	}
	_, _ = sp.tg.Send(ctx, m.Admin, reply, nil)
	return true
}

// ticketName is the buyer's name on their ticket ("" when unknown).
func (sp *Support) ticketName(ctx context.Context, buyer int64) string {
	t, _, _ := sp.store.Get(ctx, buyer)
	return t.Name
}

// Register adds the commands, buttons and the two flows.
func (sp *Support) Register(e *flows.Engine) {
	open := func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		return sp.start(ctx, env, s, ev)
	}
	e.HandleCommand("paysupport", open)
	e.HandleCommand("support", open)
	e.HandleButton(flows.ActSupport, open)
	e.RegisterLasting(supportFlow, buyerSupport{sp})
	e.AdminFlow(replyFlow, flows.PermTickets, "staff.btn.ticket_reply", adminReply{sp}).Lasting()
	e.HandleCommand("terms", func(_ context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
		return sp.terms(env), nil
	})
	tickets := func(ctx context.Context, env *flows.Env, s *flows.Session, _ flows.Event) (*flows.Reply, error) {
		return sp.tickets(ctx, env, s)
	}
	e.AdminCommand("tickets", flows.PermTickets, "cmd.tickets", tickets)
	e.AdminButton(actTickets, flows.PermTickets, "cmd.tickets", tickets)
	e.AdminButton(actSupportReply, flows.PermTickets, "staff.btn.ticket_reply", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		id, _ := strconv.ParseInt(ev.Button.Arg, 10, 64)
		t, ok, err := sp.store.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok || id <= 0 {
			return &flows.Reply{Answer: env.T("support.no_ticket"), Alert: true, NoScreen: true}, nil
		}
		s.Enter(replyFlow, "write", time.Time{})
		s.SetInt(replyKeyTo, id)
		s.Set(replyKeyName, t.Name)
		sc := sp.replyScreen(env, s)
		sc.Fresh = true
		return &flows.Reply{Screen: sc, Save: true}, nil
	})
	// Close is the buyer's, for their own ticket, and staff's who answer
	// tickets, for any.
	e.HandleButton(actSupportClose, func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		id, _ := strconv.ParseInt(ev.Button.Arg, 10, 64)
		if id != env.User.ID && !env.User.Can(flows.PermTickets) {
			return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
		}
		return sp.close(ctx, env, s, id)
	})
}

// terms is the shop's terms: TERMS_TEXT (plain text) or the default, and a
// link to TERMS_URL when set.
func (sp *Support) terms(env *flows.Env) *flows.Reply {
	text, u := sp.Terms(env)
	n := flows.Notice{Text: text}
	if u != "" {
		n.Rows = [][]flows.Button{{{Text: env.T("btn.terms_full"), URL: u}}}
	}
	return &flows.Reply{Notices: []flows.Notice{n}, NoScreen: true}
}

// start opens support for the buyer: the next message goes to the admins.
func (sp *Support) start(_ context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	s.Enter(supportFlow, "write", time.Time{})
	sc := sp.buyerScreen(env, false)
	sc.Fresh = ev.Kind != flows.EvButton || ev.MsgID != s.MenuMsg
	r := &flows.Reply{Screen: sc, Save: true}
	if ev.Command == "paysupport" {
		r.Notices = []flows.Notice{{Text: env.T("paysupport.text")}}
	}
	return r, nil
}

// buyerScreen invites the buyer to write; sent says a message already went.
func (sp *Support) buyerScreen(env *flows.Env, sent bool) *flows.Screen {
	text := env.T("support.write")
	if sent {
		text = env.T("support.more")
	}
	rows := [][]flows.Button{}
	if u := sp.opts.URL; u != "" {
		rows = append(rows, []flows.Button{{Text: env.T("btn.helpdesk"), URL: u}})
	}
	if sent {
		rows = append(rows, []flows.Button{{Text: env.T("btn.close_ticket"), Action: actSupportClose, Arg: itoa(env.User.ID), Global: true}})
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.menu"), Action: flows.ActMenu, Global: true}})
	return &flows.Screen{Text: text, Rows: rows}
}

// buyerSupport is the buyer's side: every text or photo is relayed.
type buyerSupport struct{ sp *Support }

func (f buyerSupport) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	return &flows.Reply{Screen: f.sp.buyerScreen(env, s.Step == "sent"), Save: true}, nil
}

func (f buyerSupport) Show(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	return f.sp.buyerScreen(env, s.Step == "sent"), nil
}

// Cancel leaves support; an open ticket stays open and answers still come.
func (f buyerSupport) Cancel(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	s.Clear()
	return &flows.Reply{Answer: env.T("support.left"), Notices: []flows.Notice{{Text: env.T("support.left")}}, Screen: f.sp.engine.MenuScreen(env), Save: true}, nil
}

func (f buyerSupport) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if ev.Kind == flows.EvButton {
		return &flows.Reply{Screen: f.sp.buyerScreen(env, s.Step == "sent"), Save: true}, nil
	}
	text := strings.TrimSpace(ev.Text)
	if text == "" && ev.PhotoID == "" {
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("support.text_or_photo")}}, Screen: f.sp.buyerScreen(env, s.Step == "sent"), Save: true}, nil
	}
	if len(f.sp.agents) == 0 {
		// Nobody would get it: say so, and keep the buyer in support.
		f.sp.log.Warn("support: a buyer's message has no admin to reach", "buyer", env.User.ID)
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("support.not_sent")}}, Screen: f.sp.buyerScreen(env, s.Step == "sent"), Save: true}, nil
	}
	if r, err := f.sp.limit(ctx, env); r != nil || err != nil {
		return r, err
	}
	if err := f.sp.fromBuyer(ctx, env, text, ev.PhotoID); err != nil {
		return nil, err
	}
	s.Step = "sent"
	return &flows.Reply{Notices: []flows.Notice{{Text: env.T("support.sent")}}, Screen: f.sp.buyerScreen(env, true), Save: true}, nil
}

// What a buyer may write to support: Limit messages per Window (the
// shop's Deps.Limiter); beyond it the buyer is told (once per window,
// Deps.Told) to wait, and what they write meanwhile is not taken.
const (
	Limit  = 10
	Window = time.Minute
)

// limit counts a buyer's message against the rate limit. Within it, it
// returns nil; beyond it, a reply telling the buyer how long to wait (the
// first time in the window) or saying nothing (later: a flood of messages
// gets one answer, not one each).
func (sp *Support) limit(ctx context.Context, env *flows.Env) (*flows.Reply, error) {
	n, first, err := sp.over(ctx, env)
	switch {
	case err != nil || n == 0:
		return nil, err
	case !first:
		return &flows.Reply{NoScreen: true}, nil
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: env.N("support.rate_limited", n, "limit", Limit)}}, NoScreen: true}, nil
}

// over counts a buyer's message against the rate limit: 0 within it, else
// the seconds to wait and whether the buyer is told of it the first time
// in the window. The first time over it, what was taken reaches the admins
// now, not at the end of the fold: nothing more is taken from the buyer
// until the window passes.
func (sp *Support) over(ctx context.Context, env *flows.Env) (int64, bool, error) {
	ok, wait, err := sp.limiter.Allow(ctx, "sup:"+itoa(env.User.ID))
	if err != nil || ok {
		return 0, false, err
	}
	first, _, err := sp.told.Allow(ctx, "supt:"+itoa(env.User.ID))
	if err != nil {
		return 0, false, err
	}
	n := max(int64((wait+time.Second-1)/time.Second), 1)
	if first {
		if err := sp.sched.Put(ctx, relayJob(env.User.ID), sp.now()); err != nil {
			sp.log.Warn("support: relay a flood at once", "buyer", env.User.ID, "err", err)
		}
		sp.log.Info("support: a buyer is over the message limit", "buyer", env.User.ID, "wait_s", n)
	}
	return n, first, nil
}

// Write takes a buyer's text message to support from the Mini App: the
// chat's path (the same ticket, relay, fold and limit of Limit messages a
// Window, counted with the chat's). It returns "" when the message was
// taken, else why not in the buyer's words, with how long to wait when the
// buyer is over the limit.
func (sp *Support) Write(ctx context.Context, env *flows.Env, text string) (refusal string, wait time.Duration, err error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return env.T("support.text_or_photo"), 0, nil
	case len(sp.agents) == 0:
		sp.log.Warn("support: a buyer's message has no admin to reach", "buyer", env.User.ID)
		return env.T("support.not_sent"), 0, nil
	}
	n, _, err := sp.over(ctx, env)
	if err != nil {
		return "", 0, err
	}
	if n > 0 {
		return env.N("support.rate_limited", n, "limit", Limit), time.Duration(n) * time.Second, nil
	}
	return "", 0, sp.fromBuyer(ctx, env, text, "")
}

// BuyerThread is the buyer's own ticket as they see it: whether it is open
// and, while it is, its last max messages (who answered is not told:
// staff's messages carry From, the buyer's none).
func (sp *Support) BuyerThread(ctx context.Context, buyer int64, limit int) (bool, []work.TicketMsg, error) {
	t, ok, err := sp.store.Get(ctx, buyer)
	if err != nil || !ok || !t.Open {
		return false, nil, err
	}
	msgs, err := sp.store.Thread(ctx, buyer)
	if err != nil {
		return false, nil, err
	}
	if len(msgs) > limit {
		msgs = msgs[len(msgs)-limit:]
	}
	return true, msgs, nil
}

// CloseByBuyer closes the buyer's own ticket, as their Close button does,
// and tells the agents; it reports whether it was open.
func (sp *Support) CloseByBuyer(ctx context.Context, buyer int64) (bool, error) {
	was, err := sp.store.Close(ctx, buyer)
	if err != nil || !was {
		return was, err
	}
	sp.toldClosed(ctx, buyer)
	return true, nil
}

// toldClosed tells the agents that the buyer closed their ticket.
func (sp *Support) toldClosed(ctx context.Context, buyer int64) {
	lang := sp.engine.DefaultLang
	name := sp.ticketName(ctx, buyer)
	for _, admin := range sp.agents {
		if _, err := sp.tg.Send(ctx, admin, locales.T(lang, "support.closed_by_buyer", "user", userLink(buyer, name)), nil); err != nil {
			sp.log.Warn("support: tell admin of a closed ticket", "admin", admin, "err", err)
		}
	}
}

// Terms are the shop's terms as /terms shows them (Telegram HTML) and the
// full terms' address (TERMS_URL, "" when none).
func (sp *Support) Terms(env *flows.Env) (text, url string) {
	text = env.T("terms.text")
	if t := strings.TrimSpace(sp.opts.TermsText); t != "" {
		text = env.T("terms.title") + "\n\n" + locales.Escape(locales.Clip(t, 3900))
	}
	return text, sp.opts.TermsURL
}

// HelpdeskURL is the shop's external helpdesk (SUPPORT_URL, "" when none).
func (sp *Support) HelpdeskURL() string { return sp.opts.URL }

// pending is a buyer's message waiting for the relay.
type pending struct {
	Text     string `json:"t,omitempty"`
	Photo    string `json:"p,omitempty"`
	Username string `json:"u,omitempty"` // the buyer's @username then
	At       int64  `json:"at"`
}

// relayJob is the schedule's job of a buyer's relay.
func relayJob(buyer int64) string { return "support:" + itoa(buyer) }

// fromBuyer opens (or keeps open) the buyer's ticket and queues the
// message for the admins: the relay (relay, run by Run) sends what the
// buyer wrote within a fold as one message to each admin, paced like any
// message the shop starts, never from inside the buyer's update.
func (sp *Support) fromBuyer(ctx context.Context, env *flows.Env, text, photo string) error {
	u := env.User
	name := u.FirstName
	if name == "" {
		name = "@" + u.Username
	}
	now := sp.now()
	if err := sp.store.Open(ctx, u.ID, string(env.Lang), name, now); err != nil {
		return err
	}
	doc, err := json.Marshal(pending{Text: locales.Clip(text, maxSupportText), Photo: photo, Username: u.Username, At: now.Unix()})
	if err != nil {
		return err
	}
	if err := sp.store.AddMsg(ctx, u.ID, work.TicketMsg{At: now, Text: locales.Clip(text, maxSupportText), Photo: photo != "", PhotoID: photo}); err != nil {
		sp.log.Warn("support: keep the buyer's message in the thread", "buyer", u.ID, "err", err)
	}
	schedule, err := sp.store.Queue(ctx, u.ID, string(doc), sp.opts.Fold)
	if err != nil {
		return err
	}
	if schedule {
		return sp.sched.Put(ctx, relayJob(u.ID), now.Add(sp.opts.Fold))
	}
	return nil
}

// Run sends the due relays until ctx ends (the shop's background work).
func (sp *Support) Run(ctx context.Context) {
	w := &jobs.Worker{
		What: "support relay", Sched: sp.sched, Now: sp.now, Log: sp.log,
		Tick: sp.opts.Tick, Lease: 30 * time.Second, Timeout: 30 * time.Second, Parallel: 2,
		Kinds: []string{sched.Kind(relayJob(0))}, Step: sp.relayStep,
	}
	w.Run(ctx)
}

// relayStep sends a buyer's waiting messages and finishes the job, or
// says when to try again.
func (sp *Support) relayStep(ctx context.Context, j sched.Job) (time.Time, bool) {
	buyer, err := strconv.ParseInt(strings.TrimPrefix(j.Name, "support:"), 10, 64)
	if err != nil || buyer <= 0 {
		sp.log.Warn("support relay: job of a format this version does not know; left for a newer version", "job", j.Name)
		return jobs.LeaveForNewer(ctx)
	}
	docs, err := sp.store.Take(ctx, buyer)
	if err != nil {
		sp.log.Warn("support relay: take messages", "buyer", buyer, "err", err)
		return sp.now().Add(relayRetry), false
	}
	if len(docs) == 0 {
		return time.Time{}, false
	}
	if sp.relay(ctx, buyer, docs) == 0 {
		// No admin got them: they wait in the ticket for the next try.
		if err := sp.store.PutBack(ctx, buyer, docs); err != nil {
			sp.log.Error("support relay: put back messages no admin got", "buyer", buyer, "err", err)
		}
		return sp.now().Add(relayRetry), false
	}
	return time.Time{}, false
}

// relayRetry is how long a relay that reached no admin waits to try again.
const relayRetry = time.Minute

// relay sends a buyer's waiting messages to every admin: the texts folded
// into as few messages as fit (maxSupportText each), each photo with its
// caption. It returns how many admins got them. A swipe reply to any of
// them answers the buyer (TakeReply).
func (sp *Support) relay(ctx context.Context, buyer int64, docs []string) int {
	var texts []string
	var photos []pending
	username := ""
	for _, d := range docs {
		var m pending
		if json.Unmarshal([]byte(d), &m) != nil {
			continue
		}
		username = m.Username
		if m.Photo != "" {
			photos = append(photos, m)
		} else if m.Text != "" {
			texts = append(texts, locales.Escape(m.Text))
		}
	}
	t, _, _ := sp.store.Get(ctx, buyer)
	lang := sp.engine.DefaultLang
	head := locales.T(lang, "support.to_admin", "user", userLink(buyer, t.Name), "id", itoa(buyer),
		"username", usernameOr(lang, username), "orders", sp.recentOrders(ctx, lang, buyer))
	rows := sp.ticketButtons(lang, buyer)
	bodies := foldTexts(texts, maxSupportText)
	delivered := 0
	for _, admin := range sp.agents {
		got := false
		for _, body := range bodies {
			msg, err := sp.tg.Send(ctx, admin, head+"\n\n"+body, rows)
			if err != nil {
				sp.log.Warn("support: relay to admin", "admin", admin, "buyer", buyer, "err", err)
				continue
			}
			got = true
			sp.remember(ctx, admin, msg, buyer)
		}
		for _, p := range photos {
			msg, err := sp.tg.Send(ctx, admin, head, nil)
			if err == nil {
				err = sp.sendPhoto(ctx, admin, p.Photo, locales.Escape(locales.Clip(p.Text, 1000)), rows)
			}
			if err != nil {
				sp.log.Warn("support: relay a photo to admin", "admin", admin, "buyer", buyer, "err", err)
				continue
			}
			got = true
			sp.remember(ctx, admin, msg, buyer)
		}
		if got {
			delivered++
		}
	}
	return delivered
}

// remember records a relayed message so a swipe reply to it answers the
// buyer.
func (sp *Support) remember(ctx context.Context, admin int64, msg int, buyer int64) {
	if err := sp.store.Relayed(ctx, admin, msg, buyer, relayedTTL); err != nil {
		sp.log.Warn("support: remember a relayed message", "admin", admin, "buyer", buyer, "err", err)
	}
}

// foldTexts joins texts (HTML-escaped) into as few bodies of at most max
// characters as keep each text whole, a blank line between them.
func foldTexts(texts []string, limit int) []string {
	var out []string
	cur := ""
	for _, t := range texts {
		switch {
		case cur == "":
			cur = t
		case len([]rune(cur))+2+len([]rune(t)) <= limit:
			cur += "\n\n" + t
		default:
			out = append(out, cur)
			cur = t
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// ticketButtons are an admin's Reply and Close buttons of a buyer's ticket.
func (sp *Support) ticketButtons(lang locales.Lang, buyer int64) [][]flows.Button {
	reply, _ := flows.EncodeCallback(flows.GlobalNonce, actSupportReply, itoa(buyer))
	closeT, _ := flows.EncodeCallback(flows.GlobalNonce, actSupportClose, itoa(buyer))
	return [][]flows.Button{{{Text: locales.T(lang, "btn.support_reply"), Data: reply}, {Text: locales.T(lang, "btn.close_ticket"), Data: closeT}}}
}

// recentOrders is the buyer's last few orders, one per line, for admins.
func (sp *Support) recentOrders(ctx context.Context, lang locales.Lang, user int64) string {
	list, err := sp.orders.ListByUser(ctx, user, 0, supportOrders)
	if err != nil {
		return locales.T(lang, "support.orders_unknown")
	}
	if len(list) == 0 {
		return locales.T(lang, "support.no_orders")
	}
	var rows []string
	for _, o := range list {
		rows = append(rows, locales.T(lang, "orders.line", "id", o.ID, "item", locales.Escape(locales.Clip(upstreamorder.ItemName(lang, o), 60)),
			"status", locales.T(lang, "order.status."+o.Status), "date", locales.Date(lang, o.CreatedAt)))
	}
	return strings.Join(rows, "\n")
}

// sendPhoto sends a photo by its Telegram file id with an HTML caption.
func (sp *Support) sendPhoto(ctx context.Context, chat int64, fileID, caption string, rows [][]flows.Button) error {
	return sp.tg.SendPhotoID(ctx, chat, fileID, caption, rows)
}

// adminReply is an admin's side: the next text or photo goes to the buyer.
type adminReply struct{ sp *Support }

func (f adminReply) Start(_ context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	return &flows.Reply{Screen: f.sp.replyScreen(env, s), Save: true}, nil
}

func (f adminReply) Show(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	return f.sp.replyScreen(env, s), nil
}

func (sp *Support) replyScreen(env *flows.Env, s *flows.Session) *flows.Screen {
	return &flows.Screen{Text: env.T("support.reply_prompt", "user", userLink(s.Int64(replyKeyTo), s.Get(replyKeyName))),
		Rows: [][]flows.Button{{{Text: env.T("btn.cancel"), Action: actTickets, Global: true}}}}
}

// Cancel drops the reply and shows the open tickets.
func (f adminReply) Cancel(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	r, err := f.sp.tickets(ctx, env, s)
	if r != nil {
		r.Answer = env.T("support.reply_cancelled")
		r.Notices = []flows.Notice{{Text: env.T("support.reply_cancelled")}}
	}
	return r, err
}

func (f adminReply) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if ev.Kind == flows.EvButton {
		return &flows.Reply{Screen: f.sp.replyScreen(env, s), Save: true}, nil
	}
	text := strings.TrimSpace(ev.Text)
	if text == "" && ev.PhotoID == "" {
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("support.text_or_photo")}}, Screen: f.sp.replyScreen(env, s), Save: true}, nil
	}
	to := s.Int64(replyKeyTo)
	if err := f.sp.answer(ctx, chatActor(env), to, text, ev.PhotoID); err != nil {
		if errors.Is(err, flows.ErrBlocked) {
			return &flows.Reply{Notices: []flows.Notice{{Text: env.T("support.buyer_blocked")}}, Screen: f.sp.replyScreen(env, s), Save: true}, nil
		}
		return nil, err
	}
	name := s.Get(replyKeyName)
	r, err := f.sp.tickets(ctx, env, s)
	if err != nil {
		return nil, err
	}
	r.Notices = append([]flows.Notice{{Text: env.T("support.replied", "user", userLink(to, name))}}, r.Notices...)
	return r, nil
}

// outPhoto is the photo of a staff answer: one Telegram has (id), or one
// uploaded from the console (data named name).
type outPhoto struct {
	id   string
	name string
	data []byte
}

// toBuyer sends an admin's reply to the buyer, in the buyer's language, with
// buttons to write back or close the ticket. It returns the file id of the
// photo sent, if any.
func (sp *Support) toBuyer(ctx context.Context, buyer int64, text string, photo outPhoto) (string, error) {
	lang := sp.buyerLang(ctx, buyer)
	if err := sp.store.Touch(ctx, buyer, sp.now()); err != nil {
		sp.log.Warn("support: record a reply on the ticket", "buyer", buyer, "err", err)
	}
	write, _ := flows.EncodeCallback(flows.GlobalNonce, flows.ActSupport, "")
	closeT, _ := flows.EncodeCallback(flows.GlobalNonce, actSupportClose, itoa(buyer))
	rows := [][]flows.Button{{{Text: locales.T(lang, "btn.support_write"), Data: write}, {Text: locales.T(lang, "btn.close_ticket"), Data: closeT}}}
	msg := locales.T(lang, "support.from_staff", "text", locales.Escape(locales.Clip(text, maxSupportText)))
	caption := locales.T(lang, "support.from_staff", "text", locales.Escape(locales.Clip(text, 900)))
	switch {
	case photo.data != nil:
		return sp.tg.SendPhotoFile(ctx, buyer, photo.name, photo.data, caption, rows)
	case photo.id != "":
		return photo.id, sp.sendPhoto(ctx, buyer, photo.id, caption, rows)
	}
	_, err := sp.tg.Send(ctx, buyer, msg, rows)
	return "", err
}

func (sp *Support) buyerLang(ctx context.Context, buyer int64) locales.Lang {
	t, _, _ := sp.store.Get(ctx, buyer)
	if l, ok := locales.Parse(t.Lang); ok {
		return l
	}
	return sp.engine.DefaultLang
}

// close ends a buyer's ticket and tells the other side.
func (sp *Support) close(ctx context.Context, env *flows.Env, s *flows.Session, buyer int64) (*flows.Reply, error) {
	byBuyer := env.User.ID == buyer
	if !byBuyer {
		if _, err := sp.CloseTicket(ctx, chatActor(env), buyer); err != nil {
			return nil, err
		}
		r, err := sp.tickets(ctx, env, s)
		if r != nil {
			r.Answer = env.T("support.closed")
		}
		return r, err
	}
	if _, err := sp.CloseByBuyer(ctx, buyer); err != nil {
		return nil, err
	}
	s.Clear()
	return &flows.Reply{Answer: env.T("support.closed"), Screen: sp.engine.MenuScreen(env), Save: true}, nil
}

// answer sends a staff member's reply to the buyer, keeps it in the
// ticket's thread and audits it: the chat's reply and the console's.
func (sp *Support) answer(ctx context.Context, by state.Actor, buyer int64, text, photo string) error {
	return sp.answerWith(ctx, by, buyer, text, outPhoto{id: photo})
}

func (sp *Support) answerWith(ctx context.Context, by state.Actor, buyer int64, text string, photo outPhoto) error {
	sent, err := sp.toBuyer(ctx, buyer, text, photo)
	if err != nil {
		return err
	}
	withPhoto := photo.id != "" || photo.data != nil
	if err := sp.store.AddMsg(ctx, buyer, work.TicketMsg{At: sp.now(), From: by.ID, Via: by.Via, Text: locales.Clip(text, maxSupportText), Photo: withPhoto, PhotoID: sent}); err != nil {
		sp.log.Warn("support: keep the answer in the thread", "buyer", buyer, "err", err)
	}
	sp.audit(ctx, by, state.AuditTicketReply, buyer, "")
	return nil
}

// Answer sends a staff member's text reply to the buyer's ticket (the
// console's reply; the chat's goes the same way). Errors wrap
// flows.ErrBlocked when the buyer blocked the bot.
func (sp *Support) Answer(ctx context.Context, by state.Actor, buyer int64, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return errors.New("support: empty answer")
	}
	return sp.answer(ctx, by, buyer, text, "")
}

// AnswerPhoto sends a staff member's photo reply, uploaded (data named
// name: a JPEG or PNG the caller checked), with a caption (may be empty),
// to the buyer's ticket (the console's photo reply). The thread keeps the
// photo's file id. Errors wrap flows.ErrBlocked when the buyer blocked the
// bot.
func (sp *Support) AnswerPhoto(ctx context.Context, by state.Actor, buyer int64, caption, name string, data []byte) error {
	if len(data) == 0 {
		return errors.New("support: empty photo")
	}
	return sp.answerWith(ctx, by, buyer, strings.TrimSpace(caption), outPhoto{name: name, data: data})
}

// ThreadPhoto returns the photo of a message of the buyer's thread, named
// by its key (work.TicketMsg.PhotoKey), fetched from Telegram (at most
// limit bytes); work.ErrNoTicket when the thread has no such photo.
func (sp *Support) ThreadPhoto(ctx context.Context, buyer int64, key string, limit int64) ([]byte, error) {
	msgs, err := sp.store.Thread(ctx, buyer)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if key != "" && m.PhotoKey() == key {
			return sp.tg.DownloadFile(ctx, m.PhotoID, limit)
		}
	}
	return nil, work.ErrNoTicket
}

// CloseTicket closes the buyer's ticket for staff and tells the buyer; it
// reports whether the ticket was open (only then is it audited).
func (sp *Support) CloseTicket(ctx context.Context, by state.Actor, buyer int64) (bool, error) {
	was, err := sp.store.Close(ctx, buyer)
	if err != nil || !was {
		return was, err
	}
	if _, err := sp.tg.Send(ctx, buyer, locales.T(sp.buyerLang(ctx, buyer), "support.closed_by_staff"), nil); err != nil {
		sp.log.Warn("support: tell buyer of a closed ticket", "buyer", buyer, "err", err)
	}
	sp.audit(ctx, by, state.AuditTicketClose, buyer, "")
	return true, nil
}

// Inbox lists up to limit open tickets, latest activity first, with their
// unread marks and who answered last.
func (sp *Support) Inbox(ctx context.Context, limit int) ([]work.Ticket, error) {
	return sp.store.OpenTickets(ctx, limit)
}

// Thread reads the buyer's ticket and its messages and marks it read.
func (sp *Support) Thread(ctx context.Context, buyer int64) (work.Ticket, []work.TicketMsg, error) {
	t, ok, err := sp.store.Get(ctx, buyer)
	if err != nil {
		return work.Ticket{}, nil, err
	}
	if !ok {
		return work.Ticket{}, nil, work.ErrNoTicket
	}
	msgs, err := sp.store.Thread(ctx, buyer)
	if err != nil {
		return work.Ticket{}, nil, err
	}
	if err := sp.store.Seen(ctx, buyer, sp.now()); err != nil {
		sp.log.Warn("support: mark a ticket read", "buyer", buyer, "err", err)
	}
	return t, msgs, nil
}

// audit records a staff member's action on a buyer's ticket.
func (sp *Support) audit(ctx context.Context, by state.Actor, action string, buyer int64, detail string) {
	if sp.auditLog == nil {
		return
	}
	e := state.AuditEntry{At: sp.now(), Actor: by, Action: action, Target: state.AuditBuyer(buyer), Detail: detail}
	if err := sp.auditLog.Record(ctx, e); err != nil {
		sp.log.Warn("audit a support action", "buyer", buyer, "action", action, "err", err)
	}
}

// chatActor is the staff member of env acting in the chat.
func chatActor(env *flows.Env) state.Actor {
	return state.Actor{ID: env.User.ID, Role: env.User.RoleName(), Via: state.ViaChat}
}

// roleName names an agent's roles for the audit (a swipe reply carries no
// roles: the agents are those who may answer tickets).
func (sp *Support) roleName(id int64) string {
	if sp.roles != nil {
		return sp.roles(id)
	}
	return ""
}

// tickets lists the open tickets for an admin, newest activity first.
func (sp *Support) tickets(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	list, err := sp.store.OpenTickets(ctx, maxTicketsShown)
	if err != nil {
		return nil, err
	}
	s.Clear()
	text := env.T("support.tickets_title")
	var rows [][]flows.Button
	if len(list) == 0 {
		text += "\n\n" + env.T("support.tickets_none")
	}
	for _, t := range list {
		id := itoa(t.Buyer)
		name := locales.Clip(t.Name, 40)
		text += "\n" + env.T("support.ticket_line", "user", userLink(t.Buyer, name), "id", id, "date", locales.DateTime(env.Lang, t.Last))
		rows = append(rows, []flows.Button{
			{Text: env.T("btn.support_reply_to", "name", locales.Clip(name, 24)), Action: actSupportReply, Arg: id, Global: true},
			{Text: env.T("btn.close_ticket"), Action: actSupportClose, Arg: id, Global: true},
		})
	}
	rows = append(rows, []flows.Button{{Text: env.T("btn.menu"), Action: flows.ActMenu, Global: true}})
	return &flows.Reply{Screen: &flows.Screen{Text: text, Rows: rows}, Save: true}, nil
}

// userLink is an HTML link to a Telegram user by id.
func userLink(id int64, name string) string {
	if strings.TrimSpace(name) == "" {
		name = itoa(id)
	}
	return `<a href="tg://user?id=` + itoa(id) + `">` + locales.Escape(locales.Clip(name, 64)) + `</a>`
}

func usernameOr(lang locales.Lang, u string) string {
	if u == "" {
		return locales.T(lang, "support.no_username")
	}
	return "@" + locales.Escape(u)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
