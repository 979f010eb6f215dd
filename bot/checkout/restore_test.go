package checkout_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

// The store comes back on a backup that holds the quote but not the order
// paid for it (the backup was taken between the two), and Telegram then
// delivers the payment's update again. Meanwhile the shop noted newer
// upstream numbers than the create it made before the restore, so an
// order made with the newest number as its watermark would never see that
// create and would buy the purchase a second time. The quote's watermark
// (the newest number when the quote was saved) bounds every create of it:
// the earlier create is found, and nothing is bought twice. The backup is
// older than the journal's window, so the journal cannot tell.
func TestPaymentUpdateAgainAfterARestoreIsNotBoughtTwice(t *testing.T) {
	// The journal's clock jumps past its window at the restore: the
	// backup is older than what the journal still holds.
	var passed atomic.Int64
	journal, err := state.OpenJournal(t.TempDir(), fulfil.JournalKeep, func() time.Time { return time.Now().Add(time.Duration(passed.Load())) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = journal.Close() })
	s := newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller, o.Journal = upstreamHere, journal
		// The restore is not noticed by the canary before the update
		// arrives again, and the Stars sweep stays out of it: the update
		// makes the order.
		o.Fulfil = fulfil.Config{OrphanEvery: 50 * time.Millisecond, OrphanAfter: time.Minute, CanaryEvery: time.Hour, Settle: 200 * time.Millisecond, Tick: 10 * time.Millisecond}
	}, nil)
	s.startedSweep()
	s.waitOrphanMark()
	ctx := context.Background()
	q := s.quote(1)
	backup := s.Rdb.Snapshot(t) // holds the quote, not what follows
	s.checkout(q)
	paid := s.payInvoice(botapitest.PayOptions{})
	first := s.order(q.ID)
	if !s.Until(func() bool {
		o, err := s.pay.Orders.Get(ctx, first.ID)
		return err == nil && o.Status == state.OrderDelivered
	}) {
		t.Fatal("the first order was never delivered")
	}
	o, _ := s.pay.Orders.Get(ctx, first.ID)
	bought := o.UpstreamNumber
	backup()
	passed.Store(int64(fulfil.JournalKeep + 3*time.Minute))
	// The shop goes on noting the upstream's newest number (the orphan
	// scan), now at or above the create the backup does not know.
	orders := records.NewOrders(s.Rdb.Client, s.Rdb.Prefix)
	if !s.Until(func() bool { n, err := orders.UpstreamHint(ctx); return err == nil && n >= bought }) {
		t.Fatal("the shop never noted the upstream's newest number again")
	}
	s.Fake.PushSuccessfulPayment(chat, paid.Payload, paid.TotalAmount, paid.ChargeID)
	again := s.order(q.ID)
	if !s.Until(func() bool {
		o, err := s.pay.Orders.Get(ctx, again.ID)
		return err == nil && (o.Status == state.OrderDelivered || o.Status == state.OrderNeedsReview)
	}) {
		o, _ := s.pay.Orders.Get(ctx, again.ID)
		t.Fatalf("the order made again is %s, want delivered (its earlier create adopted) or needs_review", o.Status)
	}
	if n := s.sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one payment", n)
	}
	if o, _ := s.pay.Orders.Get(ctx, again.ID); o.Status == state.OrderDelivered && o.UpstreamNumber != bought {
		t.Fatalf("delivered with upstream order %d, want %d", o.UpstreamNumber, bought)
	}
}

// Redis came back empty moments after a payment, and the payment's update
// is handled only now (Telegram delivers it again). Its quote is gone with
// the store, and every upstream order above the orphan scan's new mark is
// claimed: but that mark was set by the empty store at the newest
// upstream order, so "all claimed" says nothing of creates made for the
// charge before. Paid before the store's epoch, it is listed for review,
// never refunded on that word.
func TestOldPaymentUpdateOnAStoreThatCameBackEmptyIsListedNotRefunded(t *testing.T) {
	s := newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller = upstreamHere
		o.Fulfil = fulfil.Config{OrphanEvery: 50 * time.Millisecond, OrphanAfter: time.Minute, Tick: 10 * time.Millisecond}
	}, nil)
	s.startedSweep()
	s.waitOrphanMark()
	ctx := context.Background()
	epoch, err := work.NewPayments(s.Rdb.Client, s.Rdb.Prefix).StoreEpoch(ctx, time.Now()) // recorded at the start
	if err != nil {
		t.Fatal(err)
	}
	charge := s.Fake.PushSuccessfulPaymentAt(chat, "q:gonewiththestore", 120, "", epoch.Add(-2*time.Second))
	var rv *state.ChargeReview
	if !s.Until(func() bool { rv, err = s.reviews().Get(ctx, charge); return err == nil }) {
		t.Fatalf("the charge was never listed for review (refunded: %v)", s.Fake.Refunded(charge))
	}
	if rv.Reason != state.ReviewBeforeStore {
		t.Fatalf("listed as %q, want %q", rv.Reason, state.ReviewBeforeStore)
	}
	s.sweep()
	if s.Fake.Refunded(charge) {
		t.Fatal("a charge older than the store was refunded")
	}
}
