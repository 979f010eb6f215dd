package flows

import (
	"fmt"
	"slices"
	"strings"
)

// The staff gate: who may do what of the admin side. A role (RoleOwner,
// RoleSupport, RoleAccountant) grants perms by one table (rolePerms); every
// admin command, button, flow and flow action is registered with the
// engine with the perm it needs (Engine.AdminCommand, AdminButton,
// AdminFlow), and the engine checks it before a handler runs; so is every
// endpoint of the admin console (Engine.ConsoleEndpoint), which the console
// checks (Engine.ConsoleAllows) before its handler runs. Handlers
// check nothing themselves; one that serves buyers and staff alike asks
// User.Can. The registry is readable (Engine.AdminEntries): the chat's
// command menus are derived from it.

// Perm is one thing staff may do.
type Perm string

// The perms. Each names what it allows; the commands, buttons and flows
// that need it are in the engine's registry (Engine.AdminEntries).
const (
	// PermOrdersRead reads the shop's orders: /orders (every buyer's),
	// /order N, an order's operator chat.
	PermOrdersRead Perm = "orders.read"
	// PermOrdersResend delivers again without new money: sends a delivered
	// order to its buyer again, shows its codes, runs a waiting order's job
	// now.
	PermOrdersResend Perm = "orders.resend"
	// PermOrdersRefund refunds an order.
	PermOrdersRefund Perm = "orders.refund"
	// PermOrdersRetry resolves an order in review with upstream money:
	// adopts an upstream order, or places the order again.
	PermOrdersRetry Perm = "orders.retry"
	// PermTickets answers and closes support tickets and receives them.
	PermTickets Perm = "tickets"
	// PermBooksRead reads the books: /balance, /stats, /transactions,
	// /reconcile.
	PermBooksRead Perm = "books.read"
	// PermExport sends the books as CSV: /export.
	PermExport Perm = "books.export"
	// PermCredit credits a buyer's wallet: /credit.
	PermCredit Perm = "wallet.credit"
	// PermPromo manages promo codes: /promo.
	PermPromo Perm = "promo"
	// PermBroadcast sends a message to every buyer: /broadcast.
	PermBroadcast Perm = "broadcast"
	// PermReviews reads the buyers' reviews and hides or shows one:
	// /reviews.
	PermReviews Perm = "reviews"
)

// Perms are every perm, in the order the command menus and the docs list
// what they allow.
var Perms = []Perm{
	PermOrdersRead, PermOrdersResend, PermOrdersRefund, PermOrdersRetry, PermTickets,
	PermBooksRead, PermExport, PermCredit, PermPromo, PermBroadcast, PermReviews,
}

// Roles is a set of staff roles; the zero value is a buyer's (none).
type Roles uint8

// The roles. A user may have several (an id in two lists of the
// configuration) and may then do what any of them allows.
const (
	RoleOwner      Roles = 1 << iota // ADMIN_IDS: everything; the alerts go to owners
	RoleSupport                      // SUPPORT_IDS: tickets, reading orders, delivering again, reviews
	RoleAccountant                   // ACCOUNTANT_IDS: reading the books and orders, exports
)

// RoleList are the roles one by one, in the order the docs list them.
var RoleList = []Roles{RoleOwner, RoleSupport, RoleAccountant}

// rolePerms is the one table of what each role may do. The owner may do
// everything, perms added later included.
var rolePerms = map[Roles][]Perm{
	RoleOwner:      Perms,
	RoleSupport:    {PermOrdersRead, PermOrdersResend, PermTickets, PermReviews},
	RoleAccountant: {PermOrdersRead, PermBooksRead, PermExport},
}

// Can reports whether any of the roles allows p.
func (r Roles) Can(p Perm) bool {
	for _, one := range RoleList {
		if r&one != 0 && slices.Contains(rolePerms[one], p) {
			return true
		}
	}
	return false
}

// Has reports whether r includes every role of o.
func (r Roles) Has(o Roles) bool { return o != 0 && r&o == o }

// String names the roles ("owner", "support+accountant"), or "buyer" for
// none.
func (r Roles) String() string {
	var names []string
	for _, one := range RoleList {
		if r&one != 0 {
			names = append(names, roleNames[one])
		}
	}
	if len(names) == 0 {
		return "buyer"
	}
	return strings.Join(names, "+")
}

var roleNames = map[Roles]string{RoleOwner: "owner", RoleSupport: "support", RoleAccountant: "accountant"}

// Can reports whether the user's roles allow p.
func (u User) Can(p Perm) bool { return u.Roles.Can(p) }

// RoleName names the user's roles ("owner", "support+accountant"; "buyer"
// for none), for an audit record of what they did.
func (u User) RoleName() string { return u.Roles.String() }

// Staff reports whether the user has any staff role.
func (u User) Staff() bool { return u.Roles != 0 }

// Staff is who has which roles: the shop's configured staff.
type Staff struct {
	roles map[int64]Roles
	ids   []int64 // in the order first seen: owners, support, accountants
}

// NewStaff returns the staff of the three lists (ADMIN_IDS, SUPPORT_IDS,
// ACCOUNTANT_IDS); an id in several lists has each list's role.
func NewStaff(owners, support, accountants []int64) Staff {
	s := Staff{roles: map[int64]Roles{}}
	add := func(ids []int64, r Roles) {
		for _, id := range ids {
			if _, ok := s.roles[id]; !ok {
				s.ids = append(s.ids, id)
			}
			s.roles[id] |= r
		}
	}
	add(owners, RoleOwner)
	add(support, RoleSupport)
	add(accountants, RoleAccountant)
	return s
}

// Roles returns user id's roles (none for a buyer).
func (s Staff) Roles(id int64) Roles { return s.roles[id] }

// IDs returns every staff member's user id: owners first, in the order
// configured.
func (s Staff) IDs() []int64 { return slices.Clone(s.ids) }

// With returns the user ids whose roles allow p, in the order of IDs.
func (s Staff) With(p Perm) []int64 {
	var out []int64
	for _, id := range s.ids {
		if s.roles[id].Can(p) {
			out = append(out, id)
		}
	}
	return out
}

// UnknownCommand is exactly what a buyer gets for a command the shop does
// not have, and what anyone gets for an admin command their roles do not
// allow: nothing reveals that it exists.
func UnknownCommand(env *Env) *Reply {
	return &Reply{Notices: []Notice{{Text: env.T("err.unknown_command")}}, NoScreen: true}
}

// AdminKind is what an entry of the admin registry is.
type AdminKind string

// The kinds of admin entries.
const (
	KindCommand AdminKind = "command" // a /command
	KindButton  AdminKind = "button"  // a global button action
	KindFlow    AdminKind = "flow"    // a flow: every screen, button and message of it
	KindAction  AdminKind = "action"  // a button of a flow that needs more than the flow's perm
	// KindEndpoint is an endpoint of the admin console (bot/console), named
	// "METHOD route" ("POST orders/{ref}/refund").
	KindEndpoint AdminKind = "console"
)

// AdminEntry is one registered admin command, button, flow, flow action or
// console endpoint and the perm it needs.
type AdminEntry struct {
	Kind AdminKind
	Name string // the command (without the slash), button action, flow name, the flow action, or the endpoint
	Flow string // KindAction: the flow whose button it is
	Perm Perm
	Desc string // locale key of what it does (a command's: its menu description)
}

// gate is the engine's admin registry.
type gate struct {
	entries  []AdminEntry
	commands map[string]staffCommand    // the admin commands
	buttons  map[Action]Perm            // the admin button actions (their handlers are in Engine.buttons)
	flows    map[string]Perm            // the admin flows (in Engine.flows)
	actions  map[string]map[Action]Perm // flow -> its actions that need more
	console  map[string]Perm            // the console's endpoints ("METHOD route")
}

// staffCommand is a registered admin command.
type staffCommand struct {
	f    CommandFunc
	perm Perm
}

func newGate() gate {
	return gate{commands: map[string]staffCommand{}, buttons: map[Action]Perm{}, flows: map[string]Perm{}, actions: map[string]map[Action]Perm{}, console: map[string]Perm{}}
}

// builtinCommands are the engine's own: an admin command by one of these
// names would never be reached.
var builtinCommands = []string{"start", "cancel", "help", "paysupport", "language", "menu"}

// add records an entry; a second entry of the same kind and name, an
// unknown perm or no description is a programming error.
func (g *gate) add(en AdminEntry) {
	if !slices.Contains(Perms, en.Perm) {
		panic(fmt.Sprintf("flows: admin %s %q: unknown perm %q", en.Kind, en.Name, en.Perm))
	}
	if en.Desc == "" {
		panic(fmt.Sprintf("flows: admin %s %q: no description", en.Kind, en.Name))
	}
	for _, o := range g.entries {
		if o.Kind == en.Kind && o.Name == en.Name && o.Flow == en.Flow {
			panic(fmt.Sprintf("flows: admin %s %q registered twice", en.Kind, en.Name))
		}
	}
	g.entries = append(g.entries, en)
}

// AdminCommand registers a staff command that needs perm; desc is the
// locale key of its description in the command menu. Anyone whose roles do
// not allow perm is answered as for an unknown command, or, when buyers
// have a command of the same name (HandleCommand), gets the buyers' one:
// /orders is a buyer's own orders and, for staff who may read orders, the
// whole shop's.
func (e *Engine) AdminCommand(name string, perm Perm, desc string, f CommandFunc) {
	if slices.Contains(builtinCommands, name) {
		panic(fmt.Sprintf("flows: admin command %q is the engine's own", name))
	}
	e.gate.add(AdminEntry{Kind: KindCommand, Name: name, Perm: perm, Desc: desc})
	e.gate.commands[name] = staffCommand{f, perm}
}

// AdminButton registers a global button action (its buttons use
// GlobalNonce or the session nonce) that needs perm. A press by anyone
// whose roles do not allow perm is answered as stale and f is not run; f
// still checks its argument.
func (e *Engine) AdminButton(action Action, perm Perm, desc string, f CommandFunc) {
	e.gate.add(AdminEntry{Kind: KindButton, Name: string(action), Perm: perm, Desc: desc})
	e.gate.buttons[action] = perm
	e.buttons[action] = f
}

// AdminFlow registers a flow that needs perm: whenever the chat is in it
// (a screen shown again, a button, text) the engine checks the perm
// first, and someone whose roles do not allow it (any more) leaves the
// flow without seeing it. The returned registration adds what the flow
// needs besides (Lasting, Action).
func (e *Engine) AdminFlow(name string, perm Perm, desc string, f Flow) *AdminFlowReg {
	e.gate.add(AdminEntry{Kind: KindFlow, Name: name, Perm: perm, Desc: desc})
	e.flows[name] = f
	e.gate.flows[name] = perm
	return &AdminFlowReg{e: e, name: name}
}

// AdminFlowReg is an admin flow's registration.
type AdminFlowReg struct {
	e    *Engine
	name string
}

// Lasting makes the flow one that does not expire with FlowTTL (a reply
// to a ticket).
func (r *AdminFlowReg) Lasting() *AdminFlowReg {
	r.e.lasting[r.name] = true
	return r
}

// Action says that the flow's button action needs perm besides the flow's
// own: a press by anyone whose roles do not allow it is answered as stale
// and the flow does not see it, and the engine leaves the button off the
// screens it shows them.
func (r *AdminFlowReg) Action(action Action, perm Perm, desc string) *AdminFlowReg {
	g := &r.e.gate
	g.add(AdminEntry{Kind: KindAction, Name: string(action), Flow: r.name, Perm: perm, Desc: desc})
	if g.actions[r.name] == nil {
		g.actions[r.name] = map[Action]Perm{}
	}
	g.actions[r.name][action] = perm
	return r
}

// ConsoleEndpoint registers an endpoint of the admin console ("GET
// orders", "POST orders/{ref}/refund") that needs perm; desc is the locale
// key of what it does. The console asks ConsoleAllows before every request
// reaches the endpoint's handler.
func (e *Engine) ConsoleEndpoint(endpoint string, perm Perm, desc string) {
	e.gate.add(AdminEntry{Kind: KindEndpoint, Name: endpoint, Perm: perm, Desc: desc})
	e.gate.console[endpoint] = perm
}

// ConsoleAllows reports whether u may call the console's endpoint: it is
// registered (ConsoleEndpoint) and u's roles allow its perm. An endpoint
// nobody registered is refused to everyone.
func (e *Engine) ConsoleAllows(endpoint string, u User) bool {
	p, ok := e.gate.console[endpoint]
	return ok && u.Can(p)
}

// AdminEntries returns the admin registry: every admin command, button,
// flow and flow action with its perm, ordered by perm (as Perms lists
// them), then as registered. It is a copy.
func (e *Engine) AdminEntries() []AdminEntry {
	out := slices.Clone(e.gate.entries)
	slices.SortStableFunc(out, func(a, b AdminEntry) int {
		return slices.Index(Perms, a.Perm) - slices.Index(Perms, b.Perm)
	})
	return out
}

// adminCommand returns the admin command name and whether env's user may
// use it.
func (e *Engine) adminCommand(name string, env *Env) (CommandFunc, bool) {
	c, ok := e.gate.commands[name]
	return c.f, ok && env.User.Can(c.perm)
}

// flowAllowed reports whether env's user may be in flow name.
func (e *Engine) flowAllowed(name string, env *Env) bool {
	p, gated := e.gate.flows[name]
	return !gated || env.User.Can(p)
}

// pressAllowed reports whether env's user may press a button of action in
// flow (the chat's flow, for a button with the session nonce).
func (e *Engine) pressAllowed(env *Env, flow string, action Action, global bool) bool {
	if p, ok := e.gate.buttons[action]; ok {
		return env.User.Can(p)
	}
	if global {
		return true
	}
	if p, ok := e.gate.actions[flow][action]; ok {
		return env.User.Can(p)
	}
	return true
}

// strip leaves off r the buttons env's user may not press: an admin
// button or flow action their roles do not allow, so a screen shared by
// roles shows each what they may do. A row left empty goes.
func (e *Engine) strip(env *Env, s *Session, r *Reply) {
	keep := func(rows [][]Button, global bool) [][]Button {
		out := rows[:0:0]
		for _, row := range rows {
			kept := row[:0:0]
			for _, b := range row {
				if b.URL != "" || b.Share || e.pressAllowed(env, s.Flow, b.Action, global || b.Global) {
					kept = append(kept, b)
				}
			}
			if len(kept) > 0 || len(row) == 0 {
				out = append(out, kept)
			}
		}
		if rows == nil {
			return nil
		}
		return out
	}
	if r.Screen != nil {
		r.Screen.Rows = keep(r.Screen.Rows, false)
	}
	for i := range r.Notices {
		r.Notices[i].Rows = keep(r.Notices[i].Rows, true)
	}
}

// revokeFlow ends the chat's admin flow when env's user may no longer be
// in it; it reports whether it did.
func (e *Engine) revokeFlow(env *Env, s *Session) bool {
	if s.Flow == "" || e.flowAllowed(s.Flow, env) {
		return false
	}
	s.Clear()
	return true
}
