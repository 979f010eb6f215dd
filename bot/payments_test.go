package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/bot"
	"shopbot/bot/botapitest"
	"shopbot/bot/catalog"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

const payAdmin = int64(9001)

// payShop is a running bot with the product lines and payments over the
// upstream simulator.
type payShop struct {
	*harness
	b      *bot.Bot
	pay    *bot.Payments
	sim    *resellersim.Sim
	client *reseller.Client
}

func newPayShop(t *testing.T, stars, wallet bool) *payShop {
	t.Helper()
	return newPayShopWith(t, stars, wallet, nil, nil)
}

// upstreamHere, set as Options.Reseller by a newPayShopWith mod, stands
// for the shop's own simulator client (made inside newPayShopWith).
var upstreamHere = new(reseller.Client)

// newPayShopWith is newPayShop with the bot's and the payments' options
// adjusted by mod and pmod (either may be nil).
func newPayShopWith(t *testing.T, stars, wallet bool, mod func(*bot.Options), pmod func(*bot.PaymentOptions)) *payShop {
	t.Helper()
	h := newHarness(t)
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	b := h.newBot(func(o *bot.Options) {
		o.Admins = []int64{payAdmin}
		if mod != nil {
			mod(o)
		}
		if o.Reseller == upstreamHere {
			o.Reseller = client
		}
	})
	popts := bot.PaymentOptions{Stars: stars, Wallet: wallet, Upstream: client}
	if pmod != nil {
		pmod(&popts)
	}
	pay := bot.NewPayments(popts)
	shop := &flows.Shop{
		Catalog: catalog.New(client, state.NewCache(h.rdb.Client, h.rdb.Prefix), time.Minute),
		Pricing: flows.Pricing{Markup: flows.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: stars, ShowUSD: wallet},
		Quotes:  catalog.Quotes{Store: state.NewQuotes(h.rdb.Client, h.rdb.Prefix)},
		Limiter: state.NewLimiter(h.rdb.Client, h.rdb.Prefix, 10, time.Minute),
	}
	shop.Register(b.Engine)
	b.UsePayments(pay)
	h.run(b)
	h.wait("getUpdates", 1) // set up: polling starts after the commands are registered
	return &payShop{harness: h, b: b, pay: pay, sim: sim, client: client}
}

// quote stores a live quote of the buyer for n Apple 10 USD cards at the
// simulator's current price.
func (s *payShop) quote(n int) *state.Quote {
	s.t.Helper()
	offers, err := s.client.GiftCardOffers(context.Background(), resellersim.DemoGiftCategory)
	if err != nil {
		s.t.Fatal(err)
	}
	var price decimal.Decimal
	for _, o := range offers.Offers {
		if o.CardID == resellersim.DemoGiftCard {
			price = o.PriceUSD.Decimal
		}
	}
	p := flows.Pricing{Markup: flows.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013")}
	q := &state.Quote{
		Line: "giftcards", Item: resellersim.DemoGiftCard, Category: resellersim.DemoGiftCategory,
		ItemName: "Apple Gift Card 10 USD", Quantity: n, UpstreamUSD: price.Mul(decimal.NewFromInt(int64(n))),
		ChatID: chat, UserID: chat, Created: time.Now(), Expires: time.Now().Add(15 * time.Minute),
	}
	q.ShopUSD = p.ShopUSD(q.Line, q.UpstreamUSD)
	q.Stars = p.Stars(q.ShopUSD)
	if err := s.pay.Quotes.Save(context.Background(), q); err != nil {
		s.t.Fatal(err)
	}
	return q
}

func (s *payShop) env() *flows.Env {
	return &flows.Env{Lang: locales.En, Now: time.Now(), User: flows.User{ID: chat}}
}

// checkout hands q to payments the way the confirmation step does.
func (s *payShop) checkout(q *state.Quote) *flows.Reply {
	s.t.Helper()
	r, err := s.pay.Pay(context.Background(), s.env(), &flows.Session{}, q)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// invoice returns the last invoice message in the chat.
func (s *payShop) invoice() botapitest.Message {
	s.t.Helper()
	ms := s.fake.MessagesIn(chat)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Invoice != nil {
			return ms[i]
		}
	}
	s.t.Fatal("no invoice in the chat")
	return botapitest.Message{}
}

func (s *payShop) payInvoice(opts botapitest.PayOptions) botapitest.PayResult {
	s.t.Helper()
	res, err := s.fake.Pay(context.Background(), chat, s.invoice().MessageID, opts)
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// order waits for the quote's order.
func (s *payShop) order(quoteID string) *state.Order {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		o, err := s.pay.Orders.ByQuote(context.Background(), quoteID)
		if err == nil {
			return o
		}
		if !errors.Is(err, state.ErrOrderNotFound) {
			s.t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.t.Fatalf("no order for quote %s", quoteID)
	return nil
}

func (s *payShop) noOrder(quoteID string) {
	s.t.Helper()
	s.idle(s.b)
	if o, err := s.pay.Orders.ByQuote(context.Background(), quoteID); err == nil {
		s.t.Fatalf("quote %s has order %d", quoteID, o.ID)
	}
}

// scheduled waits for the order's fulfilment job: payments store the order,
// then schedule it, so a reader may see the order a moment before its job.
func (s *payShop) scheduled(o *state.Order) {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, ok, err := s.pay.Schedule.Due(context.Background(), "order:"+itoa(o.ID))
		if err != nil {
			s.t.Fatalf("read the job of order %d: %v", o.ID, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("order %d is not scheduled for fulfilment", o.ID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// texts returns the texts of the bot's messages in chat c containing sub.
func (s *payShop) texts(c int64, sub string) []string {
	var out []string
	for _, m := range s.fake.MessagesIn(c) {
		if strings.Contains(m.Text, sub) {
			out = append(out, m.Text)
		}
	}
	return out
}

// sweep runs the Stars sweep, waiting out the run the bot makes at start.
func (s *payShop) sweep() int {
	s.t.Helper()
	for range 200 {
		n, err := s.pay.Sweep(context.Background())
		if errors.Is(err, bot.ErrSweepBusy) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return n
	}
	s.t.Fatal("the sweep stayed busy")
	return 0
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }

func TestStarsPurchaseFromGiftCardsToScheduledOrder(t *testing.T) {
	s := newPayShop(t, true, false)
	s.fake.SendCommand(chat, "giftcards", "")
	s.wait("sendMessage", 1)
	s.idle(s.b)
	s.tap(s.b, "Apple")
	s.tap(s.b, "US")
	s.tap(s.b, "Apple Gift Card 10 USD")
	s.say(s.b, "2")
	s.tap(s.b, locales.T(locales.En, "btn.pay"))
	inv := s.wait("sendInvoice", 1)[0]
	if inv.String("currency") != "XTR" || inv.String("provider_token") != "" || !strings.HasPrefix(inv.String("payload"), "q:") {
		t.Fatalf("invoice currency %q token %q payload %q", inv.String("currency"), inv.String("provider_token"), inv.String("payload"))
	}
	qid := strings.TrimPrefix(inv.String("payload"), "q:")
	q, err := s.pay.Quotes.Load(context.Background(), qid)
	if err != nil {
		t.Fatal(err)
	}
	res := s.payInvoice(botapitest.PayOptions{})
	if res.Declined || res.TotalAmount != q.Stars {
		t.Fatalf("payment declined=%v (%q), amount %d of %d", res.Declined, res.ErrorMessage, res.TotalAmount, q.Stars)
	}
	o := s.order(qid)
	if o.Status != state.OrderPaid || o.ChargeID != res.ChargeID || o.PayMethod != state.PayStars || o.Stars != q.Stars ||
		o.Line != "giftcards" || o.UserID != chat || o.ChatID != chat || o.Lang != "en" ||
		!o.UpstreamUSD.Equal(q.UpstreamUSD) || !o.ShopUSD.Equal(q.ShopUSD) {
		t.Fatalf("order %+v", o)
	}
	var item state.Quote
	if err := json.Unmarshal(o.Item, &item); err != nil || item.ID != qid || item.Quantity != 2 || item.Item != resellersim.DemoGiftCard {
		t.Fatalf("order item %s: %v", o.Item, err)
	}
	s.scheduled(o)
	s.idle(s.b)
	if got := s.texts(chat, "Payment received"); len(got) != 1 || !strings.Contains(got[0], "#"+itoa(o.ID)) {
		t.Fatalf("buyer was told %q", got)
	}
}

func TestDoubleTapOnPaySendsOneInvoice(t *testing.T) {
	s := newPayShop(t, true, false)
	s.fake.SendCommand(chat, "stars", "")
	s.wait("sendMessage", 1)
	s.idle(s.b)
	s.say(s.b, "@durov")
	s.tap(s.b, "500")
	m := s.menu()
	data := button(t, m, locales.T(locales.En, "btn.pay"))
	q1 := s.fake.Press(chat, m.MessageID, data)
	q2 := s.fake.Press(chat, m.MessageID, data)
	a1, a2 := s.waitAnswer(q1), s.waitAnswer(q2)
	s.idle(s.b)
	if n := len(s.fake.CallsFor("sendInvoice")); n != 1 {
		t.Fatalf("%d invoices for one quote", n)
	}
	if a1.Text != locales.T(locales.En, "pay.invoice_sent") || a2.Text != locales.T(locales.En, "pay.invoice_again") {
		t.Fatalf("answers %q, %q", a1.Text, a2.Text)
	}
	// The invoice pays a Stars order end to end as well.
	res := s.payInvoice(botapitest.PayOptions{})
	if res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	o := s.order(strings.TrimPrefix(res.Payload, "q:"))
	if o.Line != "stars" {
		t.Fatalf("order line %q", o.Line)
	}
}

func TestDuplicateSuccessfulPaymentMakesOneOrder(t *testing.T) {
	s := newPayShop(t, true, false)
	q := s.quote(1)
	s.checkout(q)
	res := s.payInvoice(botapitest.PayOptions{Duplicate: true})
	if len(res.UpdateIDs) != 2 {
		t.Fatalf("pushed %d updates", len(res.UpdateIDs))
	}
	o := s.order(q.ID)
	s.idle(s.b)
	if got, err := s.pay.Orders.ByCharge(context.Background(), res.ChargeID); err != nil || got.ID != o.ID {
		t.Fatalf("by charge: %v %v", got, err)
	}
	if n, _ := s.pay.Orders.CountByUser(context.Background(), chat); n != 1 {
		t.Fatalf("%d orders", n)
	}
	if got := s.texts(chat, "Payment received"); len(got) != 1 {
		t.Fatalf("buyer told %d times", len(got))
	}
	if s.fake.Refunded(res.ChargeID) {
		t.Fatal("the only charge was refunded")
	}
}

func TestSecondChargeForPaidQuoteIsRefunded(t *testing.T) {
	s := newPayShop(t, true, false)
	q := s.quote(1)
	s.checkout(q)
	first := s.payInvoice(botapitest.PayOptions{})
	o := s.order(q.ID)
	second := s.fake.PushSuccessfulPayment(chat, "q:"+q.ID, q.Stars, "")
	deadline := time.Now().Add(10 * time.Second)
	for !s.fake.Refunded(second) {
		if time.Now().After(deadline) {
			t.Fatal("second charge not refunded")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The same second charge arrives again: refunded once, told once.
	s.fake.PushSuccessfulPayment(chat, "q:"+q.ID, q.Stars, second)
	s.idle(s.b)
	if s.fake.Refunded(first.ChargeID) {
		t.Fatal("the first charge was refunded")
	}
	if got, _ := s.pay.Orders.ByQuote(context.Background(), q.ID); got.ID != o.ID || got.ChargeID != first.ChargeID {
		t.Fatalf("order changed: %+v", got)
	}
	if got := s.texts(chat, "second payment"); len(got) != 1 {
		t.Fatalf("buyer told of the refund %d times", len(got))
	}
	if _, err := s.pay.Orders.ByCharge(context.Background(), second); !errors.Is(err, state.ErrOrderNotFound) {
		t.Fatalf("second charge has an order: %v", err)
	}
}

func TestPreCheckoutRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(s *payShop, q *state.Quote)
		key   string
	}{
		{"expired quote", func(s *payShop, q *state.Quote) {
			q.Expires = time.Now().Add(-time.Second)
			if err := s.pay.Quotes.Save(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}, "pay.refuse_expired"},
		{"changed price", func(s *payShop, q *state.Quote) {
			s.sim.SetPrice(resellersim.DemoGiftCard, decimal.RequireFromString("11.5"))
		}, "pay.refuse_price"},
		{"no stock", func(s *payShop, q *state.Quote) {
			s.sim.SetStock(resellersim.DemoGiftCard, 1)
		}, "pay.refuse_stock"},
		{"low upstream balance", func(s *payShop, q *state.Quote) {
			s.sim.SetBalance(decimal.RequireFromString("1"))
		}, "pay.refuse_unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPayShop(t, true, false)
			q := s.quote(2)
			s.checkout(q)
			tc.setup(s, q)
			res := s.payInvoice(botapitest.PayOptions{})
			if !res.Declined || res.ErrorMessage != locales.T(locales.En, tc.key) {
				t.Fatalf("declined=%v %q, want %q", res.Declined, res.ErrorMessage, locales.T(locales.En, tc.key))
			}
			s.noOrder(q.ID)
			alerts := s.texts(payAdmin, "could not pay")
			if want := tc.key == "pay.refuse_unavailable"; want != (len(alerts) == 1) {
				t.Fatalf("payAdmin alerts: %q", alerts)
			}
		})
	}
}

func TestWalletPayDebitsAndCreatesOrder(t *testing.T) {
	s := newPayShop(t, false, true)
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(100), "payAdmin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(2)
	r := s.checkout(q)
	if r.Screen == nil || !strings.Contains(r.Screen.Text, "Paid from your wallet") {
		t.Fatalf("reply %+v", r)
	}
	o := s.order(q.ID)
	if o.PayMethod != state.PayWallet || o.ChargeID != bot.WalletRef(q.ID) || o.Stars != 0 || !o.ShopUSD.Equal(q.ShopUSD) {
		t.Fatalf("order %+v", o)
	}
	s.scheduled(o)
	want := decimal.NewFromInt(100).Sub(q.ShopUSD)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(want) {
		t.Fatalf("balance %s, want %s", bal, want)
	}
	// A second tap changes nothing.
	r = s.checkout(q)
	if r.Answer != locales.T(locales.En, "pay.already_paid", "order", o.ID) {
		t.Fatalf("second tap answered %q", r.Answer)
	}
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(want) {
		t.Fatalf("balance %s after a second tap, want %s", bal, want)
	}
	// /wallet shows the balance and the payment.
	s.fake.SendCommand(chat, "wallet", "")
	m := s.wait("sendMessage", 1)[0].String("text")
	if !strings.Contains(m, "Your wallet") || !strings.Contains(m, locales.T(locales.En, "wallet.kind_pay_order", "id", o.ID)) || !strings.Contains(m, locales.T(locales.En, "wallet.kind_credit")) {
		t.Fatalf("/wallet = %q", m)
	}
}

func TestWalletWithoutEnoughFundsChargesNothing(t *testing.T) {
	s := newPayShop(t, false, true)
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(1), "payAdmin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(2)
	r := s.checkout(q)
	if !r.Alert || !strings.Contains(r.Answer, "Not enough money") {
		t.Fatalf("reply %+v", r)
	}
	s.noOrder(q.ID)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(decimal.NewFromInt(1)) {
		t.Fatalf("balance %s", bal)
	}
}

func TestBothMethodsOfferAChoice(t *testing.T) {
	s := newPayShop(t, true, true)
	q := s.quote(1)
	r := s.checkout(q)
	if r.Screen == nil || len(r.Screen.Rows) < 2 || r.Screen.Rows[0][0].Arg != q.ID || r.Screen.Rows[1][0].Arg != q.ID {
		t.Fatalf("choice screen %+v", r.Screen)
	}
	if len(s.fake.CallsFor("sendInvoice")) != 0 {
		t.Fatal("an invoice before the buyer chose")
	}
}

func TestSweepFindsLostPayment(t *testing.T) {
	s := newPayShop(t, true, false)
	q := s.quote(1)
	s.checkout(q)
	res := s.payInvoice(botapitest.PayOptions{LoseUpdate: true})
	s.noOrder(q.ID)
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	o := s.order(q.ID)
	if o.ChargeID != res.ChargeID || o.Status != state.OrderPaid {
		t.Fatalf("order %+v", o)
	}
	s.scheduled(o)
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
	if len(s.texts(chat, "Payment received")) != 1 {
		t.Fatal("buyer not told once")
	}
}

func TestSweepRefundsLostPaymentWhoseQuoteIsGone(t *testing.T) {
	s := newPayShop(t, true, false)
	ctx := context.Background()
	q := s.quote(1)
	s.checkout(q)
	res := s.payInvoice(botapitest.PayOptions{LoseUpdate: true})
	if err := s.rdb.Client.Del(ctx, s.rdb.Prefix+"quote:"+q.ID).Err(); err != nil {
		t.Fatal(err)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	if !s.fake.Refunded(res.ChargeID) {
		t.Fatal("not refunded")
	}
	s.noOrder(q.ID)
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
}

func TestRepriceEveryLine(t *testing.T) {
	s := newPayShop(t, true, false)
	ctx := context.Background()
	app := itoa(resellersim.DemoStoreApp)
	for _, tc := range []struct {
		q    state.Quote
		item string // the simulator's id for SetPrice
	}{
		{state.Quote{Line: "giftcards", Item: resellersim.DemoGiftCard, Category: resellersim.DemoGiftCategory, Quantity: 3}, resellersim.DemoGiftCard},
		{state.Quote{Line: "keys", Item: resellersim.DemoGameKey, Category: resellersim.DemoGame, Quantity: 2}, resellersim.DemoGameKey},
		{state.Quote{Line: "stars", Item: "stars", Quantity: 500}, "stars"},
		{state.Quote{Line: "premium", Item: "3", Quantity: 1}, "premium-3"},
		{state.Quote{Line: "games", Item: resellersim.DemoTopUpOffer, Category: resellersim.DemoTopUpCategory, Quantity: 1}, resellersim.DemoTopUpOffer},
		{state.Quote{Line: "services", Item: resellersim.DemoManualOffer, Category: resellersim.DemoManualService, Quantity: 1}, resellersim.DemoManualOffer},
		{state.Quote{Line: "gifts", Item: itoa(resellersim.DemoStoreSub), Category: app, Fields: map[string]string{"region": "TR"}, Quantity: 1}, itoa(resellersim.DemoStoreSub) + ":TR"},
		{state.Quote{Line: "topup", Item: "USD", Fields: map[string]string{"currency": "USD", "amount": "12.50"}, Quantity: 1}, ""},
	} {
		t.Run(tc.q.Line, func(t *testing.T) {
			first, err := bot.Reprice(ctx, s.client, &tc.q)
			if err != nil || !first.UpstreamUSD.IsPositive() {
				t.Fatalf("reprice: %+v %v", first, err)
			}
			if tc.item == "" {
				if !first.UpstreamUSD.Equal(decimal.RequireFromString("12.5")) {
					t.Fatalf("USD top-up priced %s", first.UpstreamUSD)
				}
				return
			}
			if !s.sim.SetPrice(tc.item, decimal.RequireFromString("0.77")) {
				t.Fatalf("no item %s in the simulator", tc.item)
			}
			again, err := bot.Reprice(ctx, s.client, &tc.q)
			want := decimal.RequireFromString("0.77").Mul(decimal.NewFromInt(int64(tc.q.Quantity)))
			if err != nil || !again.UpstreamUSD.Equal(want) {
				t.Fatalf("after a price change: %+v %v, want %s", again, err, want)
			}
		})
	}
	if _, err := bot.Reprice(ctx, s.client, &state.Quote{Line: "giftcards", Item: "nope", Category: resellersim.DemoGiftCategory, Quantity: 1}); !reseller.IsNotFound(err) {
		t.Fatalf("a gone card: %v", err)
	}
}

func TestBothMethodsChoiceLeadsToAnInvoiceOrTheWallet(t *testing.T) {
	s := newPayShop(t, true, true)
	if cmds := s.fake.MyCommands(botapitest.CommandScope{Type: "default"}); !hasCommand(cmds, "wallet") {
		t.Fatalf("/wallet not in the command menu: %+v", cmds)
	}
	s.fake.SendCommand(chat, "stars", "")
	s.wait("sendMessage", 1)
	s.idle(s.b)
	s.say(s.b, "@durov")
	s.tap(s.b, "500")
	s.tap(s.b, locales.T(locales.En, "btn.pay"))
	m := s.menu()
	if !strings.Contains(m.Text, "How would you like to pay?") {
		t.Fatalf("choice screen = %q", m.Text)
	}
	// The wallet is empty: a polite refusal, nothing charged.
	wallet := locales.T(locales.En, "btn.pay_wallet", "balance", locales.Money(locales.En, decimal.Zero))
	if a := s.waitAnswer(s.fake.Press(chat, m.MessageID, button(t, m, wallet))); !strings.Contains(a.Text, "Not enough money") {
		t.Fatalf("empty wallet answered %q", a.Text)
	}
	s.idle(s.b)
	for _, b := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(b.Text, "⭐") {
			s.waitAnswer(s.fake.Press(chat, m.MessageID, b.CallbackData))
		}
	}
	s.idle(s.b)
	if n := len(s.fake.CallsFor("sendInvoice")); n != 1 {
		t.Fatalf("%d invoices", n)
	}
	res := s.payInvoice(botapitest.PayOptions{})
	if res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	s.order(strings.TrimPrefix(res.Payload, "q:"))
}

func hasCommand(cmds []botapitest.BotCommand, name string) bool {
	for _, c := range cmds {
		if c.Command == name {
			return true
		}
	}
	return false
}

func TestSweepFinishesWalletPaymentCutBetweenDebitAndOrder(t *testing.T) {
	s := newPayShop(t, false, true)
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(100), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(1)
	// What a process that died right after the debit leaves behind.
	s.rdb.Client.ZAdd(ctx, s.rdb.Prefix+"pay:wallet-pending", redis.Z{Score: float64(time.Now().Add(-2 * time.Minute).UnixMilli()), Member: itoa(chat) + ":" + q.ID})
	if _, err := s.pay.Wallets.Debit(ctx, chat, q.ShopUSD, bot.WalletRef(q.ID), "order"); err != nil {
		t.Fatal(err)
	}
	s.noOrder(q.ID)
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	o := s.order(q.ID)
	s.scheduled(o)
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
	want := decimal.NewFromInt(100).Sub(q.ShopUSD)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(want) {
		t.Fatalf("balance %s, want %s", bal, want)
	}
	s.idle(s.b)
	if len(s.texts(chat, "Paid from your wallet")) != 1 {
		t.Fatal("buyer not told once")
	}
}
