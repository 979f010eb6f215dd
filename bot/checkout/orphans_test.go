package checkout_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"shopbot/bot/checkout"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/statetest"
)

// fakeTelegram records what checkout asks of Telegram.
type fakeTelegram struct {
	mu       sync.Mutex
	refunded []string
	sent     []string
	reads    int // getStarTransactions calls
}

// starReads returns how many times the Star transactions were read.
func (f *fakeTelegram) starReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *fakeTelegram) Send(_ context.Context, _ int64, text string, _ [][]flows.Button) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, text)
	return len(f.sent), nil
}

func (f *fakeTelegram) SendInvoice(context.Context, checkout.Invoice) (int, error) { return 1, nil }
func (f *fakeTelegram) CreateInvoiceLink(context.Context, checkout.Invoice) (string, error) {
	return "https://t.me/$link", nil
}
func (f *fakeTelegram) AnswerPreCheckout(context.Context, string, string) error { return nil }
func (f *fakeTelegram) StarTransactions(context.Context, int, int) ([]checkout.StarTransaction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return nil, nil
}

func (f *fakeTelegram) RefundStars(_ context.Context, _ int64, charge string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refunded = append(f.refunded, charge)
	return nil
}

type noAlerts struct{}

func (noAlerts) Raise(context.Context, string, string) (bool, error) { return true, nil }
func (noAlerts) Clear(context.Context, string) (bool, error)         { return false, nil }
func (noAlerts) Mark(context.Context, string) (bool, error)          { return true, nil }
func (noAlerts) Tell(context.Context, string)                        {}

// allClaimed is a fulfilment worker that has every upstream order claimed.
type allClaimed struct{}

func (allClaimed) OrphanAfter() time.Duration { return 10 * time.Minute }
func (allClaimed) AllClaimed(context.Context, time.Time) (bool, bool, error) {
	return true, true, nil
}
func (allClaimed) ChargeRefunded(context.Context, string) (bool, error) { return false, nil }

// newCheckout is checkout alone over rdb: no bot, its Telegram and admins
// faked; orphans (nil: no fulfilment worker) is the worker's view of
// unclaimed upstream orders.
func newCheckout(rdb *statetest.Redis, orphans checkout.Orphans) (*checkout.Checkout, *fakeTelegram, *records.ChargeReviews) {
	return newCheckoutWith(rdb, orphans, checkout.Options{Stars: true})
}

// newCheckoutWith is newCheckout with opts.
func newCheckoutWith(rdb *statetest.Redis, orphans checkout.Orphans, opts checkout.Options) (*checkout.Checkout, *fakeTelegram, *records.ChargeReviews) {
	tg := &fakeTelegram{}
	reviews := records.NewChargeReviews(rdb.Client, rdb.Prefix)
	c := checkout.New(opts, checkout.Deps{
		Telegram: tg, Alerts: noAlerts{}, Orphans: orphans, Engine: flows.NewEngine(nil, locales.En),
		Payments: work.NewPayments(rdb.Client, rdb.Prefix), Quotes: records.NewQuotes(rdb.Client, rdb.Prefix),
		Orders: records.NewOrders(rdb.Client, rdb.Prefix), Wallets: records.NewWallets(rdb.Client, rdb.Prefix),
		Schedule: sched.NewSchedule(rdb.Client, rdb.Prefix), Reviews: reviews,
	})
	return c, tg, reviews
}

// A charge whose quote a Redis crash took is refunded only when the
// fulfilment worker says every upstream order since is claimed; without
// the worker, nothing proves the charge bought nothing, and it is listed
// for an admin instead.
func TestLostQuoteChargeNeedsTheWorkersWordToBeRefunded(t *testing.T) {
	ctx := context.Background()
	paid := checkout.Payment{UserID: chat, ChatID: chat, Currency: "XTR", Total: 120, Payload: "q:lostinacrash", At: time.Now()}

	rdb := statetest.New(t)
	// The store is older than the charge (a running shop records its
	// epoch at start).
	if _, err := work.NewPayments(rdb.Client, rdb.Prefix).StoreEpoch(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	c, tg, reviews := newCheckout(rdb, nil)
	first := paid
	first.ChargeID = "charge-1"
	c.Paid(ctx, first)
	if rv, err := reviews.Get(ctx, first.ChargeID); err != nil || rv.Reason != state.ReviewQuoteGone || len(tg.refunded) != 0 {
		t.Fatalf("without the worker: review %+v %v, refunds %v", rv, err, tg.refunded)
	}

	c, tg, _ = newCheckout(rdb, allClaimed{}) // the same store, with the worker
	second := paid
	second.ChargeID = "charge-2"
	c.Paid(ctx, second)
	if len(tg.refunded) != 1 || tg.refunded[0] != second.ChargeID {
		t.Fatalf("with the worker: refunds %v", tg.refunded)
	}
	if n, _ := reviews.Len(ctx); n != 1 {
		t.Fatalf("%d charges listed for review", n)
	}
}
