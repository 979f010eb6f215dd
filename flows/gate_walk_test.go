package flows_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/bottest"
	"shopbot/bot/checkout"
	"shopbot/bot/referral"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
)

// fullShop is the engine of the whole shop as cmd/shopbot assembles it:
// the product lines (their ports are not used here) and every feature on
// (payments by Stars and wallet, referrals), as storefront builds them.
func fullShop(t *testing.T) *flows.Engine {
	t.Helper()
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) {
		o.Checkout = &checkout.Options{Stars: true, Wallet: true}
		o.Referral = referral.Options{Percent: decimal.NewFromInt(5)}
	})
	lines.Register(b.Engine, &shop.Shop{})
	return b.Engine
}

// What buyers may use, registered without the gate (HandleCommand,
// HandleButton, Register): anything else must be registered with the perm
// it needs. A new buyer command, button or flow goes here; a staff one goes
// through Engine.AdminCommand, AdminButton or AdminFlow.
var (
	buyerCommands = []string{"orders", "paysupport", "referrals", "settings", "support", "terms", "wallet"}
	buyerButtons  = []string{"oc", "occ", "ord", "orders", "ordp", "pst", "pwl", "pz", "rmoff", "rv", "stg", "sup", "sx", "wtu"}
	buyerFlows    = []string{"games", "giftcards", "gifts", "keys", "orderchat", "premium", "review", "services", "stars", "support", "topup", "wtopup"}
)

// users are who the walk tries every entry with: a buyer, each role, and
// two roles at once.
var users = []flows.Roles{0, flows.RoleOwner, flows.RoleSupport, flows.RoleAccountant, flows.RoleSupport | flows.RoleAccountant}

var walkNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// TestEveryAdminEntryIsGated walks every entry of the assembled shop's
// admin registry: a buyer, and each role whose perms do not allow the
// entry, are refused (a command gets exactly what a buyer gets, a button
// is stale, a flow is left) and its handler does not run; a role that may
// reaches the handler. Every entry's description is in every language, and
// everything registered outside the gate is a known buyer's.
func TestEveryAdminEntryIsGated(t *testing.T) {
	e := fullShop(t)
	for _, got := range []struct {
		what       string
		have, want []string
	}{
		{"commands", flows.BuyerCommands(e), buyerCommands},
		{"buttons", flows.BuyerButtons(e), buyerButtons},
		{"flows", flows.BuyerFlows(e), buyerFlows},
	} {
		for _, name := range got.have {
			if !slices.Contains(got.want, name) {
				t.Errorf("%s %q is registered for buyers: register a staff one with its perm (flows.Engine.AdminCommand, AdminButton, AdminFlow), or list a buyers' one in buyer%s", got.what, name, got.what)
			}
		}
	}
	entries := e.AdminEntries()
	kinds := map[flows.AdminKind]int{}
	for _, en := range entries {
		kinds[en.Kind]++
		for _, lang := range locales.Supported() {
			if !slices.Contains(locales.Keys(lang), en.Desc) {
				t.Errorf("%s %q: its description %q is not in %s", en.Kind, en.Name, en.Desc, lang)
			}
		}
	}
	if kinds[flows.KindCommand] < 11 || kinds[flows.KindButton] < 4 || kinds[flows.KindFlow] < 5 || kinds[flows.KindAction] < 9 {
		t.Fatalf("the registry is short: %v", kinds)
	}

	// What a buyer gets for each command, with the real handlers (the
	// buyers' /orders, or the unknown command).
	unknown := locales.T(locales.En, "err.unknown_command")
	buyerGets := map[string]string{}
	for _, en := range entries {
		if en.Kind == flows.KindCommand {
			r := handle(t, e, &flows.Session{}, command(en.Name, 0))
			buyerGets[en.Name] = text(r)
		}
	}

	var ran []probed
	flows.ProbeAdmin(e, func(en flows.AdminEntry, how string) { ran = append(ran, probed{en, how}) })
	flowPerm := map[string]flows.Perm{}
	for _, en := range entries {
		if en.Kind == flows.KindFlow {
			flowPerm[en.Name] = en.Perm
		}
	}
	for _, en := range entries {
		for _, roles := range users {
			may := roles.Can(en.Perm)
			if en.Kind == flows.KindAction {
				may = may && roles.Can(flowPerm[en.Flow])
			}
			ran = nil
			s := &flows.Session{Nonce: "n1"}
			var r *flows.Reply
			switch en.Kind {
			case flows.KindCommand:
				r = handle(t, e, s, command(en.Name, roles))
				if !may && text(r) != buyerGets[en.Name] {
					t.Errorf("/%s by %s = %q, want what a buyer gets: %q", en.Name, roles, text(r), buyerGets[en.Name])
				}
				if !may && !slices.Contains(buyerCommands, en.Name) && text(r) != unknown {
					t.Errorf("/%s by %s = %q, want the unknown command", en.Name, roles, text(r))
				}
			case flows.KindButton:
				for _, nonce := range []string{flows.GlobalNonce, s.Nonce} {
					ran = nil
					r = handle(t, e, s, press(nonce, flows.Action(en.Name), roles))
					checkPress(t, en, roles, may, r, ran, nonce)
				}
				continue
			case flows.KindFlow:
				s.Enter(en.Name, "any", walkNow.Add(time.Hour))
				r = handle(t, e, s, flows.Event{Kind: flows.EvText, Text: "1", Now: walkNow, User: user(roles)})
				if !may && (s.Flow != "" || !r.Save) {
					t.Errorf("flow %q by %s: still in %q, reply %+v", en.Name, roles, s.Flow, r)
				}
			case flows.KindEndpoint:
				// The console's endpoints are walked over HTTP by
				// bot/console's TestConsoleEveryEndpointIsGated; here the
				// gate's answer for them.
				if e.ConsoleAllows(en.Name, user(roles)) != may {
					t.Errorf("console %q by %s: allowed %v", en.Name, roles, !may)
				}
				continue
			case flows.KindAction:
				s.Enter(en.Flow, "any", walkNow.Add(time.Hour))
				r = handle(t, e, s, press(s.Nonce, flows.Action(en.Name), roles))
				checkPress(t, en, roles, may, r, ran, s.Nonce)
				continue
			}
			checkRan(t, en, roles, may, ran)
		}
	}
}

// probed is a handler of the admin side that ran, and how.
type probed struct {
	en  flows.AdminEntry
	how string
}

// checkPress checks a press of en's button by roles with nonce.
func checkPress(t *testing.T, en flows.AdminEntry, roles flows.Roles, may bool, r *flows.Reply, ran []probed, nonce string) {
	t.Helper()
	if !may && (!r.Stale || r.Answer != locales.T(locales.En, "err.outdated")) {
		t.Errorf("%s %q pressed by %s (nonce %q): %+v, want stale", en.Kind, en.Name, roles, nonce, r)
	}
	checkRan(t, en, roles, may, ran)
}

// checkRan checks that en's handler ran when roles may use it, and did not
// otherwise: nothing of the admin side ran, but the flow of a refused
// action, which the stale press shows again (its Show) to whoever may be
// in it.
func checkRan(t *testing.T, en flows.AdminEntry, roles flows.Roles, may bool, ran []probed) {
	t.Helper()
	reached := slices.ContainsFunc(ran, func(p probed) bool { return p.en == en && p.how != "show" })
	others := slices.ContainsFunc(ran, func(p probed) bool {
		return !(en.Kind == flows.KindAction && p.en.Kind == flows.KindFlow && p.en.Name == en.Flow && p.how == "show") && p.en != en
	})
	switch {
	case may && !reached:
		t.Errorf("%s %q by %s: ran %+v, want its handler", en.Kind, en.Name, roles, ran)
	case !may && (reached || others):
		t.Errorf("%s %q by %s, whose roles do not allow %s: ran %+v", en.Kind, en.Name, roles, en.Perm, ran)
	}
}

func user(roles flows.Roles) flows.User {
	return flows.User{ID: 4242, LanguageCode: "en", Roles: roles}
}

func command(name string, roles flows.Roles) flows.Event {
	return flows.Event{Kind: flows.EvCommand, Command: name, Now: walkNow, User: user(roles)}
}

func press(nonce string, action flows.Action, roles flows.Roles) flows.Event {
	cb := flows.Callback{Version: flows.CallbackVersion, Nonce: nonce, Action: action, Arg: "1"}
	return flows.Event{Kind: flows.EvButton, Button: cb, Now: walkNow, User: user(roles)}
}

func handle(t *testing.T, e *flows.Engine, s *flows.Session, ev flows.Event) *flows.Reply {
	t.Helper()
	r, err := e.Handle(context.Background(), s, ev)
	if err != nil {
		t.Fatalf("%+v: %v", ev, err)
	}
	return r
}

// text is what a reply says: its first notice, else its screen.
func text(r *flows.Reply) string {
	switch {
	case len(r.Notices) > 0:
		return r.Notices[0].Text
	case r.Screen != nil:
		return r.Screen.Text
	}
	return r.Answer
}

// staffTable renders who may do what, from the registry of e: a row per
// perm with what it allows (its commands, buttons and flow actions; a flow
// is opened by a command of its perm) and a column per role.
func staffTable(e *flows.Engine) string {
	var b strings.Builder
	b.WriteString("| perm | what it allows |")
	for _, r := range flows.RoleList {
		b.WriteString(" " + r.String() + " |")
	}
	b.WriteString("\n|---|---|")
	for range flows.RoleList {
		b.WriteString(":-:|")
	}
	b.WriteString("\n")
	entries := e.AdminEntries()
	for _, p := range flows.Perms {
		var what, seen []string
		for _, en := range entries {
			if en.Perm != p || en.Kind == flows.KindFlow || slices.Contains(seen, en.Desc) {
				continue
			}
			seen = append(seen, en.Desc)
			w := strings.ReplaceAll(locales.T(locales.En, en.Desc), "|", `\|`)
			switch en.Kind {
			case flows.KindCommand:
				w = "`/" + en.Name + "` — " + w
			case flows.KindEndpoint:
				w = "console: " + w
			}
			what = append(what, w)
		}
		b.WriteString("| `" + string(p) + "` | " + strings.Join(what, "; ") + " |")
		for _, r := range flows.RoleList {
			b.WriteString(map[bool]string{true: " ✓ |", false: "   |"}[r.Can(p)])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestStaffTableInDocs: the table of docs/admin.md ("Staff roles") is the
// one the registry gives.
func TestStaffTableInDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/admin.md")
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- staff table: generated, TestStaffTableInDocs checks it -->\n", "<!-- end of the staff table -->"
	_, rest, ok := strings.Cut(string(doc), start)
	table, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/admin.md has no staff table between %q and %q", start, end)
	}
	if want := staffTable(fullShop(t)); table != want {
		t.Errorf("docs/admin.md's staff table is not the registry's; it should read:\n%s", want)
	}
}
