package flows

import (
	"context"
	"slices"
	"strings"
	"testing"

	"shopbot/locales"
)

func TestRolesTable(t *testing.T) {
	for _, tt := range []struct {
		roles Roles
		can   []Perm
	}{
		{0, nil},
		{RoleOwner, Perms},
		{RoleSupport, []Perm{PermOrdersRead, PermOrdersResend, PermTickets, PermReviews}},
		{RoleAccountant, []Perm{PermOrdersRead, PermBooksRead, PermExport}},
		{RoleSupport | RoleAccountant, []Perm{PermOrdersRead, PermOrdersResend, PermTickets, PermReviews, PermBooksRead, PermExport}},
	} {
		for _, p := range Perms {
			if got, want := tt.roles.Can(p), slices.Contains(tt.can, p); got != want {
				t.Errorf("%s can %s = %v, want %v", tt.roles, p, got, want)
			}
		}
	}
	if s := (RoleSupport | RoleAccountant).String(); s != "support+accountant" {
		t.Errorf("String = %q", s)
	}
	if s := Roles(0).String(); s != "buyer" {
		t.Errorf("String = %q", s)
	}
}

// An id in two lists has both roles; With lists who may do what, owners
// first, each once.
func TestStaffFromTheThreeLists(t *testing.T) {
	s := NewStaff([]int64{1, 2}, []int64{3, 2}, []int64{4, 3})
	for id, want := range map[int64]Roles{1: RoleOwner, 2: RoleOwner | RoleSupport, 3: RoleSupport | RoleAccountant, 4: RoleAccountant, 5: 0} {
		if got := s.Roles(id); got != want {
			t.Errorf("roles of %d = %s, want %s", id, got, want)
		}
	}
	if got := s.IDs(); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("IDs = %v", got)
	}
	if got := s.With(PermTickets); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("With(tickets) = %v", got)
	}
	if got := s.With(PermCredit); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("With(credit) = %v", got)
	}
	if got := (Staff{}).Roles(1); got != 0 {
		t.Errorf("the zero Staff gives roles %s", got)
	}
}

func userWith(r Roles) User { return User{ID: 7, LanguageCode: "en", Roles: r} }

// A staff command is unknown to anyone whose roles do not allow it; with a
// buyers' command of the same name they get the buyers' one instead.
func TestAdminCommandIsUnknownWithoutThePerm(t *testing.T) {
	e := testEngine()
	ran := map[string]int{}
	probe := func(name string) CommandFunc {
		return func(context.Context, *Env, *Session, Event) (*Reply, error) {
			ran[name]++
			return &Reply{Notices: []Notice{{Text: name}}, NoScreen: true}, nil
		}
	}
	e.AdminCommand("credit", PermCredit, "cmd.credit", probe("credit"))
	e.HandleCommand("orders", probe("my orders"))
	e.AdminCommand("orders", PermOrdersRead, "cmd.orders_admin", probe("shop orders"))
	run := func(cmd string, r Roles) string {
		t.Helper()
		var s Session
		rep, err := e.Handle(context.Background(), &s, Event{Kind: EvCommand, Command: cmd, Now: now, User: userWith(r)})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Notices[0].Text
	}
	unknown := locales.T(locales.En, "err.unknown_command")
	for _, r := range []Roles{0, RoleSupport, RoleAccountant} {
		if got := run("credit", r); got != unknown {
			t.Errorf("/credit by %s = %q", r, got)
		}
		if got, want := run("orders", r), map[bool]string{false: "my orders", true: "shop orders"}[r != 0]; got != want {
			t.Errorf("/orders by %s = %q, want %q", r, got, want)
		}
	}
	if ran["credit"] != 0 {
		t.Fatal("/credit ran without its perm")
	}
	if got := run("credit", RoleOwner|RoleSupport); got != "credit" {
		t.Errorf("/credit by an owner = %q", got)
	}
}

// An admin button pressed without its perm is stale, with either nonce; a
// flow's action that needs more than the flow is stale too and the flow
// never sees it; the engine leaves both off the screens it shows.
func TestAdminButtonsAndActionsAreStaleWithoutThePerm(t *testing.T) {
	e := testEngine()
	var pressed, handled []string
	e.AdminButton("bcx", PermBroadcast, "staff.btn.bc_stop", func(_ context.Context, _ *Env, _ *Session, ev Event) (*Reply, error) {
		pressed = append(pressed, string(ev.Button.Action))
		return &Reply{Answer: "stopped", NoScreen: true}, nil
	})
	e.AdminFlow("orders", PermOrdersRead, "cmd.orders_admin", actionFlow{&handled}).
		Action("refund", PermOrdersRefund, "staff.act.refund")
	e.AdminCommand("order", PermOrdersRead, "cmd.order", func(_ context.Context, env *Env, s *Session, _ Event) (*Reply, error) {
		s.Enter("orders", "order", env.Now.Add(e.FlowTTL))
		sc, _ := actionFlow{&handled}.Show(context.Background(), env, s)
		return &Reply{Screen: sc, Save: true}, nil
	})
	for _, tt := range []struct {
		roles              Roles
		refund, stop, seen bool
	}{
		{RoleSupport, false, false, true},
		{RoleAccountant, false, false, true},
		{RoleOwner, true, true, true},
	} {
		pressed, handled = nil, nil
		var s Session
		u := userWith(tt.roles)
		r, err := e.Handle(context.Background(), &s, Event{Kind: EvCommand, Command: "order", Now: now, User: u})
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, row := range r.Screen.Rows {
			for _, b := range row {
				labels = append(labels, b.Text)
			}
		}
		if got := slices.Contains(labels, "Refund"); got != tt.refund {
			t.Errorf("%s: the order shows %v", tt.roles, labels)
		}
		if got := slices.Contains(labels, "Stop"); got != tt.stop {
			t.Errorf("%s: the order shows %v", tt.roles, labels)
		}
		for _, nonce := range []string{s.Nonce, GlobalNonce} {
			ev := Event{Kind: EvButton, Button: Callback{Version: CallbackVersion, Nonce: nonce, Action: "bcx", Arg: "j1"}, Now: now, User: u}
			r, _ := e.Handle(context.Background(), &s, ev)
			if r.Stale == tt.stop {
				t.Errorf("%s: the stop button with nonce %q: %+v", tt.roles, nonce, r)
			}
		}
		ev := Event{Kind: EvButton, Button: Callback{Version: CallbackVersion, Nonce: s.Nonce, Action: "refund"}, Now: now, User: u}
		r, _ = e.Handle(context.Background(), &s, ev)
		if r.Stale == tt.refund || (!tt.refund && r.Answer != locales.T(locales.En, "err.outdated")) {
			t.Errorf("%s: refund pressed: %+v", tt.roles, r)
		}
		if got := slices.Contains(handled, "refund"); got != tt.refund {
			t.Errorf("%s: the flow handled %v", tt.roles, handled)
		}
		if got := len(pressed) > 0; got != tt.stop {
			t.Errorf("%s: the stop button ran %v", tt.roles, pressed)
		}
	}
}

// A chat left in an admin flow by someone whose roles changed (SUPPORT_IDS
// edited) leaves it without seeing anything of it.
func TestAdminFlowLeftWhenTheRoleIsGone(t *testing.T) {
	e := testEngine()
	var shown, handled, started int
	e.AdminFlow("credit", PermCredit, "cmd.credit", adminProbe{&shown, &handled, &started})
	for _, ev := range []Event{
		{Kind: EvText, Text: "10", Now: now, User: userWith(RoleSupport)},
		{Kind: EvButton, Button: Callback{Version: CallbackVersion, Nonce: "n1", Action: "ok"}, Now: now, User: userWith(RoleSupport)},
	} {
		s := Session{Nonce: "n1"}
		s.Enter("credit", "confirm", now.Add(e.FlowTTL))
		r, err := e.Handle(context.Background(), &s, ev)
		if err != nil {
			t.Fatal(err)
		}
		if s.Flow != "" || !r.Save || (r.Screen != nil && strings.Contains(r.Screen.Text, "ADMIN")) {
			t.Errorf("%v: flow %q, reply %+v", ev.Kind, s.Flow, r)
		}
	}
	if shown+handled+started != 0 {
		t.Fatalf("the flow ran: shown %d, handled %d, started %d", shown, handled, started)
	}
}

func TestAdminEntriesByPermThenRegistration(t *testing.T) {
	e := testEngine()
	f := func(context.Context, *Env, *Session, Event) (*Reply, error) { return nil, nil }
	e.AdminCommand("credit", PermCredit, "cmd.credit", f)
	e.AdminCommand("tickets", PermTickets, "cmd.tickets", f)
	e.AdminFlow("orders", PermOrdersRead, "cmd.orders_admin", stubFlow{}).Action("refund", PermOrdersRefund, "staff.act.refund")
	e.AdminButton("tk", PermTickets, "cmd.tickets", f)
	var got []string
	for _, en := range e.AdminEntries() {
		got = append(got, string(en.Kind)+":"+en.Flow+"/"+en.Name+":"+string(en.Perm))
	}
	want := []string{"flow:/orders:orders.read", "action:orders/refund:orders.refund", "command:/tickets:tickets", "button:/tk:tickets", "command:/credit:wallet.credit"}
	if !slices.Equal(got, want) {
		t.Fatalf("entries\n%v\nwant\n%v", got, want)
	}
	for _, bad := range []func(){
		func() { e.AdminCommand("credit", PermCredit, "cmd.credit", f) }, // twice
		func() { e.AdminCommand("help", PermCredit, "cmd.help", f) },     // the engine's own
		func() { e.AdminCommand("x", Perm("nope"), "cmd.x", f) },         // no such perm
		func() { e.AdminButton("y", PermCredit, "", f) },                 // no description
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a bad registration did not panic")
				}
			}()
			bad()
		}()
	}
}

// actionFlow shows an order with a refund button, the stop button of a
// broadcast (a global admin button) and a refresh, and records its presses.
type actionFlow struct{ handled *[]string }

func (f actionFlow) Start(ctx context.Context, env *Env, s *Session, _ string) (*Reply, error) {
	sc, err := f.Show(ctx, env, s)
	return &Reply{Screen: sc}, err
}

func (f actionFlow) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	*f.handled = append(*f.handled, string(ev.Button.Action))
	sc, err := f.Show(ctx, env, s)
	return &Reply{Screen: sc, Save: true}, err
}

func (actionFlow) Show(context.Context, *Env, *Session) (*Screen, error) {
	return &Screen{Text: "order", Rows: [][]Button{
		{{Text: "Refund", Action: "refund"}},
		{{Text: "Stop", Action: "bcx", Arg: "j1", Global: true}},
		{{Text: "Refresh", Action: "refresh"}},
	}}, nil
}
