package storefront_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// The staff of the tests: an owner (ADMIN_IDS), a support agent
// (SUPPORT_IDS) and an accountant (ACCOUNTANT_IDS).
const (
	owner      = bottest.Admin
	agent      = int64(9100)
	accountant = int64(9200)
)

var en = bottest.En

// staffShop is the whole shop with its upstream and the three roles.
func staffShop(t *testing.T) (*shoptest.Shop, *storefront.Shop) {
	t.Helper()
	s := shoptest.New(t)
	b := s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil = s.Client, s.Cfg
		o.Admins, o.SupportAgents, o.Accountants = []int64{owner}, []int64{agent}, []int64{accountant}
	})
	s.Run(b)
	t.Cleanup(func() { s.NoViolations() })
	return s, b
}

// pressData presses a button of callback data on message m in chat, as a
// forged or stale press would, and returns the answer.
func pressData(s *shoptest.Shop, b *storefront.Shop, chat int64, m types.Message, data string) botapitest.CallbackAnswer {
	s.T.Helper()
	a := s.WaitAnswer(s.Fake.Press(chat, m.MessageID, data))
	s.Idle(b)
	return a
}

// withAction is the callback data of a button of action on m's screen: the
// same session nonce as m's own buttons.
func withAction(t *testing.T, m types.Message, action flows.Action) string {
	t.Helper()
	for _, btn := range m.ReplyMarkup.Buttons() {
		if c, ok := flows.DecodeCallback(btn.CallbackData); ok && c.Nonce != flows.GlobalNonce {
			d, err := flows.EncodeCallback(c.Nonce, action, "")
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatalf("message %d has no button with the session nonce", m.MessageID)
	return ""
}

// refundActions are the registry's flow actions that refund an order.
func refundActions(b *storefront.Shop) []flows.Action {
	var out []flows.Action
	for _, en := range b.Engine.AdminEntries() {
		if en.Kind == flows.KindAction && en.Perm == flows.PermOrdersRefund {
			out = append(out, flows.Action(en.Name))
		}
	}
	return out
}

// A support agent looks orders up (/order N) and sends a delivered order
// to its buyer again, but is refused /credit and the refund: the refund
// button is not on their view, and pressing it anyway (their own screen's
// nonce, the refund's action) is stale and refunds nothing. The owner's
// view of the same order has the refund, and it works.
func TestSupportAgentResendsButCannotRefundOrCredit(t *testing.T) {
	s, b := staffShop(t)
	delivered := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitStatus(delivered.ID, state.OrderDelivered)
	s.WaitTold(delivered.ID)
	got := s.WaitDelivered(delivered.ID)
	code := got.Codes[0]
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	open := s.Paid(shoptest.GiftCards(1), state.PayStars)
	placed := s.WaitStatus(open.ID, state.OrderPlaced)

	view := s.Command(b, agent, "order", strconv.FormatInt(delivered.ID, 10))
	if !strings.Contains(view.RawText, "Order #"+strconv.FormatInt(delivered.ID, 10)+"</b>") {
		t.Fatalf("/order by the support agent = %q", view.RawText)
	}
	before := s.CountMessages(bottest.Chat, code)
	if a := pressData(s, b, agent, view, bottest.Button(t, view, en("ao.btn.retry"))); a.Text != en("ao.ans.retry_sent") {
		t.Fatalf("the support agent's send-again answered %q", a.Text)
	}
	if !s.Until(func() bool { return s.CountMessages(bottest.Chat, code) > before }) {
		t.Fatal("the support agent's send-again did not reach the buyer")
	}

	view = s.Command(b, agent, "order", strconv.FormatInt(open.ID, 10))
	if bottest.HasButton(view, en("ao.btn.refund")) || !bottest.HasButton(view, en("ao.btn.run")) {
		t.Fatalf("the support agent's view of a placed order: %s", bottest.Render(view))
	}
	for _, action := range refundActions(b) {
		if a := pressData(s, b, agent, view, withAction(t, view, action)); a.Text != en("err.outdated") {
			t.Errorf("the support agent's forged %q press answered %q", action, a.Text)
		}
	}
	if o, _ := s.Orders.Get(t.Context(), open.ID); o.Status != state.OrderPlaced {
		t.Fatalf("the support agent's press moved the order to %s", o.Status)
	}
	if m := s.Command(b, agent, "credit", "5001 10"); m.Text != en("err.unknown_command") {
		t.Fatalf("/credit by the support agent = %q", m.Text)
	}
	if m := s.Command(b, agent, "tickets", ""); !strings.Contains(m.RawText, en("support.tickets_title")) {
		t.Fatalf("/tickets by the support agent = %q", m.RawText)
	}

	// The owner refunds it; the upstream gives up on it later.
	ownerView := s.Command(b, owner, "order", strconv.FormatInt(open.ID, 10))
	confirm := s.Press(b, owner, ownerView, en("ao.btn.refund"))
	if a := pressData(s, b, owner, confirm, bottest.Button(t, confirm, en("ao.btn.refund_yes"))); a.Text != en("ao.ans.refund_started") {
		t.Fatalf("the owner's refund answered %q", a.Text)
	}
	s.WaitStatus(open.ID, state.OrderRefunded)
	s.WaitTold(open.ID)
	if err := s.Sim.FailOrder(int(placed.UpstreamNumber), "timeout"); err != nil {
		t.Fatal(err)
	}
}

// An accountant reads the books (/stats, /export) and the orders, and
// changes nothing: /promo and /credit are unknown to them, and their view
// of an order has no action on it.
func TestAccountantReadsTheBooksButChangesNothing(t *testing.T) {
	s, b := staffShop(t)
	delivered := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitStatus(delivered.ID, state.OrderDelivered)
	s.WaitTold(delivered.ID)

	if m := s.Command(b, accountant, "stats", ""); !strings.Contains(m.RawText, "📊 <b>Sales</b>") {
		t.Fatalf("/stats by the accountant = %q", m.RawText)
	}
	docs := len(s.Fake.CallsFor("sendDocument"))
	if m := s.Command(b, accountant, "export", "orders"); m.Document == nil || !strings.HasSuffix(m.Document.FileName, ".csv") {
		t.Fatalf("/export orders by the accountant = %s", bottest.Render(m))
	}
	if n := len(s.Fake.CallsFor("sendDocument")); n != docs+1 {
		t.Fatalf("%d documents sent, want 1", n-docs)
	}
	view := s.Command(b, accountant, "order", strconv.FormatInt(delivered.ID, 10))
	if !strings.Contains(view.RawText, "Order #"+strconv.FormatInt(delivered.ID, 10)+"</b>") ||
		bottest.HasButton(view, en("ao.btn.retry")) || bottest.HasButton(view, en("ao.btn.codes_show")) {
		t.Fatalf("the accountant's view of a delivered order: %s", bottest.Render(view))
	}
	for _, c := range []struct{ cmd, arg string }{{"promo", "list"}, {"promo", "add SPRING 10%"}, {"credit", "5001 10"}, {"broadcast", ""}, {"tickets", ""}} {
		if m := s.Command(b, accountant, c.cmd, c.arg); m.Text != en("err.unknown_command") {
			t.Errorf("/%s %s by the accountant = %q", c.cmd, c.arg, m.Text)
		}
	}
	if codes, _ := s.Orders.Get(t.Context(), delivered.ID); codes.Status != state.OrderDelivered {
		t.Fatalf("the order moved to %s", codes.Status)
	}
}

// menuCall is one recorded setMyCommands: its scope's chat ("" for the
// default scope), its language and its commands.
type menuCall struct {
	chat     int64
	lang     string
	commands []string
	descs    map[string]string // command -> description
}

func menuCalls(t *testing.T, s *shoptest.Shop) []menuCall {
	t.Helper()
	var out []menuCall
	for _, c := range s.Fake.CallsFor("setMyCommands") {
		var scope struct {
			Type   string `json:"type"`
			ChatID int64  `json:"chat_id"`
		}
		if raw := c.Raw["scope"]; raw != "" {
			if err := json.Unmarshal([]byte(raw), &scope); err != nil {
				t.Fatal(err)
			}
		}
		var cmds []struct {
			Command     string `json:"command"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal([]byte(c.Raw["commands"]), &cmds); err != nil {
			t.Fatal(err)
		}
		m := menuCall{chat: scope.ChatID, lang: c.String("language_code"), descs: map[string]string{}}
		for _, cmd := range cmds {
			m.commands = append(m.commands, cmd.Command)
			m.descs[cmd.Command] = cmd.Description
		}
		out = append(out, m)
	}
	return out
}

// Each staff member's chat gets the buyers' commands and exactly the staff
// commands of their roles, in every language; the buyers' menu has none.
func TestCommandMenusPerRole(t *testing.T) {
	s, _ := staffShop(t)
	s.Listening()
	buyers := []string{"start", "giftcards", "keys", "games", "stars", "premium", "topup", "gifts", "services", "orders", "language", "settings", "help", "support", "paysupport", "terms", "cancel"}
	without := slices.DeleteFunc(slices.Clone(buyers), func(c string) bool { return c == "orders" })
	want := map[int64][]string{
		0:          buyers,
		owner:      append(slices.Clone(without), "orders", "order", "tickets", "balance", "stats", "transactions", "reconcile", "charges", "export", "credit", "promo", "broadcast", "reviews"),
		agent:      append(slices.Clone(without), "orders", "order", "tickets", "reviews"),
		accountant: append(slices.Clone(without), "orders", "order", "balance", "stats", "transactions", "reconcile", "charges", "export"),
	}
	calls := menuCalls(t, s)
	seen := map[int64]map[string]bool{}
	for _, c := range calls {
		w, ok := want[c.chat]
		if !ok {
			t.Errorf("a command menu for chat %d", c.chat)
			continue
		}
		if !slices.Equal(c.commands, w) {
			t.Errorf("chat %d, language %q: menu\n%v\nwant\n%v", c.chat, c.lang, c.commands, w)
		}
		lang := locales.Lang(c.lang)
		if lang == "" {
			lang = locales.En
		}
		ordersKey := map[bool]string{false: "cmd.orders", true: "cmd.orders_admin"}[c.chat != 0]
		for cmd, key := range map[string]string{"orders": ordersKey, "start": "cmd.start", "order": "cmd.order", "tickets": "cmd.tickets", "export": "cmd.export"} {
			if d, ok := c.descs[cmd]; ok && d != locales.T(lang, key) {
				t.Errorf("chat %d, language %q: /%s is described %q, want %s", c.chat, c.lang, cmd, d, key)
			}
		}
		if seen[c.chat] == nil {
			seen[c.chat] = map[string]bool{}
		}
		seen[c.chat][c.lang] = true
	}
	for chat := range want {
		if len(seen[chat]) != 4 { // the default language and en, ru, uk
			t.Errorf("chat %d: menus in %v, want the default and 3 languages", chat, seen[chat])
		}
	}
	if len(calls) != 4*len(want) {
		t.Errorf("%d setMyCommands, want %d", len(calls), 4*len(want))
	}
}
