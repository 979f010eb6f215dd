package flows

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"shopbot/locales"
)

// EventKind says what the buyer did.
type EventKind int

// The kinds of events a flow receives.
const (
	EvCommand EventKind = iota // a /command, with its argument
	EvText                     // plain text
	EvButton                   // an inline button press
	EvPhoto                    // a photo, with its caption in Text
)

// User is who sent the event.
type User struct {
	ID           int64
	LanguageCode string
	Username     string
	FirstName    string
	Roles        Roles // staff roles (none for a buyer); see gate.go
}

// Event is one thing the buyer did, as flows see it.
type Event struct {
	Kind    EventKind
	Command string // without the slash and the @bot suffix, lowercased
	Arg     string // what follows a command (the deep-link payload for /start)
	Text    string
	Button  Callback // for EvButton, already checked against the session
	MsgID   int      // the message the pressed button is on
	PhotoID string   // for EvPhoto, the largest size's file_id
	// Media is a video or a document the message carried. The event is
	// EvText with no Text, so a flow that wants text asks again; the
	// broadcast composer takes it.
	Media *Media
	User  User
	Now   time.Time
}

// Media is a video or a document someone sent: its kind ("video" or
// "document"), the file_id Telegram sends it again by, and its caption.
type Media struct {
	Kind    string
	FileID  string
	Caption string
}

// Button is one inline button. The engine fills Data from Action and Arg.
type Button struct {
	Text   string
	Action Action
	Arg    string
	URL    string
	// Share makes the button open the chat picker to share through the
	// bot's inline mode, with Arg as the query (no callback data).
	Share  bool
	Global bool   // valid whatever the chat's state (see GlobalNonce)
	Data   string // callback_data, set by the engine
}

// Screen is the chat's live menu: one message with an inline keyboard,
// edited in place as the buyer navigates.
type Screen struct {
	Text  string // Telegram HTML
	Rows  [][]Button
	Fresh bool // send a new message instead of editing the live one
	// Image is the catalog's image URL for what the screen shows (a
	// category, a game, a service), or "". The host may show the screen as
	// a photo with Text as its caption, or as text alone: the screen must
	// read the same either way.
	Image string
}

// Notice is a standalone message (not the live menu).
type Notice struct {
	Text string
	Rows [][]Button // only Global buttons belong here
}

// Reply is what the bot must do after an event.
type Reply struct {
	Answer   string // callback answer text; may be empty, but a press is always answered
	Alert    bool
	Notices  []Notice // sent before the screen
	Screen   *Screen
	Save     bool // the session changed and must be saved
	Stale    bool // the pressed button was outdated
	NoScreen bool // deliberately leave the live menu alone

	// Effects the host carries out before it shows the reply.

	// Started says the buyer sent /start: the host records that they
	// started the bot and hands over what waits for them (a delivery that
	// could not reach them) before the menu.
	Started bool
	// Pay hands a confirmed, live quote to checkout: the host starts the
	// payment (an invoice, a wallet debit or the choice between them) and
	// shows checkout's reply, passed through Engine.Then, instead of this
	// one.
	Pay *Quote
}

// PaymentsDisabled is the answer to Reply.Pay of a host without payments:
// it says so and changes nothing.
func PaymentsDisabled(env *Env) *Reply {
	return &Reply{Answer: env.T("pay.disabled"), Alert: true, NoScreen: true}
}

// Env is what a flow may use while handling one event.
type Env struct {
	Lang locales.Lang
	Now  time.Time
	User User
}

// T returns the localized text for key.
func (e *Env) T(key string, kv ...any) string { return locales.T(e.Lang, key, kv...) }

// N returns the localized plural text for key and count n.
func (e *Env) N(key string, n int64, kv ...any) string { return locales.N(e.Lang, key, n, kv...) }

// Flow is one product line's (or checkout's) state machine.
type Flow interface {
	// Start enters the flow; arg is a deep-link item id or "".
	Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error)
	// Handle takes a button press (already checked not stale) or text while the chat is in the flow.
	Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error)
	// Show renders the current step again without changing anything.
	Show(ctx context.Context, env *Env, s *Session) (*Screen, error)
}

// Canceler is a flow with its own /cancel (and Cancel button): what it says
// and where it goes. Without it /cancel says nothing was charged and shows
// the main menu, which is wrong for a conversation or an admin action.
type Canceler interface {
	Cancel(ctx context.Context, env *Env, s *Session) (*Reply, error)
}

// Abandoner is a flow with something to undo when the buyer cancels it:
// the engine calls Abandon before it leaves the flow (a product line voids
// the quote of its summary, so an invoice for it cannot be paid after the
// buyer was told nothing was charged).
type Abandoner interface {
	Abandon(ctx context.Context, env *Env, s *Session) error
}

// CommandFunc handles a command outside any flow (for example /orders).
type CommandFunc func(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error)

// Line is one product line: its name (also its command and deep link) and
// the locale key of its menu label.
type Line struct {
	Name  string
	Label string
}

// Lines are the eight product lines, in menu order.
var Lines = []Line{
	{"topup", "line.topup"}, {"stars", "line.stars"}, {"premium", "line.premium"}, {"services", "line.services"},
	{"gifts", "line.gifts"}, {"giftcards", "line.giftcards"}, {"keys", "line.keys"}, {"games", "line.games"},
}

// deepLinkPrefixes map a one-item deep link (/start gc-<id>) to its line.
var deepLinkPrefixes = map[string]string{"gc": "giftcards", "key": "keys", "game": "gifts", "tu": "games", "svc": "services"}

// Engine routes events: global commands, the main menu, language, and the
// registered flows. It is safe for concurrent use once built.
type Engine struct {
	Langs       []locales.Lang
	DefaultLang locales.Lang
	FlowTTL     time.Duration // a flow untouched this long has expired
	NewNonce    func() string
	// HelpPayment is the locale key of how buyers pay, in /help:
	// "help.pay_stars" (the default) or "help.pay_wallet".
	HelpPayment string
	flows       map[string]Flow
	lasting     map[string]bool // flows that never expire (conversations)
	commands    map[string]CommandFunc
	buttons     map[Action]CommandFunc // global button actions registered by other parts
	gate        gate                   // the admin registry: what staff may do (gate.go)
	inline      InlineFunc             // answers inline queries (share.go); nil: nothing found
}

// NewEngine returns an engine for the enabled languages.
func NewEngine(langs []locales.Lang, def locales.Lang) *Engine {
	if len(langs) == 0 {
		langs = locales.Supported()
	}
	return &Engine{
		Langs: langs, DefaultLang: def, FlowTTL: 30 * time.Minute, NewNonce: randomNonce,
		flows: map[string]Flow{}, gate: newGate(), lasting: map[string]bool{}, commands: map[string]CommandFunc{}, buttons: map[Action]CommandFunc{},
	}
}

// Register adds a product line's flow under its line name.
func (e *Engine) Register(name string, f Flow) { e.flows[name] = f }

// flow returns the flow of that name if env's user may see it.
func (e *Engine) flow(name string, env *Env) Flow {
	if !e.flowAllowed(name, env) {
		return nil
	}
	return e.flows[name]
}

// handle gives the event to the session's flow f; a reply that saves the
// session keeps the flow alive for another FlowTTL.
func (e *Engine) handle(ctx context.Context, f Flow, env *Env, s *Session, ev Event) (*Reply, error) {
	r, err := f.Handle(ctx, env, s, ev)
	if r != nil && r.Save {
		s.Expires = ev.Now.Add(e.FlowTTL)
	}
	return r, err
}

// isLine reports whether name is a product line (what the menu's line
// buttons, line commands and deep links may open).
func isLine(name string) bool {
	for _, l := range Lines {
		if l.Name == name {
			return true
		}
	}
	return false
}

// globalAction reports whether a button with GlobalNonce may carry action:
// only the actions whose buttons are global (the menu, help, and the
// actions registered with HandleButton, which check their own argument).
// Anything else with GlobalNonce is forged or foreign, hence stale.
func (e *Engine) globalAction(action Action) bool {
	if action == ActMenu || action == actHelp {
		return true
	}
	_, ok := e.buttons[action]
	return ok
}

// RegisterLasting adds a flow that does not expire with FlowTTL: a
// conversation (support) that stays open until it is closed.
func (e *Engine) RegisterLasting(name string, f Flow) {
	e.flows[name] = f
	e.lasting[name] = true
}

// HandleCommand registers a buyers' command handled outside the flows.
// Staff commands are registered with AdminCommand.
func (e *Engine) HandleCommand(name string, f CommandFunc) { e.commands[name] = f }

// HandleButton registers a buyers' global button action (its buttons use
// GlobalNonce or the session nonce; both reach f). f must check its
// argument: a buyer can send any callback data. Staff buttons are
// registered with AdminButton.
func (e *Engine) HandleButton(action Action, f CommandFunc) { e.buttons[action] = f }

// The engine's own actions.
const (
	// ActMenu shows the main menu (a global button: it leaves any flow).
	ActMenu     Action = "m"
	actLine     Action = "l"     // arg: the product line to open
	actLang     Action = "lang"  // arg: the language to switch to
	actLangMenu Action = "langs" // the list of languages
	actHelp     Action = "help"  // the /help text (a global button)
	// ActCancel leaves the flow (its Cancel, when it has one) for the
	// main menu.
	ActCancel Action = "x"
)

// Handle runs one event against the session and returns what to do. The
// session is modified in place; Reply.Save says whether to store it.
func (e *Engine) Handle(ctx context.Context, s *Session, ev Event) (*Reply, error) {
	env := e.Env(s, ev)
	// An admin flow whose perm the user's roles do not allow (any more):
	// it ends before anything of it is shown.
	revoked := e.revokeFlow(env, s)
	r, err := e.route(ctx, env, s, ev)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = &Reply{}
	}
	if revoked {
		r.Save = true
	}
	e.strip(env, s, r)
	if r.Stale {
		// Show the current step again with the same nonce: nothing changes.
		return r, e.encode(s, r, false)
	}
	if r.Screen != nil && ev.Kind != EvButton {
		r.Screen.Fresh = true
	}
	return r, e.encode(s, r, r.Screen != nil)
}

// Env is what the host passes to its side of an effect (checkout's Pay)
// for event ev in the chat of s.
func (e *Engine) Env(s *Session, ev Event) *Env {
	return &Env{Now: ev.Now, User: ev.User, Lang: e.LangFor(s, ev.User)}
}

// Then finishes the host's reply to an effect of the reply to ev (checkout's
// answer to Reply.Pay) like a reply of the flow that asked for it: a flow
// whose session changed lives on, a screen not pressed for is sent anew,
// and every button gets its callback data.
func (e *Engine) Then(s *Session, ev Event, r *Reply) (*Reply, error) {
	if r.Save && s.Flow != "" {
		s.Expires = ev.Now.Add(e.FlowTTL)
	}
	if r.Screen != nil && ev.Kind != EvButton {
		r.Screen.Fresh = true
	}
	return r, e.encode(s, r, r.Screen != nil)
}

// LangFor returns the language to use for the session and user.
func (e *Engine) LangFor(s *Session, u User) locales.Lang {
	if l, ok := locales.Parse(s.Lang); ok && e.enabled(l) {
		return l
	}
	return locales.Match(u.LanguageCode, e.Langs, e.DefaultLang)
}

func (e *Engine) enabled(l locales.Lang) bool {
	for _, x := range e.Langs {
		if x == l {
			return true
		}
	}
	return false
}

func (e *Engine) route(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	expired := s.Flow != "" && !e.lasting[s.Flow] && !s.Expires.IsZero() && ev.Now.After(s.Expires)
	switch ev.Kind {
	case EvCommand:
		return e.command(ctx, env, s, ev)
	case EvButton:
		b := ev.Button
		if b.Version != CallbackVersion || (b.Nonce != GlobalNonce && b.Nonce != s.Nonce) ||
			(b.Nonce == GlobalNonce && !e.globalAction(b.Action)) {
			return e.stale(ctx, env, s)
		}
		if expired && b.Nonce != GlobalNonce {
			s.Clear()
			return &Reply{Answer: env.T("err.outdated"), Screen: e.menu(env), Save: true}, nil
		}
		return e.button(ctx, env, s, ev)
	default:
		if expired {
			s.Clear()
			return &Reply{Notices: []Notice{{Text: env.T("err.expired")}}, Screen: e.menu(env), Save: true}, nil
		}
		if f := e.flow(s.Flow, env); f != nil {
			return e.handle(ctx, f, env, s, ev)
		}
		key := "menu.text_hint"
		if ev.Kind != EvText && ev.Kind != EvPhoto || ev.Kind == EvText && strings.TrimSpace(ev.Text) == "" {
			key = "menu.use_buttons" // a sticker, a voice message...
		}
		return &Reply{Notices: []Notice{{Text: env.T(key)}}, Screen: e.menu(env), Save: true}, nil
	}
}

func (e *Engine) stale(ctx context.Context, env *Env, s *Session) (*Reply, error) {
	r := &Reply{Answer: env.T("err.outdated"), Stale: true}
	if f := e.flow(s.Flow, env); f != nil {
		sc, err := f.Show(ctx, env, s)
		if err != nil {
			return nil, err
		}
		r.Screen = sc
		return r, nil
	}
	r.Screen = e.menuFor(env, s)
	return r, nil
}

// menuFor renders what the chat shows outside flows: the language picker
// when that is the open step, else the main menu.
func (e *Engine) menuFor(env *Env, s *Session) *Screen {
	if s.Step == "language" {
		return e.languages(env)
	}
	return e.menu(env)
}

func (e *Engine) command(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	switch ev.Command {
	case "start":
		r, err := e.start(ctx, env, s, ev)
		if r != nil {
			r.Started = true
		}
		return r, err
	case "cancel":
		if f, ok := e.flows[s.Flow].(Canceler); ok {
			return f.Cancel(ctx, env, s)
		}
		if err := e.abandon(ctx, env, s); err != nil {
			return nil, err
		}
		had := s.Flow != ""
		s.Clear()
		msg := env.T("cancel.nothing")
		if had {
			msg = env.T("cancel.done")
		}
		return &Reply{Notices: []Notice{{Text: msg}}, Screen: e.menu(env), Save: true}, nil
	case "help":
		return e.help(env), nil
	case "paysupport":
		if f, ok := e.commands["paysupport"]; ok {
			return f(ctx, env, s, ev)
		}
		return &Reply{Notices: []Notice{{Text: env.T("paysupport.text")}}, NoScreen: true}, nil
	case "language":
		s.Clear()
		s.Step = "language"
		return &Reply{Screen: e.languages(env), Save: true}, nil
	case "menu":
		s.Clear()
		return &Reply{Screen: e.menu(env), Save: true}, nil
	}
	if f, ok := e.adminCommand(ev.Command, env); ok {
		return f(ctx, env, s, ev)
	}
	if f, ok := e.commands[ev.Command]; ok {
		return f(ctx, env, s, ev)
	}
	for _, l := range Lines {
		if l.Name == ev.Command {
			return e.startLine(ctx, env, s, l.Name, ev.Arg)
		}
	}
	return UnknownCommand(env), nil
}

// start is /start, the one path of it: the session starts afresh at the
// main menu or, for a deep link, in its line; the reply says Started so
// that the host does its part.
func (e *Engine) start(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	s.Clear()
	if s.Started.IsZero() {
		s.Started = ev.Now
	}
	if _, link := ParseStart(ev.Arg); link != "" {
		if r, ok, err := e.deepLink(ctx, env, s, link); ok || err != nil {
			return r, err
		}
	}
	return &Reply{Screen: e.menu(env), Save: true}, nil
}

func (e *Engine) deepLink(ctx context.Context, env *Env, s *Session, arg string) (*Reply, bool, error) {
	for _, l := range Lines {
		if arg == l.Name {
			r, err := e.startLine(ctx, env, s, l.Name, "")
			return r, true, err
		}
	}
	if prefix, item, ok := strings.Cut(arg, "-"); ok && item != "" {
		if line, ok := deepLinkPrefixes[prefix]; ok {
			r, err := e.startLine(ctx, env, s, line, item)
			return r, true, err
		}
	}
	return nil, false, nil
}

func (e *Engine) startLine(ctx context.Context, env *Env, s *Session, line, arg string) (*Reply, error) {
	f := e.flow(line, env)
	if f == nil {
		s.Clear()
		return &Reply{Answer: env.T("line.soon"), Notices: []Notice{{Text: env.T("line.soon")}}, Screen: e.menu(env), Save: true}, nil
	}
	s.Enter(line, "", env.Now.Add(e.FlowTTL))
	r, err := f.Start(ctx, env, s, arg)
	if r != nil {
		r.Save = true
	}
	return r, err
}

func (e *Engine) button(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	b := ev.Button
	switch b.Action {
	case ActMenu:
		s.Clear()
		return &Reply{Screen: e.menu(env), Save: true}, nil
	case ActCancel:
		if f, ok := e.flows[s.Flow].(Canceler); ok {
			return f.Cancel(ctx, env, s)
		}
		if err := e.abandon(ctx, env, s); err != nil {
			return nil, err
		}
		s.Clear()
		return &Reply{Answer: env.T("cancel.done"), Screen: e.menu(env), Save: true}, nil
	case actLine:
		if !isLine(b.Arg) {
			// The menu's line buttons open product lines only: any other
			// flow name is a forged button.
			return e.stale(ctx, env, s)
		}
		return e.startLine(ctx, env, s, b.Arg, "")
	case actHelp:
		return e.help(env), nil
	case actLangMenu:
		s.Clear()
		s.Step = "language"
		return &Reply{Screen: e.languages(env), Save: true}, nil
	case actLang:
		l, ok := locales.Parse(b.Arg)
		if !ok || !e.enabled(l) {
			return e.stale(ctx, env, s)
		}
		s.Clear()
		s.Lang = string(l)
		env.Lang = l
		return &Reply{Answer: env.T("lang.set", "language", locales.LanguageName(l)), Screen: e.menu(env), Save: true}, nil
	}
	if f, ok := e.buttons[b.Action]; ok {
		if !e.pressAllowed(env, s.Flow, b.Action, true) {
			return e.stale(ctx, env, s) // an admin button of another role, or forged
		}
		return f(ctx, env, s, ev)
	}
	if f := e.flow(s.Flow, env); f != nil {
		if !e.pressAllowed(env, s.Flow, b.Action, false) {
			return e.stale(ctx, env, s) // a flow action the user's roles do not allow
		}
		return e.handle(ctx, f, env, s, ev)
	}
	return e.stale(ctx, env, s)
}

// ActSupport is the global button action that opens a conversation with
// the shop's staff, when something registered it.
const ActSupport Action = "sup"

// ActOrders is the main menu's "My orders" button, shown when something
// registered the /orders command; that part registers the action too
// (HandleButton).
const ActOrders Action = "orders"

// help is the /help text, with a button to write to support when support
// is on.
func (e *Engine) help(env *Env) *Reply {
	pay := e.HelpPayment
	if pay == "" {
		pay = "help.pay_stars"
	}
	// Commands other parts registered that buyers have (the referral
	// program's /referrals when it is on, /settings) are listed with the
	// rest.
	more := ""
	for _, name := range []string{"referrals", "settings"} {
		if _, ok := e.commands[name]; ok {
			more += "\n/" + name + " — " + env.T("cmd."+name)
		}
	}
	n := Notice{Text: env.T("help.text", "payment", env.T(pay), "more", more)}
	if _, ok := e.buttons[ActSupport]; ok {
		n.Rows = [][]Button{{{Text: env.T("btn.support_write"), Action: ActSupport, Global: true}}}
	}
	return &Reply{Notices: []Notice{n}, NoScreen: true}
}

// abandon lets the chat's flow undo what a cancel must undo.
func (e *Engine) abandon(ctx context.Context, env *Env, s *Session) error {
	if f, ok := e.flows[s.Flow].(Abandoner); ok {
		return f.Abandon(ctx, env, s)
	}
	return nil
}

// MenuScreen renders the main menu (exported for flows that return to it).
func (e *Engine) MenuScreen(env *Env) *Screen { return e.menu(env) }

func (e *Engine) menu(env *Env) *Screen {
	sc := &Screen{Text: env.T("menu.title")}
	var row []Button
	for _, l := range Lines {
		row = append(row, Button{Text: env.T(l.Label), Action: actLine, Arg: l.Name})
		if len(row) == 2 {
			sc.Rows = append(sc.Rows, row)
			row = nil
		}
	}
	last := []Button{}
	if _, ok := e.commands["orders"]; ok {
		last = append(last, Button{Text: env.T("btn.orders"), Action: ActOrders})
	}
	last = append(last, Button{Text: env.T("btn.language"), Action: actLangMenu}, Button{Text: env.T("btn.help"), Action: actHelp})
	sc.Rows = append(sc.Rows, last)
	return sc
}

func (e *Engine) languages(env *Env) *Screen {
	sc := &Screen{Text: env.T("lang.choose")}
	for _, l := range e.Langs {
		sc.Rows = append(sc.Rows, []Button{{Text: locales.LanguageName(l), Action: actLang, Arg: string(l)}})
	}
	sc.Rows = append(sc.Rows, []Button{{Text: env.T("btn.back"), Action: ActMenu}})
	return sc
}

// encode assigns callback data to every button. With fresh true a new nonce
// is drawn first, which makes every older button of this chat stale.
func (e *Engine) encode(s *Session, r *Reply, fresh bool) error {
	if fresh || s.Nonce == "" {
		s.Nonce = e.NewNonce()
		r.Save = true
	}
	fill := func(rows [][]Button, globalOnly bool) error {
		for i := range rows {
			for j := range rows[i] {
				b := &rows[i][j]
				if b.URL != "" || b.Share {
					continue
				}
				nonce := s.Nonce
				if b.Global || globalOnly {
					nonce = GlobalNonce
				}
				d, err := EncodeCallback(nonce, b.Action, b.Arg)
				if err != nil {
					return fmt.Errorf("button %q: %w", b.Text, err)
				}
				b.Data = d
			}
		}
		return nil
	}
	if r.Screen != nil {
		if err := checkLimits("screen", r.Screen.Text, r.Screen.Rows); err != nil {
			return err
		}
		if err := fill(r.Screen.Rows, false); err != nil {
			return err
		}
	}
	for i := range r.Notices {
		if err := checkLimits("notice", r.Notices[i].Text, r.Notices[i].Rows); err != nil {
			return err
		}
		if err := fill(r.Notices[i].Rows, true); err != nil {
			return err
		}
	}
	return nil
}

func randomNonce() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var b [5]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b[:])
}
