package fulfil_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

func TestHappyDeliveryPerLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		quote state.Quote
		want  string // in the buyer's message
	}{
		{"giftcards", giftCards(2), "<code>"},
		{"keys", state.Quote{Line: "keys", Category: simcatalog.DemoGame, Item: simcatalog.DemoGameKey, Quantity: 1}, "<code>"},
		{"stars", state.Quote{Line: "stars", Item: "stars", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 100}, "credited to the account"},
		{"premium", state.Quote{Line: "premium", Item: "3", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 1}, "Premium is now active"},
		{"topup", state.Quote{Line: "topup", Fields: map[string]string{"store_login": "gaben", "currency": "USD", "amount": "5"}, Quantity: 1}, "store account"},
		{"services", state.Quote{Line: "services", Category: simcatalog.DemoManualServiceNoChat, Item: simcatalog.DemoManualOfferNoChat,
			Fields: map[string]string{"trade_url": "https://steamcommunity.com/tradeoffer/new/?partner=1&token=x"}, Quantity: 1}, "service has been completed"},
		{"gifts", state.Quote{Line: "gifts", Category: strconv.Itoa(simcatalog.DemoStoreApp), Item: strconv.Itoa(simcatalog.DemoStoreSub),
			Fields: map[string]string{"region": "US", "invite_url": "https://s.team/p/abc-def/XYZ"}, Quantity: 1}, "gift has been sent"},
		{"games", state.Quote{Line: "games", Category: simcatalog.DemoTopUpCategory, Item: simcatalog.DemoTopUpOffer,
			Fields: map[string]string{"player_id": "5123456789"}, Quantity: 1}, "no code to enter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newShop(t)
			o := s.Paid(tc.quote, state.PayStars)
			s.Run(s.Worker(nil))
			got := s.WaitStatus(o.ID, state.OrderDelivered)
			m := s.WaitMessage(chat, tc.want)
			if tc.want == "<code>" {
				if len(got.Codes) == 0 || !strings.Contains(m.RawText, "<code>"+got.Codes[0]+"</code>") {
					t.Fatalf("codes %d, message %q", len(got.Codes), m.RawText)
				}
				if n := len(s.Fake.CallsFor("sendDocument")); n != 0 {
					t.Fatalf("%d documents for a short list of codes", n)
				}
			} else if len(got.Codes) != 0 {
				t.Fatalf("a %s order has codes", tc.name)
			}
			if tc.name == "services" { // a deadline is told at once
				s.WaitMessage(chat, "is being processed")
				s.WaitMessage(chat, "It will be done by")
			}
			if s.Creates.Load() != 1 {
				t.Fatalf("%d creates", s.Creates.Load())
			}
		})
	}
}

func TestManyCodesAlsoComeAsTxtFile(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	o := s.Paid(giftCards(12), state.PayWallet)
	s.Run(s.Worker(nil))
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	m := s.WaitMessage(chat, "attached file")
	if strings.Count(m.RawText, "<code>") != 12 {
		t.Fatalf("message has %d codes", strings.Count(m.RawText, "<code>"))
	}
	docs := s.Wait("sendDocument", 1)
	if docs[0].ErrorCode != 0 {
		t.Fatalf("sendDocument failed: %s", docs[0].Description)
	}
	var doc types.Message
	for _, msg := range s.Fake.MessagesIn(chat) {
		if msg.Document != nil {
			doc = msg
		}
	}
	if lines := strings.Split(strings.TrimSpace(string(doc.FileData)), "\n"); len(lines) != 12 || lines[0] != got.Codes[0] {
		t.Fatalf("file has %d lines", len(lines))
	}
}

func TestCreate429IsRetriedLater(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Sim.RateLimitNext(2, time.Second)
	o := s.Paid(giftCards(1), state.PayStars)
	s.Run(s.Worker(nil))
	s.WaitStatus(o.ID, state.OrderDelivered)
	if n := len(s.Sim.Orders()); n != 1 {
		t.Fatalf("%d upstream orders", n)
	}
}

func TestCreate5xxBeforeExecutionIsRetriedAfterGrace(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Sim.FailNextOn("/gift-cards/order", 1, http.StatusBadGateway)
	o := s.Paid(giftCards(1), state.PayStars)
	start := time.Now()
	s.Run(s.Worker(nil))
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	if time.Since(start) < s.Cfg.AnsweredGrace { // the server answered: the short grace
		t.Fatal("retried before the grace period")
	}
	if got.Attempts != 2 || len(s.Sim.Orders()) != 1 {
		t.Fatalf("attempts %d, upstream orders %d", got.Attempts, len(s.Sim.Orders()))
	}
}

func TestAmbiguousCreateThatWasCreatedIsAdopted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault func(*resellersim.Sim)
	}{
		{"connection cut", func(sim *resellersim.Sim) { sim.CutAfterCreate(1) }},
		{"5xx after execute", func(sim *resellersim.Sim) { sim.FailCreateAfterExecute(1, http.StatusInternalServerError) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newShop(t)
			tc.fault(s.Sim)
			o := s.Paid(giftCards(1), state.PayStars)
			s.Run(s.Worker(nil))
			got := s.WaitStatus(o.ID, state.OrderDelivered)
			if s.Sim.CreateCount() != 1 || got.Attempts != 1 {
				t.Fatalf("creates %d, attempts %d: bought twice", s.Sim.CreateCount(), got.Attempts)
			}
		})
	}
}

func TestPoll429And5xxAreRetried(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Complete, CompleteAfter: 300 * time.Millisecond})
	o := s.Paid(giftCards(1), state.PayStars)
	var once sync.Once
	s.Run(s.Worker(func(step string, id int64) error {
		if step == fulfil.FailpointPlaced {
			once.Do(func() {
				s.Sim.FailNextOn("/orders/", 2, http.StatusServiceUnavailable)
				s.Sim.RateLimitNext(1, time.Second)
			})
		}
		return nil
	}))
	s.WaitStatus(o.ID, state.OrderDelivered)
	if s.Polls.Load() < 4 {
		t.Fatalf("only %d polls", s.Polls.Load())
	}
}

// Two identical orders someone else placed just before ours, then our
// create's answer is cut: the placement slot makes the one above the
// attempt's watermark provably ours; the look-alikes stay unclaimed.
func TestLookAlikeOrdersBeforeACutCreateAreNotAdopted(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	ctx := context.Background()
	for range 2 {
		up, err := s.Client.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
		if err != nil {
			t.Fatal(err)
		}
		s.External = s.External.Add(up.ChargedUSD.Decimal)
		s.Foreign[int(up.Number)] = true
	}
	s.Sim.CutAfterCreate(1)
	s.Run(s.Worker(nil))
	s.WaitWatermark() // the shop runs, and has seen the upstream, when the buyer pays
	o := s.Paid(giftCards(1), state.PayStars)
	got := s.WaitDelivered(o.ID)
	if s.Foreign[int(got.UpstreamNumber)] || s.Sim.CreateCount() != 3 {
		t.Fatalf("adopted upstream %d (foreign: %v), creates %d", got.UpstreamNumber, s.Foreign, s.Sim.CreateCount())
	}
}

func TestUpstream400OnCreateRefunds(t *testing.T) {
	t.Parallel()
	t.Run("out of stock", func(t *testing.T) {
		t.Parallel()
		s := newShop(t)
		q := giftCards(1)
		q.Item = simcatalog.DemoGiftCardOutOfStock
		o := s.Paid(q, state.PayStars)
		s.Run(s.Worker(nil))
		s.WaitStatus(o.ID, state.OrderRefunded)
		if !s.Fake.Refunded(o.ChargeID) {
			t.Fatal("the charge was not refunded")
		}
		s.WaitMessage(chat, "could not be completed")
		s.WaitMessage(chat, "were refunded to your Telegram balance")
		s.WaitMessage(admin, "Order #"+strconv.FormatInt(o.ID, 10)+" (Apple Gift Card 10 USD) failed and was refunded: ")
	})
	t.Run("insufficient balance alerts admins", func(t *testing.T) {
		t.Parallel()
		s := newShop(t)
		s.Sim.SetBalance(decimal.NewFromInt(1))
		s.Start = decimal.NewFromInt(1)
		o := s.Paid(giftCards(1), state.PayWallet)
		s.Run(s.Worker(nil))
		s.WaitStatus(o.ID, state.OrderRefunded)
		s.WaitMessage(admin, "upstream balance is too low")
		s.WaitMessage(chat, "temporarily unavailable")
		if bal, _ := s.Wallets.Balance(context.Background(), chat); !bal.Equal(decimal.RequireFromString("12.5")) {
			t.Fatalf("wallet balance %s after refund", bal)
		}
	})
}

func TestFailedUpstreamIsRefundedOnceEvenAfterACrashMidRefund(t *testing.T) {
	t.Parallel()
	for _, method := range []string{state.PayStars, state.PayWallet} {
		t.Run(method, func(t *testing.T) {
			t.Parallel() // each waits out a crashed worker's lease: together
			s := newShop(t)
			s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
			o := s.Paid(giftCards(1), method)
			crashed := make(chan struct{})
			var once sync.Once
			stop := s.Run(s.Worker(func(step string, id int64) error {
				if step == fulfil.FailpointRefunded {
					once.Do(func() { close(crashed) })
					return errors.New("crash")
				}
				return nil
			}))
			select {
			case <-crashed:
			case <-time.After(10 * time.Second):
			}
			stop()
			if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderRefunding {
				t.Fatalf("after the crash the order is %s", cur.Status)
			}
			s.Run(s.Worker(nil))
			s.WaitStatus(o.ID, state.OrderRefunded)
			ctx := context.Background()
			switch method {
			case state.PayStars:
				if n := s.StarRefunds(o.ChargeID); n != 1 {
					t.Fatalf("%d refunds", n)
				}
			case state.PayWallet:
				entries, _ := s.Wallets.Ledger(ctx, chat, 0, 10)
				if len(entries) != 3 { // credit, debit, one refund
					t.Fatalf("ledger has %d entries", len(entries))
				}
				if bal, _ := s.Wallets.Balance(ctx, chat); !bal.Equal(decimal.RequireFromString("12.5")) {
					t.Fatalf("wallet balance %s", bal)
				}
			}
			s.WaitMessage(chat, "Order #"+strconv.FormatInt(o.ID, 10)+"</b>: ")
			s.WaitMessage(admin, "failed and was refunded")
			if n := s.CountMessages(admin, "failed and was refunded"); n != 1 {
				t.Fatalf("%d refund alerts for one order, want 1", n)
			}
		})
	}
}

// An order done at once is not announced as being processed: the
// payment's message said so, and a notice would hold the codes behind it
// (a chat takes about a message a second). One still not done PollMin
// after its claim is announced, once.
func TestProcessingNoticeOnlyForAnOrderNotDoneAtOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.PollMin, s.Cfg.PollFirst = 300*time.Millisecond, 20*time.Millisecond
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Complete, CompleteOnRead: 2})
	fast := s.Paid(giftCards(1), state.PayStars)
	s.Run(s.Worker(nil))
	s.WaitStatus(fast.ID, state.OrderDelivered)
	s.WaitTold(fast.ID)
	if n := s.CountMessages(chat, "is being processed"); n != 0 {
		t.Fatalf("an order done at its second read was announced %d times", n)
	}
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	slow := s.Paid(giftCards(1), state.PayStars)
	placed := s.WaitStatus(slow.ID, state.OrderPlaced)
	s.WaitMessage(chat, fmt.Sprintf("Order #%d</b>", slow.ID))
	polls := s.Polls.Load()
	if !s.Until(func() bool { return s.Polls.Load() >= polls+3 }) {
		t.Fatal("the worker stopped polling the order")
	}
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(slow.ID, state.OrderDelivered)
	if n := s.CountMessages(chat, "is being processed"); n != 1 {
		t.Fatalf("the slow order was announced %d times, want once", n)
	}
}

func TestOrderStuckInProcessingAlertsOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Cfg.StuckAfter = 200 * time.Millisecond
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(giftCards(1), state.PayStars)
	s.Run(s.Worker(nil))
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	// The alert names the upstream order once it is placed; on a busy
	// machine placing may take longer than StuckAfter, and the one alert
	// names the order's state instead. Either way: one alert.
	alert := fmt.Sprintf("⚠️ Order #%d ", o.ID)
	s.WaitMessage(admin, alert)
	// The worker checks again at each poll: three more polls and still one alert.
	polls := s.Polls.Load()
	if !s.Until(func() bool { return s.Polls.Load() >= polls+3 }) {
		t.Fatal("the worker stopped polling the order")
	}
	if n := s.CountMessages(admin, alert); n != 1 {
		t.Fatalf("%d stuck alerts", n)
	}
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(o.ID, state.OrderDelivered)
}

func TestBlockedBuyerGetsDeliveryAfterStart(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Fake.BlockChat(chat)
	o := s.Paid(giftCards(1), state.PayStars)
	b := s.Worker(nil)
	s.Run(b)
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	// The codes went to the blocked chat (refused) and the worker is done
	// with the order: it waits for /start.
	s.Wait("sendMessage", 1)
	if !s.Until(func() bool {
		_, due, err := s.Sched.Due(context.Background(), fulfil.OrderJob(o.ID))
		return err == nil && !due
	}) {
		t.Fatal("the worker kept the delivery job")
	}
	if cur, _ := s.Orders.Get(context.Background(), o.ID); !cur.DeliveredAt.IsZero() {
		t.Fatal("delivered to a buyer who blocked the bot")
	}
	s.Fake.UnblockChat(chat)
	s.Fake.SendCommand(chat, "start", "")
	m := s.WaitMessage(chat, "<code>"+got.Codes[0]+"</code>")
	s.WaitMessage(chat, "Welcome")
	if cur := s.WaitDelivered(o.ID); cur.DeliveredAt.IsZero() {
		t.Fatalf("delivery not recorded after %q", m.RawText)
	}
}

func TestRestartAtEachLifecycleStep(t *testing.T) {
	t.Parallel()
	steps := []struct {
		step string
		fail bool // the upstream order fails, so the refund steps run
	}{
		{fulfil.FailpointIntent, false}, {fulfil.FailpointCreated, false}, {fulfil.FailpointPlaced, false},
		{fulfil.FailpointCompleted, false}, {fulfil.FailpointRefunding, true}, {fulfil.FailpointRefunded, true},
	}
	for _, tc := range steps {
		t.Run(tc.step, func(t *testing.T) {
			t.Parallel() // each waits out a crashed worker's lease: together
			s := newShop(t)
			want := state.OrderDelivered
			if tc.fail {
				want = state.OrderRefunded
				s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
			}
			o := s.Paid(giftCards(1), state.PayStars)
			hit := make(chan struct{})
			var once sync.Once
			stop := s.Run(s.Worker(func(step string, id int64) error {
				if step != tc.step {
					return nil
				}
				once.Do(func() { close(hit) })
				return errors.New("crash")
			}))
			select {
			case <-hit:
			case <-time.After(10 * time.Second):
				t.Fatal("the failpoint was never reached")
			}
			stop()
			s.Run(s.Worker(nil))
			s.WaitStatus(o.ID, want)
			s.WaitTold(o.ID)
			if s.Sim.CreateCount() != 1 {
				t.Fatalf("%d creates: bought twice", s.Sim.CreateCount())
			}
		})
	}
}

func TestUnscheduledPaidOrderIsResumedOnStart(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	o := s.Paid(giftCards(1), state.PayStars)
	if err := s.Sched.Remove(context.Background(), fulfil.OrderJob(o.ID)); err != nil {
		t.Fatal(err)
	}
	s.Run(s.Worker(nil))
	s.WaitStatus(o.ID, state.OrderDelivered)
}

func TestMyOrdersShowsCodesAgain(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	o := s.Paid(giftCards(2), state.PayStars)
	b := s.Worker(nil)
	s.Run(b)
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	s.WaitMessage(chat, "<code>")
	s.Fake.SendCommand(chat, "orders", "")
	list := s.WaitMessage(chat, "Your orders")
	s.Idle(b)
	id := s.Fake.Press(chat, list.MessageID, button(t, list, "#"+strconv.FormatInt(o.ID, 10)+" · Apple Gift Card 10 USD"))
	s.WaitAnswer(id)
	s.Idle(b)
	view, _ := s.Fake.Message(chat, list.MessageID)
	for _, c := range got.Codes {
		if !strings.Contains(view.RawText, "<code>"+c+"</code>") {
			t.Fatalf("order view lacks a code: %q", view.RawText)
		}
	}
	if !strings.Contains(view.RawText, "delivered") {
		t.Fatalf("order view: %q", view.RawText)
	}
}

func TestStarsRefundFailureIsRetriedAndAlertedOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	o := s.Paid(giftCards(1), state.PayStars)
	balance := s.Fake.StarBalance()
	s.Fake.SetStarBalance(0) // refundStarPayment answers BALANCE_TOO_LOW
	s.Run(s.Worker(nil))
	s.WaitMessage(admin, fmt.Sprintf("Refund of order #%d failed", o.ID))
	// The worker tries again (RetryMin): two more refused refunds, still one alert.
	tries := len(s.Fake.CallsFor("refundStarPayment"))
	s.Wait("refundStarPayment", tries+2)
	if cur, _ := s.Orders.Get(context.Background(), o.ID); cur.Status != state.OrderRefunding {
		t.Fatalf("order is %s while the refund fails", cur.Status)
	}
	if n := s.CountMessages(admin, "Refund of order"); n != 1 {
		t.Fatalf("%d refund alerts", n)
	}
	s.Fake.SetStarBalance(balance)
	s.WaitStatus(o.ID, state.OrderRefunded)
	s.WaitTold(o.ID)
}

func TestStarsPurchaseFromCommandToCodesInChat(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	cfg := s.Cfg
	b := s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins = s.Client, cfg, []int64{admin}
		o.Checkout = &checkout.Options{Stars: true, Upstream: s.Client}
	})
	sh := &flowshop.Shop{
		Catalog: catalog.New(s.Client, work.NewCache(s.Rdb.Client, s.Rdb.Prefix), time.Minute),
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(s.Rdb.Client, s.Rdb.Prefix)},
		Limiter: redisstore.NewLimiter(s.Rdb.Client, s.Rdb.Prefix, 10, time.Minute),
	}
	lines.Register(b.Engine, sh)
	s.Run(b)
	s.Fake.SendCommand(chat, "giftcards", "")
	s.Wait("sendMessage", 1)
	s.Idle(b)
	s.Tap(b, "Apple")
	s.Tap(b, "US")
	s.Tap(b, "Apple Gift Card 10 USD")
	s.Say(b, "3")
	s.Tap(b, locales.T(locales.En, "btn.pay"))
	s.Wait("sendInvoice", 1)
	var inv types.Message
	for _, m := range s.Fake.MessagesIn(chat) {
		if m.Invoice != nil {
			inv = m
		}
	}
	res, err := s.Fake.Pay(context.Background(), chat, inv.MessageID, botapitest.PayOptions{})
	if err != nil || res.Declined {
		t.Fatalf("payment: %v %q", err, res.ErrorMessage)
	}
	var o *state.Order
	s.Until(func() bool { o, err = s.Orders.ByCharge(context.Background(), res.ChargeID); return err == nil })
	if err != nil {
		t.Fatal(err)
	}
	got := s.WaitStatus(o.ID, state.OrderDelivered)
	if len(got.Codes) != 3 {
		t.Fatalf("%d codes", len(got.Codes))
	}
	m := s.WaitMessage(chat, "<code>"+got.Codes[2]+"</code>")
	if strings.Count(m.RawText, "<code>") != 3 {
		t.Fatalf("codes message %q", m.RawText)
	}
}
