package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// shop is a harness with the upstream simulator and the order stores, for
// driving the fulfilment worker with orders created as payments would.
type shop struct {
	*harness
	sim      *resellersim.Sim
	client   *reseller.Client
	orders   *records.Orders
	sched    *sched.Schedule
	wallets  *records.Wallets
	start    decimal.Decimal
	external decimal.Decimal // upstream spending the test did itself
	foreign  map[int]bool    // upstream orders no order of ours may own
	cfg      fulfil.Config
	creates  atomic.Int64 // order-creating requests seen by the simulator
	polls    atomic.Int64 // GET /orders/{n} requests
}

func newShop(t *testing.T) *shop {
	t.Helper()
	h := newHarness(t)
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1), reseller.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s := &shop{
		harness: h, sim: sim, client: client,
		orders:  records.NewOrders(h.rdb.Client, h.rdb.Prefix),
		sched:   sched.NewSchedule(h.rdb.Client, h.rdb.Prefix),
		wallets: records.NewWallets(h.rdb.Client, h.rdb.Prefix),
		start:   sim.Balance(),
		foreign: map[int]bool{},
		cfg: fulfil.Config{
			Tick: 10 * time.Millisecond, Lease: time.Second, PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond,
			Grace: 300 * time.Millisecond, AnsweredGrace: 100 * time.Millisecond, Settle: 300 * time.Millisecond, CodeSettle: 50 * time.Millisecond, StuckAfter: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		},
	}
	sim.OnRequest(func(r *http.Request, _ []byte) {
		switch {
		case r.Method == http.MethodPost:
			s.creates.Add(1)
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/orders/"):
			s.polls.Add(1)
		}
	})
	t.Cleanup(func() {
		if !t.Failed() {
			s.checkInvariants()
		}
	})
	return s
}

// worker builds a bot running the fulfilment worker.
func (s *shop) worker(failpoint func(step string, id int64) error) *storefront.Shop {
	cfg := s.cfg
	cfg.Failpoint = failpoint
	return s.newBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins = s.client, cfg, []int64{admin}
	})
}

// paid stores a paid order for q as payments would, and schedules it.
func (s *shop) paid(q state.Quote, method string) *state.Order {
	s.t.Helper()
	created := s.paidUnscheduled(q, method)
	if err := s.sched.Put(context.Background(), fulfil.OrderJob(created.ID), time.Now()); err != nil {
		s.t.Fatal(err)
	}
	return created
}

// paidUnscheduled stores a paid order for q as payments would, with no job.
func (s *shop) paidUnscheduled(q state.Quote, method string) *state.Order {
	s.t.Helper()
	ctx := context.Background()
	q.ID = fmt.Sprintf("q%d", time.Now().UnixNano())
	q.ChatID, q.UserID = chat, chat
	if q.ItemName == "" {
		q.ItemName = q.Line + " item"
	}
	if q.ShopUSD.IsZero() {
		q.ShopUSD = decimal.RequireFromString("12.5")
	}
	if q.Stars == 0 {
		q.Stars = 962
	}
	item, _ := json.Marshal(q)
	o := &state.Order{QuoteID: q.ID, ChatID: chat, UserID: chat, Lang: "en", Line: q.Line, Item: item,
		UpstreamUSD: q.UpstreamUSD, ShopUSD: q.ShopUSD, Stars: q.Stars, PayMethod: method}
	switch method {
	case state.PayStars:
		o.ChargeID = s.fake.PushSuccessfulPayment(chat, q.ID, q.Stars, "")
	case state.PayWallet:
		o.ChargeID = "pay:" + q.ID
		if _, _, err := s.wallets.Credit(ctx, chat, q.ShopUSD, "credit:"+q.ID, "test", "admin"); err != nil {
			s.t.Fatal(err)
		}
		if _, err := s.wallets.Debit(ctx, chat, q.ShopUSD, o.ChargeID, "order"); err != nil {
			s.t.Fatal(err)
		}
	}
	created, _, err := s.orders.CreatePaid(ctx, o)
	if err != nil {
		s.t.Fatal(err)
	}
	return created
}

func giftCards(n int) state.Quote {
	return state.Quote{Line: "giftcards", Category: resellersim.DemoGiftCategory, Item: resellersim.DemoGiftCard,
		ItemName: "Apple Gift Card 10 USD", Quantity: n, UpstreamUSD: decimal.NewFromInt(int64(10 * n))}
}

// waitStatus waits until order id reaches status.
func (s *shop) waitStatus(id int64, status string) *state.Order {
	s.t.Helper()
	var o *state.Order
	if s.untilWithin(15*time.Second, func() bool {
		var err error
		o, err = s.orders.Get(context.Background(), id)
		return err == nil && o.Status == status
	}) {
		return o
	}
	s.t.Fatalf("order %d stayed %s (reason %q), want %s", id, o.Status, o.Reason, status)
	return nil
}

// waitMessage waits for a bot message in chatID containing substr.
func (s *shop) waitMessage(chatID int64, substr string) botapitest.Message {
	s.t.Helper()
	var found botapitest.Message
	if s.untilWithin(15*time.Second, func() bool {
		for _, m := range s.fake.MessagesIn(chatID) {
			if m.From != nil && m.From.IsBot && strings.Contains(m.RawText, substr) {
				found = m
				return true
			}
		}
		return false
	}) {
		return found
	}
	s.t.Fatalf("no message in chat %d containing %q", chatID, substr)
	return botapitest.Message{}
}

func (s *shop) countMessages(chatID int64, substr string) int {
	n := 0
	for _, m := range s.fake.MessagesIn(chatID) {
		if m.From != nil && m.From.IsBot && strings.Contains(m.RawText, substr) {
			n++
		}
	}
	return n
}

// starRefunds counts successful refundStarPayment calls for the charge.
func (s *shop) starRefunds(charge string) int {
	n := 0
	for _, c := range s.fake.CallsFor("refundStarPayment") {
		if c.ErrorCode == 0 && c.Params["telegram_payment_charge_id"] == charge {
			n++
		}
	}
	return n
}

// checkInvariants: each charge led to exactly one delivered upstream order
// or exactly one refund, and the upstream balance moved by exactly the
// charged_usd of delivered orders (plus what the test spent itself).
func (s *shop) checkInvariants() {
	t := s.t
	ctx := context.Background()
	all, err := s.orders.List(ctx, 0, 1000, state.OrderFilter{})
	if err != nil {
		t.Fatal(err)
	}
	spent := decimal.Zero
	for _, o := range all {
		refunds := s.starRefunds(o.ChargeID)
		if o.PayMethod == state.PayWallet {
			refunds = 0
			if _, ok, _ := s.wallets.Moved(ctx, o.UserID, "refund:order:"+strconv.FormatInt(o.ID, 10)); ok {
				refunds = 1
			}
		}
		switch o.Status {
		case state.OrderDelivered:
			up, ok := s.sim.Order(int(o.UpstreamNumber))
			if !ok || up.Status != resellersim.OrderCompleted {
				t.Errorf("order %d delivered but upstream %d is %v", o.ID, o.UpstreamNumber, up.Status)
			}
			if refunds != 0 {
				t.Errorf("order %d delivered and refunded", o.ID)
			}
			if !o.ChargedUSD.Equal(up.ChargedUSD) {
				t.Errorf("order %d charged %s, upstream says %s", o.ID, o.ChargedUSD, up.ChargedUSD)
			}
			spent = spent.Add(up.ChargedUSD)
		case state.OrderRefunded:
			if refunds != 1 {
				t.Errorf("order %d refunded %d times", o.ID, refunds)
			}
			if o.UpstreamNumber != 0 {
				if up, _ := s.sim.Order(int(o.UpstreamNumber)); up.Status == resellersim.OrderCompleted {
					t.Errorf("order %d refunded but upstream %d completed", o.ID, o.UpstreamNumber)
				}
			}
		case state.OrderNeedsReview:
			if refunds != 0 {
				t.Errorf("order %d in review was refunded", o.ID)
			}
		default:
			t.Errorf("order %d left %s", o.ID, o.Status)
		}
	}
	for _, up := range s.sim.Orders() {
		owner, err := s.orders.ByUpstream(ctx, int64(up.Number))
		switch {
		case s.foreign[up.Number] && err == nil:
			t.Errorf("order %d adopted upstream %d, which is not ours", owner.ID, up.Number)
		case !s.foreign[up.Number] && err != nil:
			t.Errorf("upstream order %d (%s) belongs to no order: bought twice?", up.Number, up.Status)
		}
	}
	if moved := s.start.Sub(s.sim.Balance()).Sub(s.external); !moved.Equal(spent) {
		t.Errorf("upstream balance moved by %s, delivered orders cost %s", moved, spent)
	}
}

func TestHappyDeliveryPerLine(t *testing.T) {
	cases := []struct {
		name  string
		quote state.Quote
		want  string // in the buyer's message
	}{
		{"giftcards", giftCards(2), "<code>"},
		{"keys", state.Quote{Line: "keys", Category: resellersim.DemoGame, Item: resellersim.DemoGameKey, Quantity: 1}, "<code>"},
		{"stars", state.Quote{Line: "stars", Item: "stars", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 100}, "credited to the account"},
		{"premium", state.Quote{Line: "premium", Item: "3", Fields: map[string]string{"username": "durov"}, For: "@durov", Quantity: 1}, "Premium is now active"},
		{"topup", state.Quote{Line: "topup", Fields: map[string]string{"store_login": "gaben", "currency": "USD", "amount": "5"}, Quantity: 1}, "store account"},
		{"services", state.Quote{Line: "services", Category: resellersim.DemoManualServiceNoChat, Item: resellersim.DemoManualOfferNoChat,
			Fields: map[string]string{"trade_url": "https://steamcommunity.com/tradeoffer/new/?partner=1&token=x"}, Quantity: 1}, "service has been completed"},
		{"gifts", state.Quote{Line: "gifts", Category: strconv.Itoa(resellersim.DemoStoreApp), Item: strconv.Itoa(resellersim.DemoStoreSub),
			Fields: map[string]string{"region": "US", "invite_url": "https://s.team/p/abc-def/XYZ"}, Quantity: 1}, "gift has been sent"},
		{"games", state.Quote{Line: "games", Category: resellersim.DemoTopUpCategory, Item: resellersim.DemoTopUpOffer,
			Fields: map[string]string{"player_id": "5123456789"}, Quantity: 1}, "no code to enter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newShop(t)
			o := s.paid(tc.quote, state.PayStars)
			s.run(s.worker(nil))
			got := s.waitStatus(o.ID, state.OrderDelivered)
			m := s.waitMessage(chat, tc.want)
			if tc.want == "<code>" {
				if len(got.Codes) == 0 || !strings.Contains(m.RawText, "<code>"+got.Codes[0]+"</code>") {
					t.Fatalf("codes %d, message %q", len(got.Codes), m.RawText)
				}
				if n := len(s.fake.CallsFor("sendDocument")); n != 0 {
					t.Fatalf("%d documents for a short list of codes", n)
				}
			} else if len(got.Codes) != 0 {
				t.Fatalf("a %s order has codes", tc.name)
			}
			s.waitMessage(chat, "is being processed")
			if tc.name == "services" {
				s.waitMessage(chat, "It will be done by")
			}
			if s.creates.Load() != 1 {
				t.Fatalf("%d creates", s.creates.Load())
			}
		})
	}
}

func TestManyCodesAlsoComeAsTxtFile(t *testing.T) {
	s := newShop(t)
	o := s.paid(giftCards(12), state.PayWallet)
	s.run(s.worker(nil))
	got := s.waitStatus(o.ID, state.OrderDelivered)
	m := s.waitMessage(chat, "attached file")
	if strings.Count(m.RawText, "<code>") != 12 {
		t.Fatalf("message has %d codes", strings.Count(m.RawText, "<code>"))
	}
	docs := s.wait("sendDocument", 1)
	if docs[0].ErrorCode != 0 {
		t.Fatalf("sendDocument failed: %s", docs[0].Description)
	}
	var doc botapitest.Message
	for _, msg := range s.fake.MessagesIn(chat) {
		if msg.Document != nil {
			doc = msg
		}
	}
	if lines := strings.Split(strings.TrimSpace(string(doc.FileData)), "\n"); len(lines) != 12 || lines[0] != got.Codes[0] {
		t.Fatalf("file has %d lines", len(lines))
	}
}

func TestCreate429IsRetriedLater(t *testing.T) {
	s := newShop(t)
	s.sim.RateLimitNext(2, time.Second)
	o := s.paid(giftCards(1), state.PayStars)
	s.run(s.worker(nil))
	s.waitStatus(o.ID, state.OrderDelivered)
	if n := len(s.sim.Orders()); n != 1 {
		t.Fatalf("%d upstream orders", n)
	}
}

func TestCreate5xxBeforeExecutionIsRetriedAfterGrace(t *testing.T) {
	s := newShop(t)
	s.sim.FailNextOn("/gift-cards/order", 1, http.StatusBadGateway)
	o := s.paid(giftCards(1), state.PayStars)
	start := time.Now()
	s.run(s.worker(nil))
	got := s.waitStatus(o.ID, state.OrderDelivered)
	if time.Since(start) < s.cfg.AnsweredGrace { // the server answered: the short grace
		t.Fatal("retried before the grace period")
	}
	if got.Attempts != 2 || len(s.sim.Orders()) != 1 {
		t.Fatalf("attempts %d, upstream orders %d", got.Attempts, len(s.sim.Orders()))
	}
}

func TestAmbiguousCreateThatWasCreatedIsAdopted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*resellersim.Sim)
	}{
		{"connection cut", func(sim *resellersim.Sim) { sim.CutAfterCreate(1) }},
		{"5xx after execute", func(sim *resellersim.Sim) { sim.FailCreateAfterExecute(1, http.StatusInternalServerError) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newShop(t)
			tc.fault(s.sim)
			o := s.paid(giftCards(1), state.PayStars)
			s.run(s.worker(nil))
			got := s.waitStatus(o.ID, state.OrderDelivered)
			if s.sim.CreateCount() != 1 || got.Attempts != 1 {
				t.Fatalf("creates %d, attempts %d: bought twice", s.sim.CreateCount(), got.Attempts)
			}
		})
	}
}

func TestPoll429And5xxAreRetried(t *testing.T) {
	s := newShop(t)
	s.sim.SetBehavior(resellersim.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Complete, CompleteAfter: 300 * time.Millisecond})
	o := s.paid(giftCards(1), state.PayStars)
	var once sync.Once
	s.run(s.worker(func(step string, id int64) error {
		if step == fulfil.FailpointPlaced {
			once.Do(func() {
				s.sim.FailNextOn("/orders/", 2, http.StatusServiceUnavailable)
				s.sim.RateLimitNext(1, time.Second)
			})
		}
		return nil
	}))
	s.waitStatus(o.ID, state.OrderDelivered)
	if s.polls.Load() < 4 {
		t.Fatalf("only %d polls", s.polls.Load())
	}
}

// Two identical orders someone else placed just before ours, then our
// create's answer is cut: the placement slot makes the one above the
// attempt's watermark provably ours; the look-alikes stay unclaimed.
func TestLookAlikeOrdersBeforeACutCreateAreNotAdopted(t *testing.T) {
	s := newShop(t)
	ctx := context.Background()
	for range 2 {
		up, err := s.client.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: resellersim.DemoGiftCategory, CardID: resellersim.DemoGiftCard, Quantity: 1})
		if err != nil {
			t.Fatal(err)
		}
		s.external = s.external.Add(up.ChargedUSD.Decimal)
		s.foreign[int(up.Number)] = true
	}
	s.sim.CutAfterCreate(1)
	s.run(s.worker(nil))
	s.waitWatermark() // the shop runs, and has seen the upstream, when the buyer pays
	o := s.paid(giftCards(1), state.PayStars)
	got := s.waitDelivered(o.ID)
	if s.foreign[int(got.UpstreamNumber)] || s.sim.CreateCount() != 3 {
		t.Fatalf("adopted upstream %d (foreign: %v), creates %d", got.UpstreamNumber, s.foreign, s.sim.CreateCount())
	}
}

func TestUpstream400OnCreateRefunds(t *testing.T) {
	t.Run("out of stock", func(t *testing.T) {
		s := newShop(t)
		q := giftCards(1)
		q.Item = resellersim.DemoGiftCardOutOfStock
		o := s.paid(q, state.PayStars)
		s.run(s.worker(nil))
		s.waitStatus(o.ID, state.OrderRefunded)
		if !s.fake.Refunded(o.ChargeID) {
			t.Fatal("the charge was not refunded")
		}
		s.waitMessage(chat, "could not be completed")
		s.waitMessage(chat, "were refunded to your Telegram balance")
		s.waitMessage(admin, "Order #"+strconv.FormatInt(o.ID, 10)+" (Apple Gift Card 10 USD) failed and was refunded: ")
	})
	t.Run("insufficient balance alerts admins", func(t *testing.T) {
		s := newShop(t)
		s.sim.SetBalance(decimal.NewFromInt(1))
		s.start = decimal.NewFromInt(1)
		o := s.paid(giftCards(1), state.PayWallet)
		s.run(s.worker(nil))
		s.waitStatus(o.ID, state.OrderRefunded)
		s.waitMessage(admin, "upstream balance is too low")
		s.waitMessage(chat, "temporarily unavailable")
		if bal, _ := s.wallets.Balance(context.Background(), chat); !bal.Equal(decimal.RequireFromString("12.5")) {
			t.Fatalf("wallet balance %s after refund", bal)
		}
	})
}

func TestFailedUpstreamIsRefundedOnceEvenAfterACrashMidRefund(t *testing.T) {
	for _, method := range []string{state.PayStars, state.PayWallet} {
		t.Run(method, func(t *testing.T) {
			s := newShop(t)
			s.sim.SetBehavior(resellersim.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
			o := s.paid(giftCards(1), method)
			crashed := make(chan struct{})
			var once sync.Once
			stop := s.run(s.worker(func(step string, id int64) error {
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
			if cur, _ := s.orders.Get(context.Background(), o.ID); cur.Status != state.OrderRefunding {
				t.Fatalf("after the crash the order is %s", cur.Status)
			}
			s.run(s.worker(nil))
			s.waitStatus(o.ID, state.OrderRefunded)
			ctx := context.Background()
			switch method {
			case state.PayStars:
				if n := s.starRefunds(o.ChargeID); n != 1 {
					t.Fatalf("%d refunds", n)
				}
			case state.PayWallet:
				entries, _ := s.wallets.Ledger(ctx, chat, 0, 10)
				if len(entries) != 3 { // credit, debit, one refund
					t.Fatalf("ledger has %d entries", len(entries))
				}
				if bal, _ := s.wallets.Balance(ctx, chat); !bal.Equal(decimal.RequireFromString("12.5")) {
					t.Fatalf("wallet balance %s", bal)
				}
			}
			s.waitMessage(chat, "Order #"+strconv.FormatInt(o.ID, 10)+"</b>: ")
			s.waitMessage(admin, "failed and was refunded")
			if n := s.countMessages(admin, "failed and was refunded"); n != 1 {
				t.Fatalf("%d refund alerts for one order, want 1", n)
			}
		})
	}
}

func TestOrderStuckInProcessingAlertsOnce(t *testing.T) {
	s := newShop(t)
	s.cfg.StuckAfter = 200 * time.Millisecond
	s.sim.SetBehavior(resellersim.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.paid(giftCards(1), state.PayStars)
	s.run(s.worker(nil))
	placed := s.waitStatus(o.ID, state.OrderPlaced)
	// The alert names the upstream order once it is placed; on a busy
	// machine placing may take longer than StuckAfter, and the one alert
	// names the order's state instead. Either way: one alert.
	alert := fmt.Sprintf("⚠️ Order #%d ", o.ID)
	s.waitMessage(admin, alert)
	// The worker checks again at each poll: three more polls and still one alert.
	polls := s.polls.Load()
	if !s.until(func() bool { return s.polls.Load() >= polls+3 }) {
		t.Fatal("the worker stopped polling the order")
	}
	if n := s.countMessages(admin, alert); n != 1 {
		t.Fatalf("%d stuck alerts", n)
	}
	if err := s.sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(o.ID, state.OrderDelivered)
}

func TestBlockedBuyerGetsDeliveryAfterStart(t *testing.T) {
	s := newShop(t)
	s.fake.BlockChat(chat)
	o := s.paid(giftCards(1), state.PayStars)
	b := s.worker(nil)
	s.run(b)
	got := s.waitStatus(o.ID, state.OrderDelivered)
	// The codes went to the blocked chat (refused) and the worker is done
	// with the order: it waits for /start.
	s.wait("sendMessage", 1)
	if !s.until(func() bool {
		_, due, err := s.sched.Due(context.Background(), fulfil.OrderJob(o.ID))
		return err == nil && !due
	}) {
		t.Fatal("the worker kept the delivery job")
	}
	if cur, _ := s.orders.Get(context.Background(), o.ID); !cur.DeliveredAt.IsZero() {
		t.Fatal("delivered to a buyer who blocked the bot")
	}
	s.fake.UnblockChat(chat)
	s.fake.SendCommand(chat, "start", "")
	m := s.waitMessage(chat, "<code>"+got.Codes[0]+"</code>")
	s.waitMessage(chat, "Welcome")
	if cur := s.waitDelivered(o.ID); cur.DeliveredAt.IsZero() {
		t.Fatalf("delivery not recorded after %q", m.RawText)
	}
}

// waitTold waits until the buyer got the finished order's result.
func (s *shop) waitTold(id int64) {
	s.t.Helper()
	if !s.untilWithin(15*time.Second, func() bool {
		o, err := s.orders.Get(context.Background(), id)
		return err == nil && (!o.DeliveredAt.IsZero() || o.NotifiedStatus == state.OrderRefunded)
	}) {
		s.t.Fatalf("the buyer never heard about order %d", id)
	}
}

func (s *shop) waitDelivered(id int64) *state.Order {
	var o *state.Order
	s.untilWithin(5*time.Second, func() bool {
		var err error
		o, err = s.orders.Get(context.Background(), id)
		return err == nil && !o.DeliveredAt.IsZero()
	})
	return o
}

func TestRestartAtEachLifecycleStep(t *testing.T) {
	steps := []struct {
		step string
		fail bool // the upstream order fails, so the refund steps run
	}{
		{fulfil.FailpointIntent, false}, {fulfil.FailpointCreated, false}, {fulfil.FailpointPlaced, false},
		{fulfil.FailpointCompleted, false}, {fulfil.FailpointRefunding, true}, {fulfil.FailpointRefunded, true},
	}
	for _, tc := range steps {
		t.Run(tc.step, func(t *testing.T) {
			s := newShop(t)
			want := state.OrderDelivered
			if tc.fail {
				want = state.OrderRefunded
				s.sim.SetBehavior(resellersim.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
			}
			o := s.paid(giftCards(1), state.PayStars)
			hit := make(chan struct{})
			var once sync.Once
			stop := s.run(s.worker(func(step string, id int64) error {
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
			s.run(s.worker(nil))
			s.waitStatus(o.ID, want)
			s.waitTold(o.ID)
			if s.sim.CreateCount() != 1 {
				t.Fatalf("%d creates: bought twice", s.sim.CreateCount())
			}
		})
	}
}

func TestUnscheduledPaidOrderIsResumedOnStart(t *testing.T) {
	s := newShop(t)
	o := s.paid(giftCards(1), state.PayStars)
	if err := s.sched.Remove(context.Background(), fulfil.OrderJob(o.ID)); err != nil {
		t.Fatal(err)
	}
	s.run(s.worker(nil))
	s.waitStatus(o.ID, state.OrderDelivered)
}

func TestMyOrdersShowsCodesAgain(t *testing.T) {
	s := newShop(t)
	o := s.paid(giftCards(2), state.PayStars)
	b := s.worker(nil)
	s.run(b)
	got := s.waitStatus(o.ID, state.OrderDelivered)
	s.waitMessage(chat, "<code>")
	s.fake.SendCommand(chat, "orders", "")
	list := s.waitMessage(chat, "Your orders")
	s.idle(b)
	id := s.fake.Press(chat, list.MessageID, button(t, list, "#"+strconv.FormatInt(o.ID, 10)+" · Apple Gift Card 10 USD"))
	s.waitAnswer(id)
	s.idle(b)
	view, _ := s.fake.Message(chat, list.MessageID)
	for _, c := range got.Codes {
		if !strings.Contains(view.RawText, "<code>"+c+"</code>") {
			t.Fatalf("order view lacks a code: %q", view.RawText)
		}
	}
	if !strings.Contains(view.RawText, "completed") {
		t.Fatalf("order view: %q", view.RawText)
	}
}

func TestStarsRefundFailureIsRetriedAndAlertedOnce(t *testing.T) {
	s := newShop(t)
	s.sim.SetBehavior(resellersim.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	o := s.paid(giftCards(1), state.PayStars)
	balance := s.fake.StarBalance()
	s.fake.SetStarBalance(0) // refundStarPayment answers BALANCE_TOO_LOW
	s.run(s.worker(nil))
	s.waitMessage(admin, fmt.Sprintf("Refund of order #%d failed", o.ID))
	// The worker tries again (RetryMin): two more refused refunds, still one alert.
	tries := len(s.fake.CallsFor("refundStarPayment"))
	s.wait("refundStarPayment", tries+2)
	if cur, _ := s.orders.Get(context.Background(), o.ID); cur.Status != state.OrderRefunding {
		t.Fatalf("order is %s while the refund fails", cur.Status)
	}
	if n := s.countMessages(admin, "Refund of order"); n != 1 {
		t.Fatalf("%d refund alerts", n)
	}
	s.fake.SetStarBalance(balance)
	s.waitStatus(o.ID, state.OrderRefunded)
	s.waitTold(o.ID)
}

func TestStarsPurchaseFromCommandToCodesInChat(t *testing.T) {
	s := newShop(t)
	cfg := s.cfg
	b := s.newBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins = s.client, cfg, []int64{admin}
		o.Checkout = &checkout.Options{Stars: true, Upstream: s.client}
	})
	sh := &flowshop.Shop{
		Catalog: catalog.New(s.client, work.NewCache(s.rdb.Client, s.rdb.Prefix), time.Minute),
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(s.rdb.Client, s.rdb.Prefix)},
		Limiter: redisstore.NewLimiter(s.rdb.Client, s.rdb.Prefix, 10, time.Minute),
	}
	lines.Register(b.Engine, sh)
	s.run(b)
	s.fake.SendCommand(chat, "giftcards", "")
	s.wait("sendMessage", 1)
	s.idle(b)
	s.tap(b, "Apple")
	s.tap(b, "US")
	s.tap(b, "Apple Gift Card 10 USD")
	s.say(b, "3")
	s.tap(b, locales.T(locales.En, "btn.pay"))
	s.wait("sendInvoice", 1)
	var inv botapitest.Message
	for _, m := range s.fake.MessagesIn(chat) {
		if m.Invoice != nil {
			inv = m
		}
	}
	res, err := s.fake.Pay(context.Background(), chat, inv.MessageID, botapitest.PayOptions{})
	if err != nil || res.Declined {
		t.Fatalf("payment: %v %q", err, res.ErrorMessage)
	}
	var o *state.Order
	s.until(func() bool { o, err = s.orders.ByCharge(context.Background(), res.ChargeID); return err == nil })
	if err != nil {
		t.Fatal(err)
	}
	got := s.waitStatus(o.ID, state.OrderDelivered)
	if len(got.Codes) != 3 {
		t.Fatalf("%d codes", len(got.Codes))
	}
	m := s.waitMessage(chat, "<code>"+got.Codes[2]+"</code>")
	if strings.Count(m.RawText, "<code>") != 3 {
		t.Fatalf("codes message %q", m.RawText)
	}
}

// waitWatermark waits until the running worker has read the upstream's
// newest order number (orders paid afterwards look above it).
func (s *shop) waitWatermark() {
	s.t.Helper()
	if !s.untilWithin(5*time.Second, func() bool { n, err := s.orders.UpstreamHint(context.Background()); return err == nil && n > 0 }) {
		s.t.Fatal("the worker never read the upstream watermark")
	}
}
