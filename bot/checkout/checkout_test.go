package checkout_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

const payAdmin = int64(9001)

const chat = bottest.Chat

var button = bottest.Button

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// payShop is a running bot with the product lines and payments over the
// upstream simulator.
type payShop struct {
	*bottest.Harness
	b      *storefront.Shop
	pay    *checkout.Checkout
	sim    *resellersim.Sim
	client *reseller.Client
	// stop stops b; again builds and runs another bot with the same
	// options over journal j (a restarted process), and makes it s's.
	stop  func() time.Duration
	again func(j *state.Journal)
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
func newPayShopWith(t *testing.T, stars, wallet bool, mod func(*storefront.Options), pmod func(*checkout.Options)) *payShop {
	t.Helper()
	return newPayShopBefore(t, stars, wallet, mod, pmod, nil)
}

// newPayShopBefore is newPayShopWith that also runs before on the bot
// before it starts (to put its API on a fake pace: that must not change
// under running goroutines).
func newPayShopBefore(t *testing.T, stars, wallet bool, mod func(*storefront.Options), pmod func(*checkout.Options), before func(*storefront.Shop)) *payShop {
	t.Helper()
	h := bottest.New(t)
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	popts := checkout.Options{Stars: stars, Wallet: wallet, Upstream: client}
	if pmod != nil {
		pmod(&popts)
	}
	var journal *state.Journal // set by again
	opts := func(o *storefront.Options) {
		o.Admins = []int64{payAdmin}
		if mod != nil {
			mod(o)
		}
		if o.Reseller == upstreamHere {
			o.Reseller = client
		}
		if o.Now == nil {
			// Charges are dated in whole seconds: a shop clock a second
			// behind Telegram's dates a charge paid right after the start
			// after the store's epoch, as in life, where the store is
			// older than the second a buyer pays in.
			o.Now = func() time.Time { return time.Now().Add(-time.Second) }
		}
		o.Checkout = &popts
		if journal != nil {
			o.Journal = journal
		}
	}
	b := h.NewBot(opts)
	pay := b.Checkout
	sh := &shop.Shop{
		Catalog: catalog.New(client, work.NewCache(h.Rdb.Client, h.Rdb.Prefix), time.Minute),
		Pricing: shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: stars, ShowUSD: wallet},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(h.Rdb.Client, h.Rdb.Prefix)},
		Promos:  catalog.Promos{Store: b.Promos},
		Limiter: redisstore.NewLimiter(h.Rdb.Client, h.Rdb.Prefix, 10, time.Minute),
	}
	lines.Register(b.Engine, sh)
	if before != nil {
		before(b)
	}
	ps := &payShop{Harness: h, b: b, pay: pay, sim: sim, client: client, stop: h.Run(b)}
	h.Listening() // set up: polling starts after the commands are registered
	ps.again = func(j *state.Journal) {
		journal = j
		b := h.NewBot(opts)
		sh := *sh
		sh.Promos = catalog.Promos{Store: b.Promos}
		lines.Register(b.Engine, &sh)
		ps.b, ps.pay, ps.stop = b, b.Checkout, h.Run(b)
	}
	return ps
}

// quote stores a live quote of the buyer for n Apple 10 USD cards at the
// simulator's current price.
func (s *payShop) quote(n int) *state.Quote {
	s.T.Helper()
	offers, err := s.client.GiftCardOffers(context.Background(), simcatalog.DemoGiftCategory)
	if err != nil {
		s.T.Fatal(err)
	}
	var price decimal.Decimal
	for _, o := range offers.Offers {
		if o.CardID == simcatalog.DemoGiftCard {
			price = o.PriceUSD.Decimal
		}
	}
	p := shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013")}
	q := &state.Quote{
		Line: "giftcards", Item: simcatalog.DemoGiftCard, Category: simcatalog.DemoGiftCategory,
		ItemName: "Apple Gift Card 10 USD", Quantity: n, UpstreamUSD: price.Mul(decimal.NewFromInt(int64(n))),
		ChatID: chat, UserID: chat, Created: time.Now(), Expires: time.Now().Add(15 * time.Minute),
	}
	q.ShopUSD = p.ShopUSD(q.Line, q.UpstreamUSD)
	q.Stars = p.Stars(q.ShopUSD)
	if err := s.pay.Quotes.Save(context.Background(), q); err != nil {
		s.T.Fatal(err)
	}
	return q
}

func (s *payShop) env() *flows.Env {
	return &flows.Env{Lang: locales.En, Now: time.Now(), User: flows.User{ID: chat}}
}

// checkout hands q to payments the way the confirmation step does.
func (s *payShop) checkout(q *state.Quote) *flows.Reply {
	s.T.Helper()
	r, err := s.pay.Pay(context.Background(), s.env(), &flows.Session{}, q)
	if err != nil {
		s.T.Fatal(err)
	}
	return r
}

// invoice returns the last invoice message in the chat.
func (s *payShop) invoice() types.Message {
	s.T.Helper()
	ms := s.Fake.MessagesIn(chat)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Invoice != nil {
			return ms[i]
		}
	}
	s.T.Fatal("no invoice in the chat")
	return types.Message{}
}

func (s *payShop) payInvoice(opts botapitest.PayOptions) botapitest.PayResult {
	s.T.Helper()
	res, err := s.Fake.Pay(context.Background(), chat, s.invoice().MessageID, opts)
	if err != nil {
		s.T.Fatal(err)
	}
	return res
}

// order waits for the quote's order.
func (s *payShop) order(quoteID string) *state.Order {
	s.T.Helper()
	var o *state.Order
	var err error
	if s.Until(func() bool {
		o, err = s.pay.Orders.ByQuote(context.Background(), quoteID)
		return !errors.Is(err, state.ErrOrderNotFound)
	}) {
		if err != nil {
			s.T.Fatal(err)
		}
		return o
	}
	s.T.Fatalf("no order for quote %s", quoteID)
	return nil
}

func (s *payShop) noOrder(quoteID string) {
	s.T.Helper()
	s.Idle(s.b)
	if o, err := s.pay.Orders.ByQuote(context.Background(), quoteID); err == nil {
		s.T.Fatalf("quote %s has order %d", quoteID, o.ID)
	}
}

// scheduled waits for the order's fulfilment job: payments store the order,
// then schedule it, so a reader may see the order a moment before its job.
func (s *payShop) scheduled(o *state.Order) {
	s.T.Helper()
	var err error
	if !s.UntilWithin(5*time.Second, func() bool {
		var ok bool
		_, ok, err = s.pay.Schedule.Due(context.Background(), "order:"+itoa(o.ID))
		return ok || err != nil
	}) {
		s.T.Fatalf("order %d is not scheduled for fulfilment", o.ID)
	}
	if err != nil {
		s.T.Fatalf("read the job of order %d: %v", o.ID, err)
	}
}

// texts returns the texts of the bot's messages in chat c containing sub.
func (s *payShop) texts(c int64, sub string) []string {
	var out []string
	for _, m := range s.Fake.MessagesIn(c) {
		if strings.Contains(m.Text, sub) {
			out = append(out, m.Text)
		}
	}
	return out
}

// sweep runs the Stars sweep, waiting out the run the bot makes at start.
func (s *payShop) sweep() int {
	s.T.Helper()
	var n int
	var err error
	if !s.Until(func() bool { n, err = s.pay.Sweep(context.Background()); return !errors.Is(err, checkout.ErrSweepBusy) }) {
		s.T.Fatal("the sweep stayed busy")
	}
	if err != nil {
		s.T.Fatal(err)
	}
	return n
}

func TestStarsPurchaseFromGiftCardsToScheduledOrder(t *testing.T) {
	s := newPayShop(t, true, false)
	s.Fake.SendCommand(chat, "giftcards", "")
	s.Wait("sendMessage", 1)
	s.Idle(s.b)
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	s.Tap(s.b, "Apple Gift Card 10 USD")
	s.Say(s.b, "2")
	s.Tap(s.b, locales.T(locales.En, "btn.pay"))
	inv := s.Wait("sendInvoice", 1)[0]
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
	if err := json.Unmarshal(o.Item, &item); err != nil || item.ID != qid || item.Quantity != 2 || item.Item != simcatalog.DemoGiftCard {
		t.Fatalf("order item %s: %v", o.Item, err)
	}
	s.scheduled(o)
	s.Idle(s.b)
	if got := s.texts(chat, "Payment received"); len(got) != 1 || !strings.Contains(got[0], "#"+itoa(o.ID)) {
		t.Fatalf("buyer was told %q", got)
	}
}

func TestDoubleTapOnPaySendsOneInvoice(t *testing.T) {
	s := newPayShop(t, true, false)
	s.Fake.SendCommand(chat, "stars", "")
	s.Wait("sendMessage", 1)
	s.Idle(s.b)
	s.Say(s.b, "@durov")
	s.Tap(s.b, "500")
	m := s.Menu()
	data := button(t, m, locales.T(locales.En, "btn.pay"))
	q1 := s.Fake.Press(chat, m.MessageID, data)
	q2 := s.Fake.Press(chat, m.MessageID, data)
	a1, a2 := s.WaitAnswer(q1), s.WaitAnswer(q2)
	s.Idle(s.b)
	if n := len(s.Fake.CallsFor("sendInvoice")); n != 1 {
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
	s.Idle(s.b)
	if got, err := s.pay.Orders.ByCharge(context.Background(), res.ChargeID); err != nil || got.ID != o.ID {
		t.Fatalf("by charge: %v %v", got, err)
	}
	if n, _ := s.pay.Orders.CountByUser(context.Background(), chat); n != 1 {
		t.Fatalf("%d orders", n)
	}
	if got := s.texts(chat, "Payment received"); len(got) != 1 {
		t.Fatalf("buyer told %d times", len(got))
	}
	if s.Fake.Refunded(res.ChargeID) {
		t.Fatal("the only charge was refunded")
	}
}

func TestSecondChargeForPaidQuoteIsRefunded(t *testing.T) {
	s := newPayShop(t, true, false)
	q := s.quote(1)
	s.checkout(q)
	first := s.payInvoice(botapitest.PayOptions{})
	o := s.order(q.ID)
	second := s.Fake.PushSuccessfulPayment(chat, "q:"+q.ID, q.Stars, "")
	if !s.Until(func() bool { return s.Fake.Refunded(second) }) {
		t.Fatal("second charge not refunded")
	}
	// The same second charge arrives again: refunded once, told once.
	s.Fake.PushSuccessfulPayment(chat, "q:"+q.ID, q.Stars, second)
	s.Idle(s.b)
	if s.Fake.Refunded(first.ChargeID) {
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
			s.sim.SetPrice(simcatalog.DemoGiftCard, decimal.RequireFromString("11.5"))
		}, "pay.refuse_price"},
		{"no stock", func(s *payShop, q *state.Quote) {
			s.sim.SetStock(simcatalog.DemoGiftCard, 1)
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
	if o.PayMethod != state.PayWallet || o.ChargeID != checkout.WalletRef(q.ID) || o.Stars != 0 || !o.ShopUSD.Equal(q.ShopUSD) {
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
	s.Fake.SendCommand(chat, "wallet", "")
	m := s.Wait("sendMessage", 1)[0].String("text")
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
	if len(s.Fake.CallsFor("sendInvoice")) != 0 {
		t.Fatal("an invoice before the buyer chose")
	}
}

func TestSweepFindsLostPayment(t *testing.T) {
	s := newPayShop(t, true, false)
	s.startedSweep() // the start's sweep must not take the test's charge
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
	// Paid when the charge was, by Telegram's date, not when the sweep
	// made the order (the journal's proofs judge by it).
	dated := false
	for _, tx := range s.Fake.StarTransactions() {
		if tx.ID == res.ChargeID {
			dated = o.PaidAt.Unix() == tx.Date
		}
	}
	if !dated {
		t.Fatalf("order paid at %v, not at its charge's date", o.PaidAt)
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
	s.startedSweep() // the start's sweep must not take the test's charge
	ctx := context.Background()
	q := s.quote(1)
	s.checkout(q)
	res := s.payInvoice(botapitest.PayOptions{LoseUpdate: true})
	if err := s.Rdb.Client.Del(ctx, s.Rdb.Prefix+"quote:"+q.ID).Err(); err != nil {
		t.Fatal(err)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	if !s.Fake.Refunded(res.ChargeID) {
		t.Fatal("not refunded")
	}
	s.noOrder(q.ID)
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
}

func TestBothMethodsChoiceLeadsToAnInvoiceOrTheWallet(t *testing.T) {
	s := newPayShop(t, true, true)
	if cmds := s.Fake.MyCommands(botapitest.CommandScope{Type: "default"}); !hasCommand(cmds, "wallet") {
		t.Fatalf("/wallet not in the command menu: %+v", cmds)
	}
	s.Fake.SendCommand(chat, "stars", "")
	s.Wait("sendMessage", 1)
	s.Idle(s.b)
	s.Say(s.b, "@durov")
	s.Tap(s.b, "500")
	s.Tap(s.b, locales.T(locales.En, "btn.pay"))
	m := s.Menu()
	if !strings.Contains(m.Text, "How would you like to pay?") {
		t.Fatalf("choice screen = %q", m.Text)
	}
	// The wallet is empty: a polite refusal, nothing charged.
	wallet := locales.T(locales.En, "btn.pay_wallet", "balance", locales.Money(locales.En, decimal.Zero))
	if a := s.WaitAnswer(s.Fake.Press(chat, m.MessageID, button(t, m, wallet))); !strings.Contains(a.Text, "Not enough money") {
		t.Fatalf("empty wallet answered %q", a.Text)
	}
	s.Idle(s.b)
	for _, b := range m.ReplyMarkup.Buttons() {
		if strings.HasPrefix(b.Text, "⭐") {
			s.WaitAnswer(s.Fake.Press(chat, m.MessageID, b.CallbackData))
		}
	}
	s.Idle(s.b)
	if n := len(s.Fake.CallsFor("sendInvoice")); n != 1 {
		t.Fatalf("%d invoices", n)
	}
	res := s.payInvoice(botapitest.PayOptions{})
	if res.Declined {
		t.Fatalf("declined: %q", res.ErrorMessage)
	}
	s.order(strings.TrimPrefix(res.Payload, "q:"))
}

func hasCommand(cmds []types.BotCommand, name string) bool {
	for _, c := range cmds {
		if c.Command == name {
			return true
		}
	}
	return false
}

func TestSweepFinishesWalletPaymentCutBetweenDebitAndOrder(t *testing.T) {
	s := newPayShop(t, false, true)
	s.startedSweep() // with the wallet on it reads the Star transactions too (top-ups)
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(100), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(1)
	// What a process that died right after the debit leaves behind.
	began := time.Now().Add(-2 * time.Minute)
	if err := work.NewPayments(s.Rdb.Client, s.Rdb.Prefix).AddWalletPending(ctx, chat, q.ID, began); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pay.Wallets.Debit(ctx, chat, q.ShopUSD, checkout.WalletRef(q.ID), "order"); err != nil {
		t.Fatal(err)
	}
	s.noOrder(q.ID)
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	o := s.order(q.ID)
	if o.PaidAt.UnixMilli() != began.UnixMilli() {
		t.Fatalf("order paid at %v, the payment began at %v", o.PaidAt, began)
	}
	s.scheduled(o)
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
	want := decimal.NewFromInt(100).Sub(q.ShopUSD)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(want) {
		t.Fatalf("balance %s, want %s", bal, want)
	}
	s.Idle(s.b)
	if len(s.texts(chat, "Paid from your wallet")) != 1 {
		t.Fatal("buyer not told once")
	}
}
