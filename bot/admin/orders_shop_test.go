package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/flows/golden"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// aoBase is where the admin tests' clocks start, so golden files show
// fixed dates; the clocks run in real time from there (a test takes
// seconds, so every time shows as 10:00).
var aoBase = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// adminShop is the shop with its upstream (shoptest) and one bot
// (fulfilment worker, admin) running on a clock starting at aoBase: the
// bot's, the order store's and the upstream simulator's.
type adminShop struct {
	*shoptest.Shop
	b *storefront.Shop
}

func newAdminShop(t *testing.T, tune func(*fulfil.Config)) *adminShop {
	t.Helper()
	s := shoptest.New(t)
	t0 := time.Now()
	clk := func() time.Time { return aoBase.Add(time.Since(t0)) }
	sim := resellersim.New(resellersim.Config{Seed: 1, Now: clk})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1), reseller.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s.Sim, s.Client, s.Start = sim, client, sim.Balance()
	s.Orders.Now = clk
	cfg := s.Cfg
	if tune != nil {
		tune(&cfg)
	}
	b := s.NewBot(func(o *storefront.Options) { o.Reseller, o.Fulfil, o.Admins, o.Now = client, cfg, []int64{admin}, clk })
	fakePace(b.API) // many messages to one buyer: paced on a fake clock, so the tests do not wait for it
	s.Run(b)
	t.Cleanup(func() {
		if v := s.Fake.Violations(); len(v) > 0 {
			t.Errorf("Bot API schema violations: %v", v)
		}
	})
	return &adminShop{Shop: s, b: b}
}

// finished pays for q and waits until the order reaches want and the buyer
// heard about it, so orders are made one after another (stable numbers).
func (s *adminShop) finished(q state.Quote, method, want string) *state.Order {
	s.T.Helper()
	o := s.Paid(q, method)
	s.WaitStatus(o.ID, want)
	if want == state.OrderDelivered || want == state.OrderRefunded {
		s.WaitTold(o.ID)
	}
	got, err := s.Orders.Get(context.Background(), o.ID)
	if err != nil {
		s.T.Fatal(err)
	}
	return got
}

// inReview makes an order that goes to needs_review: two identical upstream
// orders someone else placed moments ago, then a create whose outcome is
// unknown (fault). The other orders stay foreign, and their cost is spent
// outside the shop.
func (s *adminShop) inReview(fault func(*resellersim.Sim)) *state.Order {
	s.T.Helper()
	ctx := context.Background()
	var nums []string
	for range 2 {
		up, err := s.Client.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
		if err != nil {
			s.T.Fatal(err)
		}
		s.Foreign[int(up.Number)] = true
		s.External = s.External.Add(up.ChargedUSD.Decimal)
		nums = append(nums, itoa(up.Number))
	}
	// The shop has seen them (its orphan scan lists every upstream order).
	if err := s.Orders.NoteUpstream(ctx, int64(s.newest().Number)); err != nil {
		s.T.Fatal(err)
	}
	// The order's create, as the worker sends it, with its answer lost.
	o := s.PaidUnscheduled(giftCards(1), state.PayStars)
	fault(s.Sim)
	req := &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1}
	if _, err := s.Client.CreateGiftCardOrder(ctx, req); err == nil {
		s.T.Fatal("the fault let the create through")
	}
	if n := s.newest(); !s.Foreign[n.Number] {
		nums = append(nums, itoa(int64(n.Number)))
	}
	// The worker's placement protocol proves such an order its own; an
	// admin still meets this after a Redis that lost the order's records
	// (the look-alikes then cannot be told apart), so the order is put
	// there as the worker would put it.
	raw, _ := json.Marshal(map[string]any{"type": reseller.OrderTypeGiftCard,
		"params": map[string]string{"category_id": req.CategoryID, "card_id": req.CardID, "quantity": "1"}})
	o, err := s.Orders.Transition(ctx, o.ID, []string{state.OrderPaid}, state.OrderPlacing, func(n *state.Order) error {
		n.AttemptID, n.Request, n.Attempts, n.PlacingAt = "0123456789abcdef", raw, 1, n.CreatedAt
		return nil
	}, "attempt 0123456789abcdef")
	if err != nil {
		s.T.Fatal(err)
	}
	why := "upstream orders that may be this order's, unprovable: " + strings.Join(nums, ", ")
	o, err = s.Orders.Transition(ctx, o.ID, []string{state.OrderPlacing}, state.OrderNeedsReview, func(n *state.Order) error {
		n.Reason = why
		return nil
	}, why)
	if err != nil {
		s.T.Fatal(err)
	}
	if _, err := s.b.Alerts.Raise(ctx, fulfil.ReviewAlert(o.ID), en("alert.order_review", "id", o.ID, "why", why)); err != nil {
		s.T.Fatal(err)
	}
	return o
}

// newest is the last upstream order the simulator has.
func (s *adminShop) newest() resellersim.OrderSnapshot {
	all := s.Sim.Orders()
	return all[len(all)-1]
}

// command sends an admin command and returns the first new bot message
// containing want.
func (s *adminShop) command(cmd, arg, want string) types.Message {
	s.T.Helper()
	before := len(s.Fake.MessagesIn(admin))
	s.Fake.SendCommand(admin, cmd, arg)
	return s.newMessage(admin, before, want)
}

// sayAdmin sends text as the admin and returns the first new bot message
// containing want.
func (s *adminShop) sayAdmin(text, want string) types.Message {
	s.T.Helper()
	before := len(s.Fake.MessagesIn(admin))
	s.Fake.SendText(admin, text)
	return s.newMessage(admin, before, want)
}

func (s *adminShop) newMessage(chatID int64, before int, want string) types.Message {
	s.T.Helper()
	var found types.Message
	if s.Until(func() bool {
		msgs := s.Fake.MessagesIn(chatID)
		for _, m := range msgs[min(before, len(msgs)):] {
			if m.From != nil && m.From.IsBot && strings.Contains(m.RawText, want) {
				found = m
				return true
			}
		}
		return false
	}) {
		s.Idle(s.b)
		return found
	}
	s.T.Fatalf("no new message in chat %d containing %q", chatID, want)
	return types.Message{}
}

// press taps the button labelled label on the message as it is now, waits
// for the answer and for the bot to finish, and returns the answer.
func (s *adminShop) press(m types.Message, label string) botapitest.CallbackAnswer {
	s.T.Helper()
	q, err := s.Fake.PressButton(admin, m.MessageID, label)
	if err != nil {
		s.T.Fatal(err)
	}
	a := s.WaitAnswer(q)
	s.Idle(s.b)
	return a
}

// now is the message as it is now (after edits).
func (s *adminShop) now(m types.Message) types.Message {
	s.T.Helper()
	cur, ok := s.Fake.Message(admin, m.MessageID)
	if !ok {
		s.T.Fatalf("message %d is gone", m.MessageID)
	}
	return cur
}

var (
	button        = bottest.Button
	hasButton     = bottest.HasButton
	fakePace      = bottest.FakePace
	renderMessage = bottest.Render
	giftCards     = shoptest.GiftCards
	en            = bottest.En
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// volatile are the parts of a rendered admin view that differ between runs:
// Telegram charge ids (drawn from the fake server's sequence), placing
// attempt ids (random) and quote ids in wallet refs (from the wall clock).
var volatile = []struct {
	re *regexp.Regexp
	to string
}{
	{regexp.MustCompile(`stxTEST\d+`), "stxTEST<n>"},
	{regexp.MustCompile(`attempt [0-9a-f]{16}`), "attempt <id>"},
	{regexp.MustCompile(`pay:q\d+`), "pay:q<n>"},
}

func stable(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.to)
	}
	return s
}

func TestAdminOrdersListFiltersAndPages(t *testing.T) {
	s := newAdminShop(t, nil)
	priced := func(q state.Quote, usd string, stars int64) state.Quote {
		q.ShopUSD, q.Stars = decimal.RequireFromString(usd), stars
		return q
	}
	stars := priced(state.Quote{Line: "stars", Item: "stars", ItemName: "100 Telegram Stars", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 100}, "1.95", 150)
	premium := priced(state.Quote{Line: "premium", Item: "3", ItemName: "Telegram Premium, 3 months", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 1}, "13.19", 1015)
	keys := priced(state.Quote{Line: "keys", Category: simcatalog.DemoGame, Item: simcatalog.DemoGameKey, ItemName: "ELDEN RING key", Quantity: 1}, "65.99", 5077)
	s.finished(priced(giftCards(1), "11.39", 877), state.PayStars, state.OrderDelivered)
	s.finished(priced(giftCards(2), "22.77", 1752), state.PayWallet, state.OrderDelivered)
	s.finished(stars, state.PayStars, state.OrderDelivered)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	s.finished(priced(giftCards(1), "11.39", 877), state.PayWallet, state.OrderRefunded)
	s.Sim.ClearBehavior(simcatalog.DemoGiftCard)
	s.finished(priced(giftCards(1), "11.39", 877), state.PayStars, state.OrderDelivered)
	s.finished(keys, state.PayStars, state.OrderDelivered)
	s.finished(priced(giftCards(3), "34.16", 2628), state.PayStars, state.OrderDelivered)
	s.finished(premium, state.PayWallet, state.OrderDelivered)

	list := s.command("orders", "", "Shop orders")
	golden.Check(t, "adminorders/list", stable(renderMessage(list)))
	if !strings.Contains(list.RawText, `<a href="tg://user?id=5001">5001</a>`) {
		t.Fatalf("the buyer is not linked: %q", list.RawText)
	}

	s.press(list, en("ao.btn.status", "status", en("ao.all")))
	if m := s.now(list); m.Text != en("ao.pick.status") {
		t.Fatalf("status picker = %q", m.Text)
	}
	s.press(list, en("ao.status.delivered"))
	golden.Check(t, "adminorders/list_delivered", stable(renderMessage(s.now(list))))
	s.press(list, en("btn.next"))
	golden.Check(t, "adminorders/list_delivered_page2", stable(renderMessage(s.now(list))))
	s.press(list, en("btn.prev"))
	if m := s.now(list); !strings.Contains(m.Text, "#8") || strings.Contains(m.Text, "#2 ") {
		t.Fatalf("back on the first page: %q", m.Text)
	}
	s.press(list, en("ao.btn.line", "line", en("ao.all")))
	s.press(list, en("line.giftcards"))
	golden.Check(t, "adminorders/list_delivered_giftcards", stable(renderMessage(s.now(list))))

	// An order opens from its button; its list is one tap away.
	s.press(list, "#5 · Apple Gift Card 10 USD")
	if m := s.now(list); !strings.Contains(m.Text, "Order #5") {
		t.Fatalf("order view = %q", m.Text)
	}
	s.press(list, en("ao.btn.list"))
	if m := s.now(list); !strings.Contains(m.Text, "Status: ✅ delivered · line: 💳 Gift cards") {
		t.Fatalf("the list lost its filter: %q", m.Text)
	}
	// The admin's own buyer orders stay reachable (this admin bought nothing).
	s.press(list, en("btn.orders"))
	if m := s.now(list); m.Text != en("orders.empty") {
		t.Fatalf("My orders = %q", m.Text)
	}
}

func TestAdminOrderViewGoldens(t *testing.T) {
	s := newAdminShop(t, nil)
	two := giftCards(2)
	two.ShopUSD, two.Stars = decimal.RequireFromString("22.77"), 1752
	delivered := s.finished(two, state.PayStars, state.OrderDelivered)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	refunded := s.finished(giftCards(1), state.PayWallet, state.OrderRefunded)
	s.Sim.ClearBehavior(simcatalog.DemoGiftCard)
	review := s.inReview(func(sim *resellersim.Sim) { sim.CutAfterCreate(1) })
	s.Foreign[s.newest().Number] = true // nobody adopts it in this test
	s.External = s.External.Add(s.newest().ChargedUSD)

	view := s.command("order", itoa(delivered.ID), "Order #"+itoa(delivered.ID)+"</b>")
	golden.Check(t, "adminorders/order_delivered", stable(renderMessage(view)))
	for _, c := range delivered.Codes {
		if strings.Contains(view.RawText, c) {
			t.Fatal("a code is shown before the admin asked for it")
		}
	}
	s.press(view, en("ao.btn.codes_show"))
	shown := s.now(view)
	for _, c := range delivered.Codes {
		if !strings.Contains(shown.RawText, "<code>"+c+"</code>") {
			t.Fatalf("codes not shown: %q", shown.RawText)
		}
	}
	s.press(view, en("ao.btn.codes_hide"))
	if strings.Contains(s.now(view).RawText, delivered.Codes[0]) {
		t.Fatal("codes still shown after hiding them")
	}

	view = s.command("order", itoa(refunded.ID), "Order #"+itoa(refunded.ID)+"</b>")
	golden.Check(t, "adminorders/order_refunded", stable(renderMessage(view)))

	view = s.command("order", itoa(review.ID), "Order #"+itoa(review.ID)+"</b>")
	golden.Check(t, "adminorders/order_needs_review", stable(renderMessage(view)))
}

func TestAdminOrderByUpstreamNumberAndBadNumbers(t *testing.T) {
	s := newAdminShop(t, nil)
	o := s.finished(giftCards(1), state.PayStars, state.OrderDelivered)
	up := itoa(o.UpstreamNumber)
	view := s.command("order", up, "Order #"+itoa(o.ID)+"</b>")
	if !strings.Contains(view.RawText, en("ao.order.via_upstream", "number", up)) {
		t.Fatalf("does not say it matched the upstream number: %q", view.RawText)
	}
	view = s.command("order", "#"+itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	if !strings.Contains(view.RawText, en("ao.order.via_ours")) {
		t.Fatalf("does not say it matched our number: %q", view.RawText)
	}
	for _, c := range []struct{ arg, want string }{
		{"", en("ao.order.usage")},
		{"abc", en("ao.order.bad", "arg", "abc") + "\n" + en("ao.order.usage")},
		{"-3", en("ao.order.bad", "arg", "-3") + "\n" + en("ao.order.usage")},
		{"999999", en("ao.order.unknown", "number", "999999") + "\n" + en("ao.order.usage")},
	} {
		if m := s.command("order", c.arg, "/order 42"); m.RawText != c.want {
			t.Fatalf("/order %q answered %q, want %q", c.arg, m.RawText, c.want)
		}
	}
}

func TestNonAdminOrdersIsTheBuyersListAndOrderIsUnknown(t *testing.T) {
	s := newAdminShop(t, nil)
	o := s.finished(giftCards(1), state.PayStars, state.OrderDelivered)
	before := len(s.Fake.MessagesIn(chat))
	s.Fake.SendCommand(chat, "orders", "")
	list := s.newMessage(chat, before, en("orders.title"))
	if strings.Contains(list.RawText, "Shop orders") || !strings.Contains(list.RawText, "#1 · Apple Gift Card 10 USD") {
		t.Fatalf("a buyer's /orders = %q", list.RawText)
	}
	for _, arg := range []string{itoa(o.ID), ""} {
		before = len(s.Fake.MessagesIn(chat))
		s.Fake.SendCommand(chat, "order", arg)
		if m := s.newMessage(chat, before, ""); m.RawText != en("err.unknown_command") {
			t.Fatalf("a buyer's /order %s answered %q", arg, m.RawText)
		}
	}
	// Admin actions cannot be forged by a buyer: outside the admin flow they
	// are outdated buttons.
	q := s.Fake.Press(chat, list.MessageID, "1:0:aory")
	if a := s.WaitAnswer(q); a.Text != en("err.outdated") {
		t.Fatalf("forged refund answered %q", a.Text)
	}
	s.Idle(s.b)
	if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderDelivered || s.StarRefunds(o.ChargeID) != 0 {
		t.Fatalf("forged refund: order %s, %d refunds", cur.Status, s.StarRefunds(o.ChargeID))
	}
}

func TestAdminRetryDeliverySendsTheCodesOncePerPress(t *testing.T) {
	s := newAdminShop(t, nil)
	o := s.finished(giftCards(2), state.PayStars, state.OrderDelivered)
	code := "<code>" + o.Codes[0] + "</code>"
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	if a := s.press(view, en("ao.btn.retry")); a.Text != en("ao.ans.retry_sent") {
		t.Fatalf("retry answered %q", a.Text)
	}
	if n := s.CountMessages(chat, code); n != 2 {
		t.Fatalf("codes sent %d times after one retry", n)
	}
	// A double tap: the second press is on an outdated menu.
	data := button(t, s.now(view), en("ao.btn.retry"))
	q1, q2 := s.Fake.Press(admin, view.MessageID, data), s.Fake.Press(admin, view.MessageID, data)
	answers := []string{s.WaitAnswer(q1).Text, s.WaitAnswer(q2).Text}
	s.Idle(s.b)
	if n := s.CountMessages(chat, code); n != 3 {
		t.Fatalf("codes sent %d times after a double tap, want 3 (answers %q)", n, answers)
	}
	got, _ := s.Orders.Get(context.Background(), o.ID)
	notes := 0
	for _, h := range got.History {
		if h.Note == "admin "+itoa(admin)+": sent to the buyer again" {
			notes++
		}
	}
	if notes != 2 {
		t.Fatalf("%d resends recorded in the history", notes)
	}
}

func TestAdminRunNowPollsAWaitingOrder(t *testing.T) {
	s := newAdminShop(t, func(c *fulfil.Config) { c.PollMin, c.PollFirst, c.PollMax = time.Hour, time.Hour, time.Hour })
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(giftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	if !s.Until(func() bool { // the first poll is done and the next is an hour away
		at, ok, _ := s.Sched.Due(context.Background(), fulfil.OrderJob(o.ID))
		return ok && at.After(aoBase.Add(30*time.Minute))
	}) {
		t.Fatal("the order's next poll was never scheduled")
	}
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	if a := s.press(view, en("ao.btn.run")); a.Text != en("ao.ans.run_queued") {
		t.Fatalf("run now answered %q", a.Text)
	}
	s.WaitStatus(o.ID, state.OrderDelivered)
	s.WaitTold(o.ID)
}

func TestAdminRefundConfirmedByADoubleTapRefundsOnce(t *testing.T) {
	for _, method := range []string{state.PayStars, state.PayWallet} {
		t.Run(method, func(t *testing.T) {
			s := newAdminShop(t, nil)
			s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
			o := s.Paid(giftCards(1), method)
			placed := s.WaitStatus(o.ID, state.OrderPlaced)
			// The warning names the status the order last saw upstream:
			// wait for the poll that sees it processing (the create
			// answered "created").
			if !s.UntilWithin(15*time.Second, func() bool {
				cur, err := s.Orders.Get(context.Background(), o.ID)
				return err == nil && cur.UpstreamStatus == "processing"
			}) {
				t.Fatal("the order never saw its upstream order processing")
			}
			view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
			s.press(view, en("ao.btn.refund"))
			confirm := s.now(view)
			warn := en("ao.refund.warn_placed", "number", itoa(placed.UpstreamNumber), "status", "processing")
			if !strings.Contains(confirm.RawText, warn) {
				t.Fatalf("the confirmation does not warn about the upstream order: %q", confirm.RawText)
			}
			if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderPlaced {
				t.Fatalf("asking to confirm changed the order to %s", cur.Status)
			}
			data := button(t, confirm, en("ao.btn.refund_yes"))
			q1, q2 := s.Fake.Press(admin, view.MessageID, data), s.Fake.Press(admin, view.MessageID, data)
			a1, a2 := s.WaitAnswer(q1).Text, s.WaitAnswer(q2).Text
			if (a1 == en("ao.ans.refund_started")) == (a2 == en("ao.ans.refund_started")) {
				t.Fatalf("double tap answered %q and %q", a1, a2)
			}
			got := s.WaitStatus(o.ID, state.OrderRefunded)
			s.WaitTold(o.ID)
			// Count once the worker is done with the order (its job is gone).
			ctx := context.Background()
			if !s.Until(func() bool { _, due, err := s.Sched.Due(ctx, fulfil.OrderJob(o.ID)); return err == nil && !due }) {
				t.Fatal("the refunded order kept its job")
			}
			switch method {
			case state.PayStars:
				if n := s.StarRefunds(o.ChargeID); n != 1 {
					t.Fatalf("%d Stars refunds", n)
				}
			case state.PayWallet:
				entries, _ := s.Wallets.Ledger(ctx, chat, 0, 10)
				if len(entries) != 3 { // credit, debit, one refund
					t.Fatalf("ledger has %d entries", len(entries))
				}
			}
			recorded := false
			for _, h := range got.History {
				recorded = recorded || (h.To == state.OrderRefunding && h.Note == "admin "+itoa(admin)+": refund")
			}
			if !recorded {
				t.Fatalf("the admin's refund is not in the history: %+v", got.History)
			}
			// The upstream gives up on the order later; its charge comes back.
			if err := s.Sim.FailOrder(int(placed.UpstreamNumber), "timeout"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAdminRefundOfAnOrderDeliveredMeanwhileIsRefusedAndExplained(t *testing.T) {
	s := newAdminShop(t, nil)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(giftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	s.press(view, en("ao.btn.refund"))
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(o.ID, state.OrderDelivered)
	before := len(s.Fake.MessagesIn(admin))
	if a := s.press(view, en("ao.btn.refund_yes")); a.Text != en("ao.ans.refund_refused") {
		t.Fatalf("refund of a delivered order answered %q", a.Text)
	}
	s.newMessage(admin, before, en("ao.refund.refused_delivered", "id", itoa(o.ID)))
	cur := s.now(view)
	if hasButton(cur, en("ao.btn.refund")) || !hasButton(cur, en("ao.btn.retry")) {
		t.Fatalf("the delivered order's view: %s", renderMessage(cur))
	}
	if !strings.Contains(cur.RawText, en("ao.order.no_refund")) {
		t.Fatalf("the view does not say why there is no refund: %q", cur.RawText)
	}
	s.WaitTold(o.ID)
	if n := s.StarRefunds(o.ChargeID); n != 0 {
		t.Fatalf("%d refunds of a delivered order", n)
	}
}

// An admin confirms a refund of a placed order just after the upstream
// completed it (between two polls): the refund re-reads the upstream
// order, refuses, and the buyer gets the goods, not their Stars back too.
func TestAdminRefundRacingAnUpstreamCompletionDelivers(t *testing.T) {
	// The worker polls placed orders rarely here, so only the refund's own
	// re-read can see the completion.
	s := newAdminShop(t, func(c *fulfil.Config) { c.PollMin, c.PollFirst, c.PollMax = time.Hour, time.Hour, time.Hour })
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(giftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	s.press(view, en("ao.btn.refund"))
	confirm := s.now(view)
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	if a := s.press(confirm, en("ao.btn.refund_yes")); a.Text != en("ao.ans.refund_refused") {
		t.Fatalf("the refund answered %q", a.Text)
	}
	s.WaitMessage(admin, en("ao.refund.refused_completed", "id", itoa(o.ID)))
	got := s.WaitDelivered(o.ID)
	if n := s.StarRefunds(got.ChargeID); n != 0 {
		t.Fatalf("%d refunds of a delivered order", n)
	}
}

func (s *adminShop) reviewAlertRaised(id int64) bool {
	n, err := s.Rdb.Client.Exists(context.Background(), s.Rdb.Prefix+"alert:order:"+itoa(id)+":review").Result()
	if err != nil {
		s.T.Fatal(err)
	}
	return n == 1
}

func TestAdminResolvesReviewByAdoptingTheUpstreamOrder(t *testing.T) {
	s := newAdminShop(t, nil)
	other := s.finished(giftCards(1), state.PayStars, state.OrderDelivered)
	o := s.inReview(func(sim *resellersim.Sim) { sim.CutAfterCreate(1) })
	ours := s.newest() // what our cut create made
	// The worker raises the alert just after the order reaches needs_review.
	if !s.UntilWithin(5*time.Second, func() bool { return s.reviewAlertRaised(o.ID) }) {
		t.Fatal("no review alert")
	}
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	s.press(view, en("ao.btn.adopt"))
	ask := "Adopt an upstream order for order #" + itoa(o.ID)
	if !strings.Contains(s.now(view).RawText, ask) {
		t.Fatalf("adopt screen = %q", s.now(view).RawText)
	}
	for _, c := range []struct{ text, want string }{
		{"abc", en("ao.adopt.bad_number")},
		{itoa(other.UpstreamNumber), en("ao.adopt.claimed", "number", itoa(other.UpstreamNumber), "other", itoa(other.ID))},
		{"99999", en("ao.adopt.not_found", "number", "99999")},
	} {
		s.sayAdmin(c.text, c.want)
		s.newMessage(admin, len(s.Fake.MessagesIn(admin))-1, ask) // the question again
	}
	confirm := s.sayAdmin(strconv.Itoa(ours.Number), "Adopt upstream order #"+strconv.Itoa(ours.Number))
	if !strings.Contains(confirm.RawText, en("ao.adopt.match_yes")) {
		t.Fatalf("confirmation = %q", confirm.RawText)
	}
	if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderNeedsReview {
		t.Fatalf("the order moved to %s before the admin confirmed", cur.Status)
	}
	if a := s.press(confirm, en("ao.btn.adopt_yes", "number", strconv.Itoa(ours.Number))); a.Text != en("ao.ans.adopted") {
		t.Fatalf("adopt answered %q", a.Text)
	}
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	s.WaitTold(o.ID)
	if got.UpstreamNumber != int64(ours.Number) || len(got.Codes) != 1 {
		t.Fatalf("delivered with upstream %d and %d codes", got.UpstreamNumber, len(got.Codes))
	}
	s.WaitMessage(chat, "<code>"+got.Codes[0]+"</code>")
	if s.reviewAlertRaised(o.ID) {
		t.Fatal("the review alert was not cleared")
	}
	recorded := false
	for _, h := range got.History {
		recorded = recorded || (h.From == state.OrderNeedsReview && h.To == state.OrderPlaced &&
			h.Note == "admin "+itoa(admin)+": adopted upstream "+strconv.Itoa(ours.Number))
	}
	if !recorded {
		t.Fatalf("the adoption is not in the history: %+v", got.History)
	}
}

func TestAdminResolvesReviewByRefunding(t *testing.T) {
	s := newAdminShop(t, nil)
	o := s.inReview(func(sim *resellersim.Sim) { sim.CutAfterCreate(1) })
	s.Foreign[s.newest().Number] = true // refunded: the upstream order stays nobody's
	s.External = s.External.Add(s.newest().ChargedUSD)
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	s.press(view, en("ao.btn.refund"))
	if !strings.Contains(s.now(view).RawText, "It is not known whether an upstream order was created") {
		t.Fatalf("no warning on the confirmation: %q", s.now(view).RawText)
	}
	if a := s.press(view, en("ao.btn.refund_yes")); a.Text != en("ao.ans.refund_started") {
		t.Fatalf("refund answered %q", a.Text)
	}
	s.WaitStatus(o.ID, state.OrderRefunded)
	s.WaitTold(o.ID)
	if n := s.StarRefunds(o.ChargeID); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	if s.reviewAlertRaised(o.ID) {
		t.Fatal("the review alert was not cleared")
	}
}

func TestAdminPlacesAReviewedOrderAgain(t *testing.T) {
	s := newAdminShop(t, nil)
	// The create fails before the upstream executes it, but the two lookalike
	// orders make the outcome look ambiguous.
	o := s.inReview(func(sim *resellersim.Sim) { sim.FailNextOn("/gift-cards/order", 1, http.StatusBadGateway) })
	creates := s.Sim.CreateCount()
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	s.press(view, en("ao.btn.replace"))
	if !strings.Contains(s.now(view).RawText, "bought twice") {
		t.Fatalf("place-again confirmation = %q", s.now(view).RawText)
	}
	if a := s.press(view, en("ao.btn.replace_yes")); a.Text != en("ao.ans.replaced") {
		t.Fatalf("place again answered %q", a.Text)
	}
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	s.WaitTold(o.ID)
	if s.Sim.CreateCount() != creates+1 || s.Foreign[int(got.UpstreamNumber)] {
		t.Fatalf("creates %d -> %d, upstream %d", creates, s.Sim.CreateCount(), got.UpstreamNumber)
	}
	if s.reviewAlertRaised(o.ID) {
		t.Fatal("the review alert was not cleared")
	}
}

func TestAdminOrdersStaleButtonsChangeNothing(t *testing.T) {
	s := newAdminShop(t, nil)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(giftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	old := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	refund := button(t, old, en("ao.btn.refund"))
	list := s.command("orders", "", "Shop orders") // a new menu: the view's buttons are outdated
	q := s.Fake.Press(admin, old.MessageID, refund)
	if a := s.WaitAnswer(q); a.Text != en("err.outdated") {
		t.Fatalf("stale refund answered %q", a.Text)
	}
	s.Idle(s.b)
	if m := s.now(old); len(m.ReplyMarkup.Buttons()) != 0 {
		t.Fatal("the stale keyboard is still there")
	}
	if m := s.now(list); !strings.Contains(m.Text, "Shop orders") {
		t.Fatalf("the current screen changed: %q", m.Text)
	}
	if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderPlaced {
		t.Fatalf("a stale refund moved the order to %s", cur.Status)
	}
	// A confirmation forged onto the current menu without asking first
	// refunds nothing either.
	data := button(t, s.now(list), en("btn.orders"))
	forged := strings.Replace(data, ":aomy", ":aory", 1)
	q = s.Fake.Press(admin, list.MessageID, forged)
	s.WaitAnswer(q)
	s.Idle(s.b)
	if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderPlaced {
		t.Fatalf("a forged confirmation moved the order to %s", cur.Status)
	}
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(o.ID, state.OrderDelivered)
	s.WaitTold(o.ID)
}

// /order N shows what the buyer entered (here a player id, as their
// summary showed it) and the promo code with its discount, so an admin can
// check a "wrong account" complaint.
func TestAdminOrderShowsWhatTheBuyerEnteredAndThePromoCode(t *testing.T) {
	s := newAdminShop(t, nil)
	q := shoptest.TopUp("5123456789")
	q.For, q.UpstreamUSD = "Player ID: 5123456789", decimal.RequireFromString("0.99")
	q.PromoCode, q.DiscountUSD = "SAVE1", decimal.RequireFromString("0.10")
	o := s.finished(q, state.PayStars, state.OrderDelivered)
	view := s.command("order", itoa(o.ID), "Order #"+itoa(o.ID)+"</b>")
	for _, want := range []string{"Entered by the buyer: Player ID: 5123456789", "Promo code SAVE1: −$0.10"} {
		if !strings.Contains(view.Text, want) {
			t.Fatalf("no %q in:\n%s", want, view.Text)
		}
	}
	golden.Check(t, "adminorders/order_entered_promo", stable(renderMessage(view)))
}

// Redis loses writes while an admin has an order open (a restore; on a
// Cluster, only the orders' shard): the order's number goes to the next
// payment. The admin's confirmation, still on screen, names the purchase it
// showed: confirming it refunds nothing, and says why.
func TestAdminActionOnANumberReissuedAfterALossChangesNothing(t *testing.T) {
	s := newAdminShop(t, nil)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	ctx := context.Background()
	restore := s.Rdb.Snapshot(t) // the backup
	first := s.Paid(giftCards(1), state.PayStars)
	placed := s.WaitStatus(first.ID, state.OrderPlaced)
	view := s.command("order", itoa(first.ID), "Order #"+itoa(first.ID)+"</b>")
	s.press(view, en("ao.btn.refund"))
	confirm := s.now(view)
	// The admin's conversation survives (another shard); the orders do not.
	keys, err := s.Rdb.Client.Keys(ctx, s.Rdb.Prefix+"*conv:"+itoa(admin)).Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("the admin's conversation key: %v %v", keys, err)
	}
	convs := map[string]map[string]string{}
	for _, k := range keys {
		convs[k] = s.Rdb.Client.HGetAll(ctx, k).Val()
	}
	restore()
	for k, v := range convs {
		if err := s.Rdb.Client.HSet(ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	second := s.Paid(giftCards(2), state.PayStars)
	if second.ID != first.ID {
		t.Fatalf("the restored store gave number %d, not %d again", second.ID, first.ID)
	}
	s.WaitStatus(second.ID, state.OrderPlaced)
	answer := s.WaitAnswer(s.Fake.Press(admin, view.MessageID, button(t, confirm, en("ao.btn.refund_yes"))))
	if answer.Text != en("ao.ans.replaced_order") {
		t.Fatalf("confirming a refund of a purchase the store lost answered %q", answer.Text)
	}
	if cur, _ := s.Orders.Get(ctx, second.ID); cur.Status != state.OrderPlaced || s.StarRefunds(second.ChargeID) != 0 {
		t.Fatalf("the other purchase under the number is %s, refunds %d", cur.Status, s.StarRefunds(second.ChargeID))
	}
	// The lost purchase's upstream order is the admin's to sort out; the
	// upstream gives up on the other one later.
	s.Foreign[int(placed.UpstreamNumber)] = true
	s.External = s.External.Add(placed.ChargedUSD)
	cur, _ := s.Orders.Get(ctx, second.ID)
	if err := s.Sim.FailOrder(int(cur.UpstreamNumber), "timeout"); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(second.ID, state.OrderRefunded)
}
