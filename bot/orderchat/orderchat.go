package orderchat

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"shopbot/bot/fulfil"
	"shopbot/bot/jobs"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// Config tunes the order chat relay. Zero fields take the defaults.
type Config struct {
	Tick     time.Duration // how often due chat polls are claimed; default 500ms
	Lease    time.Duration // how long a claimed poll is ours; default 1m
	PollFast time.Duration // the poll just after activity (a message either way); default 3s
	PollSlow time.Duration // the slowest poll, reached about four minutes after activity; default 60s
	// IdleAfterFinish ends polling of a finished order's chat that is still
	// open after this long without activity; default 24h.
	IdleAfterFinish time.Duration
	// IdleMax ends polling of any chat after this long without activity;
	// default 7 days. The buyer opening or writing to the chat starts it again.
	IdleMax time.Duration
	// RelayStale is how old a relay claim must be before another poller
	// takes it over (its holder died mid-send); default 2m.
	RelayStale time.Duration
	Parallel   int // chats polled at once; default 4
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Tick, 500*time.Millisecond)
	def(&c.Lease, time.Minute)
	def(&c.PollFast, 3*time.Second)
	def(&c.PollSlow, time.Minute)
	def(&c.IdleAfterFinish, 24*time.Hour)
	def(&c.IdleMax, 7*24*time.Hour)
	def(&c.RelayStale, 2*time.Minute)
	if c.Parallel <= 0 {
		c.Parallel = 4
	}
}

// ChatJob is the chat schedule's job name of order id ("chat:<id>"). Chat
// jobs live in their own schedule (sched.NewNamedSchedule "chat"), so the
// fulfilment worker never claims them and the relay never claims order jobs.
func ChatJob(id int64) string { return "chat:" + strconv.FormatInt(id, 10) }

// Global button actions of the order chat (the buyer opens the chat with
// fulfil.ChatOpenAction, arg: order id).
const (
	actChatClose flows.Action = "occ"   // leaves the chat
	actChatAdmin flows.Action = "achat" // arg: order id; an admin reads the transcript
)

// chatFlow is the buyer's flow while writing in an order's chat.
const chatFlow = "orderchat"

// chatKeyOrder is the order whose chat the buyer writes in (its Ref).
const chatKeyOrder flows.Key = "order"

// Telegram's limits for what the relay sends: photos up to 10 MB, other
// files up to 50 MB, captions up to 1024 characters.
const (
	maxPhotoUpload  = 10 << 20
	maxCaptionChars = 1024
	maxChatText     = 3500 // of one relayed message's text, leaving room for the header
)

// Relay relays the chat of manual-service orders between the buyer and
// the upstream operator. It implements fulfil.Chats.
type Relay struct {
	tg     Telegram
	up     Upstream // nil: no upstream, no chats
	orders *records.Orders
	chats  *work.OrderChats
	sched  *sched.Schedule
	engine *flows.Engine
	log    *slog.Logger
	clock  func() time.Time
	cfg    Config
}

// New returns the relay over d's stores and services.
func New(cfg Config, d Deps) *Relay {
	cfg.defaults()
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Relay{
		tg: d.Telegram, up: d.Upstream, orders: d.Orders, chats: d.Chats,
		sched: d.Schedule, engine: d.Engine, log: d.Log, clock: d.Now, cfg: cfg,
	}
}

func (c *Relay) now() time.Time { return c.clock() }

// lang is the language the buyer ordered in (the admins' one when unknown).
func (c *Relay) lang(o *state.Order) locales.Lang {
	if l, ok := locales.Parse(o.Lang); ok {
		return l
	}
	return c.engine.DefaultLang
}

// Register adds the chat flow, its buttons and the transcript for staff who
// may read orders.
func (c *Relay) Register(e *flows.Engine) {
	e.Register(chatFlow, chatFlowImpl{c})
	e.HandleButton(fulfil.ChatOpenAction, func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		return c.open(ctx, env, s, ev, ev.Button.Arg)
	})
	e.HandleButton(actChatClose, func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		if s.Flow != chatFlow {
			return &flows.Reply{Answer: env.T("oc.closed"), NoScreen: true}, nil
		}
		s.Clear()
		return &flows.Reply{Answer: env.T("oc.closed"), Screen: e.MenuScreen(env), Save: true}, nil
	})
	e.AdminButton(actChatAdmin, flows.PermOrdersRead, "staff.btn.chat", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		return c.transcript(ctx, env, ev.Button.Arg)
	})
}

// TranscriptButton is an admin's button that shows the order's upstream
// chat, valid in any state. It names the order by its Ref, so a number
// Redis handed out again after a loss shows nothing of another purchase.
func (c *Relay) TranscriptButton(text string, o *state.Order) flows.Button {
	return flows.Button{Text: text, Action: actChatAdmin, Arg: o.Ref(), Global: true}
}

// openButton is the "write to the operator" button of the order, valid in
// any state (it goes on notices the workers send).
func openButton(lang locales.Lang, o *state.Order, label string) [][]flows.Button {
	d, _ := flows.EncodeCallback(flows.GlobalNonce, fulfil.ChatOpenAction, o.Ref()) // a ref always fits
	return [][]flows.Button{{{Text: locales.T(lang, label), Data: d}}}
}

// Placed runs when an order gets its upstream number: a manual-service
// order whose chat is required gets the chat and its polling. It reports
// whether the order has a chat.
func (c *Relay) Placed(ctx context.Context, o *state.Order, up *reseller.Order) bool {
	if c.up == nil || o.Line != "services" {
		return false
	}
	enabled, err := c.resolve(ctx, o, up)
	if err != nil {
		// The poll finds out later; until then the order's messages carry
		// no chat button, but its view in My orders does.
		c.log.Warn("order chat: find out whether the order has a chat", "order", o.ID, "err", err)
		c.wake(ctx, o.ID, false)
		return false
	}
	if enabled {
		c.wake(ctx, o.ID, false)
	}
	return enabled
}

// HasChat reports whether a button to the order's chat belongs on its
// messages: a manual-service order with an upstream number whose chat is
// known to exist, or not yet known (opening it finds out).
func (c *Relay) HasChat(ctx context.Context, o *state.Order) bool {
	if o.Line != "services" || o.UpstreamNumber == 0 || c.up == nil {
		return false
	}
	info, err := c.chats.Info(ctx, o.ID, state.ChargeTag(o.ChargeID))
	if err != nil {
		return false
	}
	return !info.Known || info.Enabled
}

// resolve finds out, once, whether the order has an upstream chat: the
// order's chat_required, or when the upstream leaves it out, the service's
// chat flag in the catalog. up may be nil (it is fetched).
func (c *Relay) resolve(ctx context.Context, o *state.Order, up *reseller.Order) (bool, error) {
	info, err := c.chats.Info(ctx, o.ID, state.ChargeTag(o.ChargeID))
	if err != nil {
		return false, err
	}
	if info.Known {
		return info.Enabled, nil
	}
	if up == nil || up.ChatRequired == nil {
		if up, err = c.up.Order(ctx, o.UpstreamNumber); err != nil {
			return false, err
		}
	}
	var enabled bool
	switch {
	case up.ChatRequired != nil:
		enabled = *up.ChatRequired
	case !up.Type.Is(reseller.OrderTypeManualService):
		enabled = false
	default:
		q, err := upstreamorder.QuoteOf(o)
		if err != nil {
			return false, err
		}
		offers, err := c.up.ManualServiceOffers(ctx, q.Category)
		if err != nil {
			return false, err
		}
		enabled = offers.Chat
	}
	return enabled, c.chats.SetEnabled(ctx, o.ID, state.ChargeTag(o.ChargeID), enabled, c.now())
}

// wake records activity (unless quiet) and makes the chat's poll due now.
func (c *Relay) wake(ctx context.Context, id int64, activity bool) {
	if activity {
		if err := c.chats.Touch(ctx, id, c.now()); err != nil {
			c.log.Warn("order chat: record activity", "order", id, "err", err)
		}
	}
	if err := c.sched.Put(ctx, ChatJob(id), c.now()); err != nil {
		c.log.Error("order chat: schedule poll", "order", id, "err", err)
	}
}

// buyerOrder returns the user's order that ref names (state.Order.Ref) with
// the chat checks: a clear notice when there is no chat to open.
func (c *Relay) buyerOrder(ctx context.Context, env *flows.Env, userID int64, ref string) (*state.Order, *flows.Reply, error) {
	id, tag, ok := state.ParseRef(ref)
	notice := func(key string) *flows.Reply {
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T(key, "id", itoa(id))}}, NoScreen: true}
	}
	if !ok {
		return nil, &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
	}
	o, err := c.orders.Get(ctx, id)
	if errors.Is(err, state.ErrOrderNotFound) || (err == nil && (o.UserID != userID || !o.Is(tag))) {
		// Someone else's order looks like none; so does another purchase
		// under a number Redis handed out again.
		return nil, notice("oc.not_found"), nil // someone else's order looks like none
	}
	if err != nil {
		return nil, nil, err
	}
	if o.Line != "services" || c.up == nil {
		return nil, notice("oc.no_chat"), nil
	}
	if o.UpstreamNumber == 0 {
		if o.Status == state.OrderRefunding || o.Status == state.OrderRefunded {
			return nil, notice("oc.no_chat"), nil
		}
		return nil, notice("oc.not_placed"), nil
	}
	enabled, err := c.resolve(ctx, o, nil)
	if err != nil {
		c.log.Warn("order chat: find out whether the order has a chat", "order", id, "err", err)
		return nil, notice("oc.unavailable"), nil
	}
	if !enabled {
		return nil, notice("oc.no_chat"), nil
	}
	return o, nil, nil
}

// open enters the chat of the buyer's order.
func (c *Relay) open(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event, ref string) (*flows.Reply, error) {
	o, r, err := c.buyerOrder(ctx, env, ev.User.ID, ref)
	if o == nil {
		return r, err
	}
	id := o.ID
	ch, err := c.up.Chat(ctx, o.UpstreamNumber)
	if err != nil {
		c.log.Warn("order chat: read upstream chat", "order", id, "upstream", o.UpstreamNumber, "err", err)
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("oc.unavailable", "id", itoa(id))}}, NoScreen: true}, nil
	}
	c.wake(ctx, id, true)
	s.Enter(chatFlow, "write", ev.Now.Add(c.engine.FlowTTL))
	s.Set(chatKeyOrder, o.Ref())
	sc := c.screen(env, o, ch)
	// Pressed on a notice (the processing message, an operator's message),
	// the chat shows below it rather than in an older menu far above.
	sc.Fresh = ev.MsgID == 0 || ev.MsgID != s.MenuMsg
	return &flows.Reply{Screen: sc, Save: true}, nil
}

// screen is the chat's live message: what the buyer can do, and why not
// when the chat takes no messages.
func (c *Relay) screen(env *flows.Env, o *state.Order, ch *reseller.Chat) *flows.Screen {
	text := env.T("oc.open", "id", itoa(o.ID), "item", locales.Escape(upstreamorder.ItemName(env.Lang, o)))
	if ch != nil {
		if why := chatBlockedKey(ch); why != "" {
			text += "\n\n" + env.T(why)
		}
	}
	return &flows.Screen{Text: text, Rows: [][]flows.Button{{{Text: env.T("oc.btn_close"), Action: actChatClose, Global: true}}}}
}

// chatBlockedKey names why a chat takes no messages, or "".
func chatBlockedKey(ch *reseller.Chat) string {
	switch {
	case ch.ChatFrozen:
		return "oc.frozen"
	case ch.ChatReadOnly:
		return "oc.read_only"
	case !ch.ChatOpened:
		return "oc.not_opened"
	}
	return ""
}

// chatFlowImpl is the buyer's conversation while in an order's chat: text
// and photos go to the operator.
type chatFlowImpl struct{ c *Relay }

func (f chatFlowImpl) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &flows.Reply{Screen: sc}, err
}

func (f chatFlowImpl) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	id, _, _ := state.ParseRef(s.Get(chatKeyOrder))
	o, err := f.c.orders.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return f.c.screen(env, o, nil), nil
}

// Cancel leaves the chat: nothing was bought or charged here, and the
// operator's answers still arrive.
func (f chatFlowImpl) Cancel(_ context.Context, env *flows.Env, s *flows.Session) (*flows.Reply, error) {
	s.Clear()
	return &flows.Reply{Answer: env.T("oc.closed"), Notices: []flows.Notice{{Text: env.T("oc.closed")}}, Screen: f.c.engine.MenuScreen(env), Save: true}, nil
}

func (f chatFlowImpl) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	ref := s.Get(chatKeyOrder)
	switch {
	case ev.Kind == flows.EvButton:
		sc, err := f.Show(ctx, env, s)
		return &flows.Reply{Screen: sc}, err
	case ev.Kind == flows.EvText && strings.TrimSpace(ev.Text) == "":
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T("oc.unsupported")}}, NoScreen: true}, nil
	}
	o, r, err := f.c.buyerOrder(ctx, env, ev.User.ID, ref)
	if o == nil {
		s.Clear()
		if r != nil {
			r.Save = true
		}
		return r, err
	}
	msg := &reseller.ChatMessageInput{Body: strings.TrimSpace(ev.Text)}
	if ev.Kind == flows.EvPhoto {
		img, err := f.c.tg.DownloadFile(ctx, ev.PhotoID, reseller.MaxChatImageSize)
		if err != nil {
			f.c.log.Warn("order chat: fetch the buyer's photo", "order", o.ID, "err", err)
			return &flows.Reply{Notices: []flows.Notice{{Text: env.T("oc.not_sent_photo")}}, NoScreen: true}, nil
		}
		msg.Image, msg.ImageName = bytes.NewReader(img), "photo.jpg"
	}
	if key := f.c.send(ctx, o, msg); key != "" {
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T(key)}}, NoScreen: true}, nil
	}
	sc := f.c.screen(env, o, nil)
	sc.Text = env.T("oc.sent")
	return &flows.Reply{Screen: sc, Save: true}, nil
}

// send posts the buyer's message to the upstream chat. It returns "" when
// it was sent, else the locale key telling the buyer why it was not.
func (c *Relay) send(ctx context.Context, o *state.Order, msg *reseller.ChatMessageInput) string {
	sent, err := c.up.SendChatMessage(ctx, o.UpstreamNumber, msg)
	if err == nil {
		if key := messageKey(sent); key != "" && sent.Raw != nil {
			if err := c.chats.MarkOwn(ctx, o.ID, key); err != nil {
				c.log.Warn("order chat: record the buyer's message", "order", o.ID, "err", err)
			}
		}
		c.wake(ctx, o.ID, true)
		return ""
	}
	c.log.Warn("order chat: send the buyer's message", "order", o.ID, "upstream", o.UpstreamNumber, "err", err)
	var ve *reseller.ValidationError
	var apiErr *reseller.Error
	switch {
	case errors.As(err, &ve):
		return "oc.not_sent_invalid"
	case reseller.IsRateLimited(err):
		return "oc.not_sent_later"
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest:
		// Find out why, to explain it.
		if ch, err := c.up.Chat(ctx, o.UpstreamNumber); err == nil {
			switch chatBlockedKey(ch) {
			case "oc.frozen":
				return "oc.not_sent_frozen"
			case "oc.read_only":
				return "oc.not_sent_read_only"
			case "oc.not_opened":
				return "oc.not_sent_not_opened"
			}
		}
		return "oc.not_sent_refused"
	case errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500:
		return "oc.not_sent_refused"
	}
	return "oc.not_sent_later"
}

// messageKey identifies an upstream message for the relay record: its id,
// or a hash of what it says when it has none.
func messageKey(m *reseller.ChatMessage) string {
	if m == nil {
		return ""
	}
	if id := m.ID(); id != "" {
		return "i:" + id
	}
	if len(m.Raw) == 0 {
		return ""
	}
	sum := sha256.Sum256(m.Raw)
	return "h:" + hex.EncodeToString(sum[:12])
}

// fromOperator reports whether the message is the operator's: as the
// message says, else whatever we did not send ourselves.
func fromOperator(m *reseller.ChatMessage, own bool) bool {
	if op, known := m.FromOperator(); known {
		return op
	}
	return !own
}

// Run polls due chats until ctx ends.
func (c *Relay) Run(ctx context.Context) {
	w := &jobs.Worker{
		What: "order chat", Sched: c.sched, Now: c.now, Log: c.log,
		Tick: c.cfg.Tick, Lease: c.cfg.Lease, Timeout: c.cfg.Lease, Parallel: c.cfg.Parallel,
		Kinds: []string{sched.Kind(ChatJob(0))}, Step: c.runJob,
	}
	w.Run(ctx)
}

// runJob polls the chat of a "chat:<id>" job and says when to poll again.
func (c *Relay) runJob(ctx context.Context, j sched.Job) (time.Time, bool) {
	idText, ok := strings.CutPrefix(j.Name, "chat:")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil {
		c.log.Warn("order chat: job of a format this version does not know; left for a newer version", "job", j.Name)
		return jobs.LeaveForNewer(ctx)
	}
	next, err := c.poll(ctx, id)
	if err != nil {
		c.log.Warn("order chat: poll failed; will retry", "order", id, "err", err)
		next = c.now().Add(c.cfg.PollSlow)
	}
	return next, false
}

// delay is the wait before the next poll: PollFast just after activity,
// growing with the quiet time to PollSlow.
func (c *Relay) delay(activity time.Time) time.Duration {
	return min(max(c.now().Sub(activity)/4, c.cfg.PollFast), c.cfg.PollSlow)
}

// poll reads the order's upstream chat once, relays what the operator wrote
// since, and returns when to look again (zero: polling is over).
func (c *Relay) poll(ctx context.Context, id int64) (time.Time, error) {
	o, err := c.orders.Get(ctx, id)
	if errors.Is(err, state.ErrOrderNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	info, err := c.chats.Info(ctx, id, state.ChargeTag(o.ChargeID))
	if err != nil {
		return time.Time{}, err
	}
	if o.UpstreamNumber == 0 {
		return time.Time{}, nil
	}
	if !info.Known {
		enabled, err := c.resolve(ctx, o, nil)
		if err != nil {
			c.log.Warn("order chat: find out whether the order has a chat", "order", id, "err", err)
			return c.now().Add(c.cfg.PollSlow), nil
		}
		info.Enabled = enabled
	}
	if !info.Enabled {
		return time.Time{}, nil
	}
	activity := info.Activity
	if activity.IsZero() {
		activity = o.UpdatedAt
	}
	ch, err := c.up.Chat(ctx, o.UpstreamNumber)
	var rl *reseller.RateLimitError
	switch {
	case errors.As(err, &rl):
		return c.now().Add(max(rl.RetryAfter, c.delay(activity))), nil
	case reseller.IsNotFound(err) || reseller.IsInvalidRequest(err):
		c.log.Warn("order chat: the upstream has no chat for the order; polling ends", "order", id, "upstream", o.UpstreamNumber, "err", err)
		return time.Time{}, c.chats.Stop(ctx, id)
	case err != nil:
		c.log.Warn("order chat: poll upstream chat", "order", id, "upstream", o.UpstreamNumber, "err", err)
		return c.now().Add(max(c.delay(activity), c.cfg.PollFast*2)), nil
	}
	relayed, err := c.relay(ctx, o, ch, info)
	if relayed > 0 {
		activity = c.now()
		if terr := c.chats.Touch(ctx, id, activity); terr != nil {
			c.log.Warn("order chat: record activity", "order", id, "err", terr)
		}
	}
	if err != nil {
		// Not everything reached the buyer; what did is recorded. Try again soon.
		c.log.Warn("order chat: relay to the buyer", "order", id, "err", err)
		return c.now().Add(max(c.delay(activity), c.cfg.PollFast*2)), nil
	}
	idle := c.now().Sub(activity)
	finished := state.Terminal(o.Status)
	if (finished && (!ch.ChatOpened || ch.ChatFrozen || ch.ChatReadOnly)) ||
		(finished && idle >= c.cfg.IdleAfterFinish) || idle >= c.cfg.IdleMax {
		c.log.Info("order chat: polling ends", "order", id, "status", o.Status, "frozen", ch.ChatFrozen,
			"read_only", ch.ChatReadOnly, "opened", ch.ChatOpened, "idle_s", int64(idle.Seconds()))
		return time.Time{}, c.chats.Stop(ctx, id)
	}
	return c.now().Add(c.delay(activity)), nil
}

// relay sends the buyer every operator message not relayed yet, oldest
// first, and returns how many it sent. It stops at the first that does not
// get through, so the buyer reads them in order.
func (c *Relay) relay(ctx context.Context, o *state.Order, ch *reseller.Chat, info *work.ChatInfo) (int, error) {
	msgs := chronological(ch.Messages)
	token := newRelayToken()
	sent := 0
	for i := range msgs {
		m := &msgs[i]
		key := messageKey(m)
		if key == "" {
			continue
		}
		v := info.Messages[key]
		if v == work.ChatRelayed || !fromOperator(m, v == work.ChatOwn) {
			continue
		}
		ok, err := c.chats.ClaimRelay(ctx, o.ID, key, token, c.now(), c.cfg.RelayStale)
		if err != nil {
			return sent, err
		}
		if !ok {
			continue // another poller has it, or it is done
		}
		if err := c.deliverMessage(ctx, o, m); err != nil {
			if rerr := c.chats.ReleaseRelay(ctx, o.ID, key, token); rerr != nil {
				c.log.Warn("order chat: release message", "order", o.ID, "err", rerr)
			}
			return sent, err
		}
		if err := c.chats.MarkRelayed(ctx, o.ID, key); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}

// chronological returns the messages oldest first: by time when every
// message has one (the spec does not say how the list is ordered), else as
// listed.
func chronological(in []reseller.ChatMessage) []reseller.ChatMessage {
	msgs := slices.Clone(in)
	for i := range msgs {
		if _, ok := msgs[i].Time(); !ok {
			return msgs
		}
	}
	slices.SortStableFunc(msgs, func(a, b reseller.ChatMessage) int {
		ta, _ := a.Time()
		tb, _ := b.Time()
		return ta.Compare(tb)
	})
	return msgs
}

func newRelayToken() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ownNumbers rewrites the upstream's order number in an operator's text
// ("order #48213") to the shop's own order id, the one the buyer knows.
func ownNumbers(text string, upstream, id int64) string {
	if upstream <= 0 {
		return text
	}
	re := regexp.MustCompile(`([#№])` + strconv.FormatInt(upstream, 10) + `\b`)
	return re.ReplaceAllString(text, "${1}"+strconv.FormatInt(id, 10))
}

// deliverMessage sends one operator message to the buyer, with its image
// when it has one, and a Reply button.
func (c *Relay) deliverMessage(ctx context.Context, o *state.Order, m *reseller.ChatMessage) error {
	lang := c.lang(o)
	text := ownNumbers(strings.TrimSpace(m.Text()), o.UpstreamNumber, o.ID)
	head := locales.T(lang, "oc.operator", "id", itoa(o.ID))
	body := head
	if text != "" {
		body += "\n" + locales.Escape(locales.Clip(text, maxChatText))
	}
	rows := openButton(lang, o, "oc.btn_reply")
	ref := strings.TrimSpace(m.Image())
	if ref == "" {
		if text == "" {
			return nil // nothing to show: an empty message
		}
		_, err := c.tg.Send(ctx, o.ChatID, body, rows)
		return err
	}
	img, err := c.up.DownloadChatImage(ctx, ref)
	if err != nil {
		var apiErr *reseller.Error
		var ve *reseller.ValidationError
		permanent := errors.As(err, &ve) || (errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500 && apiErr.Status != http.StatusTooManyRequests)
		if !permanent {
			return fmt.Errorf("download the operator's image: %w", err)
		}
		// The image cannot be had: say so rather than hand out the upstream's
		// link (it names the supplier and may need our API key).
		c.log.Warn("order chat: the operator's image cannot be downloaded", "order", o.ID, "err", err)
		_, err := c.tg.Send(ctx, o.ChatID, body+"\n\n"+locales.T(lang, "oc.image_failed"), rows)
		return err
	}
	caption := body
	if locales.UTF16Len(caption) > maxCaptionChars {
		// The text goes first in its own message; the image follows.
		if _, err := c.tg.Send(ctx, o.ChatID, body, nil); err != nil {
			return err
		}
		caption = head
	}
	return c.sendImage(ctx, o.ChatID, img, caption, rows)
}

// sendImage uploads an image as a photo, or as a file when Telegram would
// not take it as one (another format, over 10 MB).
func (c *Relay) sendImage(ctx context.Context, chatID int64, img *reseller.ChatImage, caption string, rows [][]flows.Button) error {
	photo := len(img.Data) <= maxPhotoUpload && (img.ContentType == "image/jpeg" || img.ContentType == "image/png" || img.ContentType == "image/webp")
	return c.tg.SendFile(ctx, chatID, img.Name, img.Data, photo, caption, rows)
}

// transcript shows an admin the upstream chat of an order.
func (c *Relay) transcript(ctx context.Context, env *flows.Env, ref string) (*flows.Reply, error) {
	id, tag, ok := state.ParseRef(ref)
	if !ok {
		return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
	}
	notice := func(key string, kv ...any) *flows.Reply {
		return &flows.Reply{Notices: []flows.Notice{{Text: env.T(key, append([]any{"id", itoa(id)}, kv...)...)}}, NoScreen: true}
	}
	o, err := c.orders.Get(ctx, id)
	if errors.Is(err, state.ErrOrderNotFound) || (err == nil && !o.Is(tag)) {
		return notice("oc.admin_not_found"), nil
	}
	if err != nil {
		return nil, err
	}
	if o.UpstreamNumber == 0 || c.up == nil {
		return notice("oc.admin_no_upstream"), nil
	}
	ch, err := c.up.Chat(ctx, o.UpstreamNumber)
	switch {
	case reseller.IsNotFound(err) || reseller.IsInvalidRequest(err):
		return notice("oc.admin_no_chat", "number", itoa(o.UpstreamNumber)), nil
	case err != nil:
		c.log.Warn("order chat: read upstream chat for an admin", "order", id, "err", err)
		return notice("oc.admin_unavailable", "number", itoa(o.UpstreamNumber)), nil
	}
	info, err := c.chats.Info(ctx, id, tag)
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: c.transcriptText(env, o, ch, info)}}, NoScreen: true}, nil
}

// transcriptText renders the chat, newest messages kept when it is too
// long for one message.
func (c *Relay) transcriptText(env *flows.Env, o *state.Order, ch *reseller.Chat, info *work.ChatInfo) string {
	head := env.T("oc.admin_head", "id", itoa(o.ID), "number", itoa(o.UpstreamNumber), "user", itoa(o.UserID))
	if why := chatBlockedKey(ch); why != "" {
		head += "\n" + env.T(why+"_admin")
	}
	if len(ch.Messages) == 0 {
		return head + "\n\n" + env.T("oc.admin_empty")
	}
	var entries []string
	msgs := chronological(ch.Messages)
	for i := range msgs {
		m := &msgs[i]
		who := env.T("oc.who_buyer")
		if fromOperator(m, info.Messages[messageKey(m)] == work.ChatOwn) {
			who = env.T("oc.who_operator")
		}
		line := "<b>" + who + "</b>"
		if at, ok := m.Time(); ok {
			line += " · " + locales.DateTime(env.Lang, at)
		}
		if t := strings.TrimSpace(m.Text()); t != "" {
			line += "\n" + locales.Escape(locales.Clip(t, 1000))
		}
		if m.Image() != "" {
			line += "\n" + env.T("oc.admin_image")
		}
		entries = append(entries, line)
	}
	// Keep the newest that fit, and say how many earlier ones are left out.
	room := maxMessageChars - locales.UTF16Len(head) - 200
	kept := 0
	used := 0
	for i := len(entries) - 1; i >= 0; i-- {
		n := locales.UTF16Len(entries[i]) + 2
		if used+n > room {
			break
		}
		used += n
		kept++
	}
	text := head
	if left := len(entries) - kept; left > 0 {
		text += "\n\n" + env.N("oc.admin_earlier", int64(left))
	}
	for _, e := range entries[len(entries)-kept:] {
		text += "\n\n" + e
	}
	return text
}
