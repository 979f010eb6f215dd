package flows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"shopbot/locales"
)

func testEngine() *Engine {
	e := NewEngine(nil, locales.En)
	n := 0
	e.NewNonce = func() string { n++; return "n" + string(rune('a'+n)) }
	return e
}

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func press(s *Session, action Action, arg string) Event {
	return Event{Kind: EvButton, Button: Callback{Version: CallbackVersion, Nonce: s.Nonce, Action: action, Arg: arg}, Now: now, User: User{ID: 1, LanguageCode: "en"}}
}

func command(cmd, arg string) Event {
	return Event{Kind: EvCommand, Command: cmd, Arg: arg, Now: now, User: User{ID: 1, LanguageCode: "ru"}}
}

func TestStartShowsMainMenuWithEveryLine(t *testing.T) {
	e := testEngine()
	s := Session{}
	r, err := e.Handle(context.Background(), &s, command("start", ""))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Save || r.Screen == nil || !r.Screen.Fresh {
		t.Fatalf("reply = %+v", r)
	}
	var lines int
	for _, row := range r.Screen.Rows {
		for _, b := range row {
			if b.Data == "" || !strings.HasPrefix(b.Data, "1:"+s.Nonce+":") {
				t.Errorf("button %q has data %q", b.Text, b.Data)
			}
			if strings.Contains(b.Data, ":l:") {
				lines++
			}
		}
	}
	if lines != len(Lines) {
		t.Errorf("menu has %d line buttons, want %d", lines, len(Lines))
	}
	if s.Lang != "" || !strings.Contains(r.Screen.Text, locales.T(locales.Ru, "menu.title")[:10]) {
		t.Errorf("the default language must come from language_code ru: %q", r.Screen.Text)
	}
}

func TestDoubleTapMakesOneTransition(t *testing.T) {
	e := testEngine()
	s := Session{}
	_, _ = e.Handle(context.Background(), &s, command("start", ""))
	tap := press(&s, "langs", "")
	r1, _ := e.Handle(context.Background(), &s, tap)
	if r1.Stale || s.Step != "language" {
		t.Fatalf("first tap: %+v step=%q", r1, s.Step)
	}
	before := s
	r2, _ := e.Handle(context.Background(), &s, tap)
	if !r2.Stale || r2.Save || r2.Answer == "" {
		t.Fatalf("second tap must be stale and change nothing: %+v", r2)
	}
	if s.Nonce != before.Nonce || s.Step != before.Step {
		t.Fatalf("stale tap changed the session: %+v -> %+v", before, s)
	}
	if r2.Screen == nil || !strings.Contains(r2.Screen.Text, locales.T(locales.En, "lang.choose")) {
		t.Fatalf("stale tap must show the current step again: %+v", r2.Screen)
	}
}

func TestStaleButtonUnknownVersionOrExpiredFlow(t *testing.T) {
	e := testEngine()
	s := Session{}
	_, _ = e.Handle(context.Background(), &s, command("start", ""))
	ev := press(&s, "langs", "")
	ev.Button.Version = "0"
	if r, _ := e.Handle(context.Background(), &s, ev); !r.Stale || r.Save {
		t.Fatalf("unknown version: %+v", r)
	}
	ev = press(&s, "langs", "")
	ev.Button.Nonce = "old"
	if r, _ := e.Handle(context.Background(), &s, ev); !r.Stale || r.Save {
		t.Fatalf("old nonce: %+v", r)
	}
	// An expired flow: the press is refused politely and the chat returns to the menu.
	e.Register("stars", stubFlow{})
	_, _ = e.Handle(context.Background(), &s, command("stars", ""))
	late := press(&s, "next", "")
	late.Now = now.Add(e.FlowTTL + time.Minute)
	r, _ := e.Handle(context.Background(), &s, late)
	if r.Answer != locales.T(locales.En, "err.outdated") || s.Flow != "" || r.Screen == nil {
		t.Fatalf("expired flow: %+v flow=%q", r, s.Flow)
	}
}

func TestCancelAndDeepLinks(t *testing.T) {
	e := testEngine()
	e.Register("giftcards", stubFlow{})
	s := Session{}
	r, _ := e.Handle(context.Background(), &s, command("start", "gc-apple-us"))
	if s.Flow != "giftcards" || s.Get("arg") != "apple-us" {
		t.Fatalf("deep link: flow=%q data=%v reply=%+v", s.Flow, s.Data, r)
	}
	r, _ = e.Handle(context.Background(), &s, command("cancel", ""))
	if s.Flow != "" || len(r.Notices) != 1 || r.Notices[0].Text != locales.T(locales.Ru, "cancel.done") {
		t.Fatalf("cancel: %+v", r)
	}
	_, _ = e.Handle(context.Background(), &s, command("start", "giftcards"))
	if s.Flow != "giftcards" || s.Get("arg") != "" {
		t.Fatalf("line deep link: %+v", s)
	}
	// A line without a flow yet says so and stays at the menu.
	r, _ = e.Handle(context.Background(), &s, command("premium", ""))
	if s.Flow != "" || r.Screen == nil {
		t.Fatalf("line without a flow: %+v", r)
	}
}

func TestLanguageChoice(t *testing.T) {
	e := testEngine()
	s := Session{}
	_, _ = e.Handle(context.Background(), &s, command("language", ""))
	r, _ := e.Handle(context.Background(), &s, press(&s, "lang", "uk"))
	if s.Lang != "uk" || !strings.Contains(r.Screen.Text, locales.T(locales.Uk, "menu.title")[:12]) {
		t.Fatalf("language not set: %q %+v", s.Lang, r.Screen)
	}
	// A disabled language is refused as stale.
	e2 := NewEngine([]locales.Lang{locales.En}, locales.En)
	s2 := Session{}
	_, _ = e2.Handle(context.Background(), &s2, command("language", ""))
	if r, _ := e2.Handle(context.Background(), &s2, press(&s2, "lang", "ru")); !r.Stale || s2.Lang != "" {
		t.Fatalf("disabled language accepted: %+v", s2)
	}
}

func TestCallbackDataRefusedOver64Bytes(t *testing.T) {
	if _, err := EncodeCallback("abcde", "x", strings.Repeat("y", 60)); !errors.Is(err, ErrCallbackTooLong) {
		t.Fatalf("err = %v", err)
	}
	d, err := EncodeCallback("abcde", "page", "gift:2")
	if err != nil || d != "1:abcde:page:gift:2" {
		t.Fatalf("%q %v", d, err)
	}
	c, ok := DecodeCallback(d)
	if !ok || c.Nonce != "abcde" || c.Action != "page" || c.Arg != "gift:2" {
		t.Fatalf("decode = %+v %v", c, ok)
	}
	for _, bad := range []string{"", "1", "1:n", "1:n:", "garbage"} {
		if _, ok := DecodeCallback(bad); ok {
			t.Errorf("DecodeCallback(%q) accepted", bad)
		}
	}
	// A flow building a too-long button is an error, not a truncated button.
	e := testEngine()
	e.Register("keys", longButtonFlow{})
	s := Session{}
	if _, err := e.Handle(context.Background(), &s, command("keys", "")); !errors.Is(err, ErrCallbackTooLong) {
		t.Fatalf("err = %v", err)
	}
}

func TestOldSchemaMigratesAndUnknownResets(t *testing.T) {
	s, res := DecodeSession([]byte(`{"v":1,"lang":"uk","flow":"giftcards","step":"cards","msg":42,"vars":{"cat":"apple-us"}}`))
	if res != Migrated || s.V != SessionVersion || s.Lang != "uk" || s.MenuMsg != 42 || s.Get("cat") != "apple-us" || s.Step != "cards" {
		t.Fatalf("migration: %v %+v", res, s)
	}
	s, res = DecodeSession([]byte(`{"v":99,"lang":"ru","flow":"x"}`))
	if res != Reset || s.Flow != "" || s.Lang != "ru" {
		t.Fatalf("unknown version: %v %+v", res, s)
	}
	if _, res = DecodeSession([]byte(`not json`)); res != Reset {
		t.Fatalf("corrupt: %v", res)
	}
	if _, res = DecodeSession(nil); res != Loaded {
		t.Fatalf("empty: %v", res)
	}
	s.Set("a", "b")
	round, res := DecodeSession(s.Encode())
	if res != Loaded || round.Get("a") != "b" {
		t.Fatalf("round trip: %v %+v", res, round)
	}
}

type stubFlow struct{}

func (stubFlow) Start(_ context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	s.Step = "list"
	s.Set("arg", arg)
	return &Reply{Screen: &Screen{Text: "list", Rows: [][]Button{{{Text: "next", Action: "next"}}}}}, nil
}
func (stubFlow) Handle(_ context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	s.Goto("next")
	return &Reply{Screen: &Screen{Text: "next"}, Save: true}, nil
}
func (stubFlow) Show(_ context.Context, env *Env, s *Session) (*Screen, error) {
	return &Screen{Text: s.Step}, nil
}

type longButtonFlow struct{ stubFlow }

func (longButtonFlow) Start(_ context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	return &Reply{Screen: &Screen{Text: "x", Rows: [][]Button{{{Text: "long", Action: "item", Arg: strings.Repeat("z", 80)}}}}}, nil
}

// adminProbe is a flow that records whether it was shown or handled.
type adminProbe struct{ shown, handled, started *int }

func (p adminProbe) Start(_ context.Context, _ *Env, s *Session, _ string) (*Reply, error) {
	*p.started++
	return &Reply{Screen: &Screen{Text: "ADMIN SCREEN"}}, nil
}

func (p adminProbe) Handle(_ context.Context, _ *Env, _ *Session, _ Event) (*Reply, error) {
	*p.handled++
	return &Reply{Screen: &Screen{Text: "ADMIN SCREEN"}, Save: true}, nil
}

func (p adminProbe) Show(_ context.Context, _ *Env, _ *Session) (*Screen, error) {
	*p.shown++
	return &Screen{Text: "ADMIN SCREEN"}, nil
}

// GlobalNonce is valid only with global actions; the line action opens
// product lines only, whatever the nonce; admin flows are never started,
// shown or handled for someone who is not an admin.
func TestForgedCallbacksAreStale(t *testing.T) {
	e := testEngine()
	var shown, handled, started int
	e.AdminFlow("secret", PermBroadcast, "cmd.broadcast", adminProbe{&shown, &handled, &started})
	e.Register("plainflow", adminProbe{&shown, &handled, &started})
	s := Session{}
	_, _ = e.Handle(context.Background(), &s, command("start", ""))
	forged := func(nonce string, action Action, arg string) *Reply {
		t.Helper()
		ev := press(&s, action, arg)
		ev.Button.Nonce = nonce
		r, err := e.Handle(context.Background(), &s, ev)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		nonce  string
		action Action
		arg    string
	}{
		{GlobalNonce, actLine, "secret"}, {s.Nonce, actLine, "secret"}, {s.Nonce, actLine, "plainflow"},
		{GlobalNonce, actLine, "giftcards"}, {GlobalNonce, actLang, "en"}, {GlobalNonce, actLangMenu, ""},
		{GlobalNonce, ActCancel, ""}, {GlobalNonce, "some_flow_step", "1"},
	} {
		if r := forged(c.nonce, c.action, c.arg); !r.Stale || r.Answer != locales.T(locales.En, "err.outdated") {
			t.Errorf("%s:%s:%s: %+v, want stale", c.nonce, c.action, c.arg, r)
		}
	}
	if r := forged(GlobalNonce, ActMenu, ""); r.Stale {
		t.Errorf("the global menu button is stale")
	}
	// A session already in the admin flow (an admin removed since) is not shown.
	s.Enter("secret", "x", now.Add(time.Hour))
	if r := forged("stale-nonce", actHelp, ""); r.Screen == nil || strings.Contains(r.Screen.Text, "ADMIN") || s.Flow != "" || !r.Save {
		t.Errorf("a non-admin was shown the admin flow: %+v, flow %q", r.Screen, s.Flow)
	}
	s.Enter("secret", "x", now.Add(time.Hour))
	if r, _ := e.Handle(context.Background(), &s, Event{Kind: EvText, Text: "hi", Now: now, User: User{ID: 1}}); r.Screen != nil && strings.Contains(r.Screen.Text, "ADMIN") {
		t.Errorf("text reached the admin flow of a non-admin")
	}
	if shown+handled+started != 0 {
		t.Fatalf("the admin flow ran for a non-admin: shown %d, handled %d, started %d", shown, handled, started)
	}
	// An admin in it is shown it.
	s.Enter("secret", "x", now.Add(time.Hour))
	ev := press(&s, "anything", "")
	ev.User.Roles = RoleOwner
	if _, err := e.Handle(context.Background(), &s, ev); err != nil || handled != 1 {
		t.Fatalf("the admin's press: handled %d, %v", handled, err)
	}
}

// bigReplyFlow builds a screen of text characters and buttons as asked.
type bigReplyFlow struct {
	stubFlow
	text    int
	buttons int
}

func (f bigReplyFlow) Start(context.Context, *Env, *Session, string) (*Reply, error) {
	sc := &Screen{Text: "<b>" + strings.Repeat("я", f.text) + "</b> &amp;"}
	for range f.buttons {
		sc.Rows = append(sc.Rows, []Button{{Text: "b", Action: "i"}})
	}
	return &Reply{Screen: sc}, nil
}

func TestReplyOverTelegramLimitsIsAnError(t *testing.T) {
	for _, tt := range []struct {
		name          string
		text, buttons int
		ok            bool
	}{
		{"text at the limit (tags and entities not counted)", MaxTextLen - 2, 1, true},
		{"text over the limit", MaxTextLen, 1, false},
		{"100 buttons", 10, MaxButtons, true},
		{"101 buttons", 10, MaxButtons + 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := testEngine()
			e.Register("keys", bigReplyFlow{text: tt.text, buttons: tt.buttons})
			_, err := e.Handle(context.Background(), &Session{}, command("keys", ""))
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrTooBig)) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestTextAtTheMainMenuGetsAHint(t *testing.T) {
	e := testEngine()
	s := Session{}
	for _, tt := range []struct {
		ev   Event
		want string
	}{
		{Event{Kind: EvText, Text: "my payment did not arrive", Now: now, User: User{ID: 1, LanguageCode: "en"}}, "menu.text_hint"},
		{Event{Kind: EvText, Now: now, User: User{ID: 1, LanguageCode: "en"}}, "menu.use_buttons"}, // a sticker
	} {
		r, err := e.Handle(context.Background(), &s, tt.ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Notices) != 1 || r.Notices[0].Text != locales.T(locales.En, tt.want) || r.Screen == nil {
			t.Fatalf("reply to %+v = %+v", tt.ev, r)
		}
		if strings.Contains(r.Notices[0].Text, locales.T(locales.En, "err.text_expected")) {
			t.Fatal("the old 'send your answer as text' reply")
		}
	}
}

// cancelingFlow has its own /cancel.
type cancelingFlow struct{ stubFlow }

func (cancelingFlow) Cancel(_ context.Context, _ *Env, s *Session) (*Reply, error) {
	s.Clear()
	return &Reply{Notices: []Notice{{Text: "left the chat"}}, NoScreen: true, Save: true}, nil
}

func TestCancelInAFlowWithItsOwnCancel(t *testing.T) {
	e := testEngine()
	e.Register("keys", cancelingFlow{})
	s := Session{}
	if _, err := e.Handle(context.Background(), &s, command("keys", "")); err != nil {
		t.Fatal(err)
	}
	r, err := e.Handle(context.Background(), &s, command("cancel", ""))
	if err != nil || len(r.Notices) != 1 || r.Notices[0].Text != "left the chat" || s.Flow != "" {
		t.Fatalf("/cancel = %+v, %v (flow %q)", r, err, s.Flow)
	}
}

func TestHelpSaysHowBuyersPay(t *testing.T) {
	e := testEngine()
	s := Session{}
	for _, tt := range []struct{ key, want string }{{"", "help.pay_stars"}, {"help.pay_wallet", "help.pay_wallet"}} {
		e.HelpPayment = tt.key
		r, err := e.Handle(context.Background(), &s, Event{Kind: EvCommand, Command: "help", Now: now, User: User{ID: 1, LanguageCode: "en"}})
		if err != nil || len(r.Notices) != 1 || !strings.Contains(r.Notices[0].Text, locales.T(locales.En, tt.want)) {
			t.Fatalf("/help with %q = %+v, %v", tt.key, r, err)
		}
	}
}

// /start has one path: the engine's, whose reply asks the host to record
// the start (and hand over waiting deliveries), with or without a deep link.
func TestStartIsOneEffect(t *testing.T) {
	e := testEngine()
	e.Register("giftcards", stubFlow{})
	for _, arg := range []string{"", "gc-apple-us", "nonsense"} {
		s := Session{}
		r, err := e.Handle(context.Background(), &s, command("start", arg))
		if err != nil || !r.Started || s.Started.IsZero() {
			t.Fatalf("/start %s: %+v (err %v), session %+v", arg, r, err, s)
		}
		if r2, _ := e.Handle(context.Background(), &s, command("help", "")); r2.Started {
			t.Fatalf("/help asked to record a start")
		}
	}
}

// /help lists /referrals when the referral program registered it, and not
// otherwise.
func TestHelpListsReferralsWhenOn(t *testing.T) {
	e := testEngine()
	var s Session
	r, _ := e.Handle(context.Background(), &s, command("help", ""))
	if strings.Contains(r.Notices[0].Text, "/referrals") {
		t.Fatalf("/referrals listed with the program off:\n%s", r.Notices[0].Text)
	}
	e.HandleCommand("referrals", func(context.Context, *Env, *Session, Event) (*Reply, error) { return &Reply{}, nil })
	r, _ = e.Handle(context.Background(), &s, command("help", ""))
	if !strings.Contains(r.Notices[0].Text, "/terms — условия магазина\n/referrals — Пригласить друзей и получать вознаграждения\n") {
		t.Fatalf("/referrals not listed:\n%s", r.Notices[0].Text)
	}
}
