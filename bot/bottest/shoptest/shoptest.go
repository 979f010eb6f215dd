// Package shoptest is the whole shop for tests with its upstream: bottest's
// harness (the bot over the fake Bot API and a throwaway Redis) plus the
// upstream simulator and the order stores, to drive the fulfilment worker
// with orders created as payments would. The feature packages' end-to-end
// tests (fulfil, admin, orderchat, books) and the bot's share it. At the
// end of a test that passed it checks the shop's invariants: every charge
// led to exactly one delivered upstream order or exactly one refund.
package shoptest

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

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
)

// Shop is a harness with the upstream simulator and the order stores.
type Shop struct {
	*bottest.Harness
	Sim      *resellersim.Sim
	SimURL   string // where the simulator is served (its images' URLs start with it)
	Client   *reseller.Client
	Orders   *records.Orders
	Sched    *sched.Schedule
	Wallets  *records.Wallets
	Start    decimal.Decimal // the upstream balance at the start
	External decimal.Decimal // upstream spending the test did itself
	Foreign  map[int]bool    // upstream orders no order of ours may own
	// RefundedInReview are orders a test leaves in review although their
	// charge was refunded (a refund a restore took), with the goods the
	// order bought held for an admin.
	RefundedInReview map[int64]bool
	Cfg              fulfil.Config // the worker's settings (Worker); tests tune them
	Creates          atomic.Int64  // order-creating requests seen by the simulator
	Polls            atomic.Int64  // GET /orders/{n} requests
	// Pace is the clock every bot of the shop paces its Telegram calls
	// on (NewBot): every pace and flood wait stays in force on it, and
	// the tests never wait for one.
	Pace *bottest.JumpClock
}

// New returns a shop whose servers close when the test ends; the test's
// end checks the invariants unless it failed.
func New(t *testing.T) *Shop {
	t.Helper()
	return NewWithCatalog(t, nil)
}

// NewWithCatalog is New with the simulator serving cat (nil: the default
// catalog, simcatalog.Default).
func NewWithCatalog(t *testing.T, cat *simcatalog.Catalog) *Shop {
	t.Helper()
	h := bottest.New(t)
	sim := resellersim.New(resellersim.Config{Seed: 1, Catalog: cat})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1), reseller.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s := &Shop{
		Harness: h, Sim: sim, SimURL: srv.URL, Client: client,
		Orders:  records.NewOrders(h.Rdb.Client, h.Rdb.Prefix),
		Sched:   sched.NewSchedule(h.Rdb.Client, h.Rdb.Prefix),
		Wallets: records.NewWallets(h.Rdb.Client, h.Rdb.Prefix),
		Start:   sim.Balance(),
		Foreign: map[int]bool{}, RefundedInReview: map[int64]bool{}, Pace: bottest.NewJumpClock(),
		Cfg: fulfil.Config{
			Tick: 10 * time.Millisecond, Lease: time.Second, PollMin: 20 * time.Millisecond, PollMax: 100 * time.Millisecond,
			Grace: 300 * time.Millisecond, AnsweredGrace: 100 * time.Millisecond, CreateTimeout: 2 * time.Second, Settle: 300 * time.Millisecond, CodeSettle: 50 * time.Millisecond, StuckAfter: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		},
	}
	sim.OnRequest(func(r *http.Request, _ []byte) {
		switch {
		case r.Method == http.MethodPost:
			s.Creates.Add(1)
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/orders/"):
			s.Polls.Add(1)
		}
	})
	t.Cleanup(func() {
		if !t.Failed() {
			s.checkInvariants()
		}
	})
	return s
}

// NewBot is the harness's NewBot, pacing on s.Pace.
func (s *Shop) NewBot(mod func(*storefront.Options)) *storefront.Shop {
	s.T.Helper()
	b := s.Harness.NewBot(mod)
	s.Pace.Pace(b.API)
	return b
}

// Worker builds a shop running the fulfilment worker (settings Cfg) with
// failpoint (nil: none).
func (s *Shop) Worker(failpoint func(step string, id int64) error) *storefront.Shop {
	cfg := s.Cfg
	cfg.Failpoint = failpoint
	return s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins = s.Client, cfg, []int64{bottest.Admin}
	})
}

// Paid stores a paid order for q as payments would, and schedules it.
func (s *Shop) Paid(q state.Quote, method string) *state.Order {
	s.T.Helper()
	created := s.PaidUnscheduled(q, method)
	if err := s.Sched.Put(context.Background(), fulfil.OrderJob(created.ID), time.Now()); err != nil {
		s.T.Fatal(err)
	}
	return created
}

// PaidUnscheduled stores a paid order for q as payments would, with no job.
func (s *Shop) PaidUnscheduled(q state.Quote, method string) *state.Order {
	s.T.Helper()
	ctx := context.Background()
	q.ID = fmt.Sprintf("q%d", time.Now().UnixNano())
	q.ChatID, q.UserID = bottest.Chat, bottest.Chat
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
	o := &state.Order{QuoteID: q.ID, ChatID: bottest.Chat, UserID: bottest.Chat, Lang: "en", Line: q.Line, Item: item,
		UpstreamUSD: q.UpstreamUSD, ShopUSD: q.ShopUSD, Stars: q.Stars, PayMethod: method, PaidAt: time.Now().UTC(),
		PromoCode: q.PromoCode, DiscountUSD: q.DiscountUSD}
	switch method {
	case state.PayStars:
		o.ChargeID = s.Fake.PushSuccessfulPayment(bottest.Chat, q.ID, q.Stars, "")
	case state.PayWallet:
		o.ChargeID = "pay:" + q.ID
		if _, _, err := s.Wallets.Credit(ctx, bottest.Chat, q.ShopUSD, "credit:"+q.ID, "test", "admin"); err != nil {
			s.T.Fatal(err)
		}
		if _, err := s.Wallets.Debit(ctx, bottest.Chat, q.ShopUSD, o.ChargeID, "order"); err != nil {
			s.T.Fatal(err)
		}
	}
	created, _, err := s.Orders.CreatePaid(ctx, o)
	if err != nil {
		s.T.Fatal(err)
	}
	return created
}

// GiftCards is a quote for n of the simulator's demo gift card.
func GiftCards(n int) state.Quote {
	return state.Quote{Line: "giftcards", Category: simcatalog.DemoGiftCategory, Item: simcatalog.DemoGiftCard,
		ItemName: "Apple Gift Card 10 USD", Quantity: n, UpstreamUSD: decimal.NewFromInt(int64(10 * n))}
}

// TopUp is a quote for the simulator's demo in-game top-up of player.
func TopUp(player string) state.Quote {
	return state.Quote{Line: "games", Category: simcatalog.DemoTopUpCategory, Item: simcatalog.DemoTopUpOffer,
		Fields: map[string]string{"player_id": player}, Quantity: 1}
}

// CrashAt returns a failpoint that stops the worker at step (as kill -9
// would) once, and a channel closed when it did.
func CrashAt(step string) (func(string, int64) error, <-chan struct{}) {
	hit := make(chan struct{})
	var once sync.Once
	return func(s string, _ int64) error {
		if s != step {
			return nil
		}
		fired := false
		once.Do(func() { close(hit); fired = true })
		if fired {
			return errors.New("kill -9")
		}
		return nil
	}, hit
}

// WaitClosed waits until c is closed and fails the test, naming what, if
// it is not within 10 s.
func WaitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("never reached %s", what)
	}
}

// WaitStatus waits until order id reaches status.
func (s *Shop) WaitStatus(id int64, status string) *state.Order {
	s.T.Helper()
	var o *state.Order
	if s.UntilWithin(15*time.Second, func() bool {
		var err error
		o, err = s.Orders.Get(context.Background(), id)
		return err == nil && o.Status == status
	}) {
		return o
	}
	s.T.Fatalf("order %d stayed %s (reason %q), want %s", id, o.Status, o.Reason, status)
	return nil
}

// WaitStatusIn waits until order id reaches one of statuses (delivered
// counts only with its upstream number).
func (s *Shop) WaitStatusIn(id int64, statuses ...string) *state.Order {
	s.T.Helper()
	var o *state.Order
	if s.UntilWithin(15*time.Second, func() bool {
		var err error
		if o, err = s.Orders.Get(context.Background(), id); err == nil {
			for _, st := range statuses {
				if o.Status == st && (st != state.OrderDelivered || o.UpstreamNumber != 0) {
					return true
				}
			}
		}
		return false
	}) {
		return o
	}
	s.T.Fatalf("order %d stayed %s, want one of %v", id, o.Status, statuses)
	return nil
}

// WaitMessage waits for a bot message in chatID containing substr.
func (s *Shop) WaitMessage(chatID int64, substr string) types.Message {
	s.T.Helper()
	var found types.Message
	if s.UntilWithin(15*time.Second, func() bool {
		for _, m := range s.Fake.MessagesIn(chatID) {
			if m.From != nil && m.From.IsBot && strings.Contains(m.RawText, substr) {
				found = m
				return true
			}
		}
		return false
	}) {
		return found
	}
	s.T.Fatalf("no message in chat %d containing %q", chatID, substr)
	return types.Message{}
}

// CountMessages counts the bot messages in chatID containing substr.
func (s *Shop) CountMessages(chatID int64, substr string) int {
	n := 0
	for _, m := range s.Fake.MessagesIn(chatID) {
		if m.From != nil && m.From.IsBot && strings.Contains(m.RawText, substr) {
			n++
		}
	}
	return n
}

// StarRefunds counts successful refundStarPayment calls for the charge.
func (s *Shop) StarRefunds(charge string) int {
	n := 0
	for _, c := range s.Fake.CallsFor("refundStarPayment") {
		if c.ErrorCode == 0 && c.Params["telegram_payment_charge_id"] == charge {
			n++
		}
	}
	return n
}

// WaitTold waits until the buyer got the finished order's result.
func (s *Shop) WaitTold(id int64) {
	s.T.Helper()
	if !s.UntilWithin(15*time.Second, func() bool {
		o, err := s.Orders.Get(context.Background(), id)
		return err == nil && (!o.DeliveredAt.IsZero() || o.NotifiedStatus == state.OrderRefunded)
	}) {
		s.T.Fatalf("the buyer never heard about order %d", id)
	}
}

// WaitDelivered waits (5 s at most) until order id is delivered to the
// buyer and returns it as it is then.
func (s *Shop) WaitDelivered(id int64) *state.Order {
	var o *state.Order
	s.UntilWithin(5*time.Second, func() bool {
		var err error
		o, err = s.Orders.Get(context.Background(), id)
		return err == nil && !o.DeliveredAt.IsZero()
	})
	return o
}

// WaitWatermark waits until the running worker has read the upstream's
// newest order number (orders paid afterwards look above it).
func (s *Shop) WaitWatermark() {
	s.T.Helper()
	if !s.UntilWithin(5*time.Second, func() bool { n, err := s.Orders.UpstreamHint(context.Background()); return err == nil && n > 0 }) {
		s.T.Fatal("the worker never read the upstream watermark")
	}
}

// checkInvariants: each charge led to exactly one delivered upstream order
// or exactly one refund, and the upstream balance moved by exactly the
// charged_usd of delivered orders (plus what the test spent itself).
func (s *Shop) checkInvariants() {
	t := s.T
	ctx := context.Background()
	all, err := s.Orders.List(ctx, 0, 1000, state.OrderFilter{})
	if err != nil {
		t.Fatal(err)
	}
	spent := decimal.Zero
	for _, o := range all {
		refunds := s.StarRefunds(o.ChargeID)
		if o.PayMethod == state.PayWallet {
			refunds = 0
			if _, ok, _ := s.Wallets.Moved(ctx, o.UserID, "refund:order:"+strconv.FormatInt(o.ID, 10)); ok {
				refunds = 1
			}
		}
		switch o.Status {
		case state.OrderDelivered:
			up, ok := s.Sim.Order(int(o.UpstreamNumber))
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
				if up, _ := s.Sim.Order(int(o.UpstreamNumber)); up.Status == resellersim.OrderCompleted {
					t.Errorf("order %d refunded but upstream %d completed", o.ID, o.UpstreamNumber)
				}
			}
		case state.OrderNeedsReview:
			if refunds != 0 && !s.RefundedInReview[o.ID] {
				t.Errorf("order %d in review was refunded", o.ID)
			}
		default:
			t.Errorf("order %d left %s", o.ID, o.Status)
		}
	}
	for _, up := range s.Sim.Orders() {
		owner, err := s.Orders.ByUpstream(ctx, int64(up.Number))
		switch {
		case s.Foreign[up.Number] && err == nil:
			t.Errorf("order %d adopted upstream %d, which is not ours", owner.ID, up.Number)
		case !s.Foreign[up.Number] && err != nil:
			t.Errorf("upstream order %d (%s) belongs to no order: bought twice?", up.Number, up.Status)
		}
	}
	if moved := s.Start.Sub(s.Sim.Balance()).Sub(s.External); !moved.Equal(spent) {
		t.Errorf("upstream balance moved by %s, delivered orders cost %s", moved, spent)
	}
}
