package checkout_test

import (
	"context"
	"errors"
	"fmt"
	"shopbot/state/redisstore/records"
	"strings"
	"testing"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// reviewAlerts counts the admin's alerts that a charge needs review,
// by charge id.
func (s *payShop) reviewAlerts() map[string]int {
	out := map[string]int{}
	for _, m := range s.reviewMessages() {
		for _, tx := range s.Fake.StarTransactions() {
			if strings.Contains(m.Text, tx.ID) {
				out[tx.ID]++
			}
		}
	}
	return out
}

// reviewMessages are the admin's messages about charges that need review.
func (s *payShop) reviewMessages() []types.Message {
	var out []types.Message
	for _, m := range s.Fake.MessagesIn(payAdmin) {
		if strings.Contains(m.Text, "needs review") || strings.Contains(m.Text, "need review") {
			out = append(out, m)
		}
	}
	return out
}

// reviews is the review list of Star charges, read from the store.
func (s *payShop) reviews() *records.ChargeReviews {
	return records.NewChargeReviews(s.Rdb.Client, s.Rdb.Prefix)
}

// startedSweep waits until the sweep the bot runs at start has read the
// Star transactions, so a test's charges are found by its own sweeps.
func (s *payShop) startedSweep() {
	s.T.Helper()
	s.Wait("getStarTransactions", 1)
	s.sweep()
}

func TestSweepOnFreshRedisRefundsNothingDelivered(t *testing.T) {
	// 60 alerts to one admin: paced on a fake clock, set before the bot runs.
	s := newPayShopBefore(t, true, false, nil, nil, func(b *storefront.Shop) { bottest.FakePace(b.API) })
	// 30 days of delivered purchases, whose orders lived in a store that
	// is gone: this Redis is brand new.
	now := time.Now()
	var charges []string
	for i := range 60 {
		at := now.Add(-30*24*time.Hour + time.Hour + time.Duration(i)*12*time.Hour)
		charges = append(charges, s.Fake.AddStarPayment(chat, fmt.Sprintf("q:old%02d", i), int64(100+i), at, ""))
	}
	if n := s.sweep(); n != 0 {
		t.Fatalf("sweep repaired %d", n)
	}
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
	if calls := s.Fake.CallsFor("refundStarPayment"); len(calls) != 0 {
		t.Fatalf("%d refunds on a fresh store", len(calls))
	}
	ctx := context.Background()
	if n, err := s.reviews().Len(ctx); err != nil || n != int64(len(charges)) {
		t.Fatalf("%d charges listed for review (%v), want %d", n, err, len(charges))
	}
	alerts := s.reviewAlerts()
	for i, id := range charges {
		if s.Fake.Refunded(id) {
			t.Fatalf("charge %s refunded", id)
		}
		rv, err := s.reviews().Get(ctx, id)
		if err != nil || rv.Reason != state.ReviewBeforeStore || rv.Stars != int64(100+i) || rv.UserID != chat || rv.Payload != fmt.Sprintf("q:old%02d", i) {
			t.Fatalf("review of %s: %+v %v", id, rv, err)
		}
		if alerts[id] != 1 {
			t.Fatalf("charge %s: %d alerts", id, alerts[id])
		}
	}
	// One message names up to 20 charges: an admin's chat takes about one
	// a second, and one alert each would hold the sweep a minute. (The
	// bot's own sweep may list some of them before the test's does: each
	// sweep tells its own.)
	msgs := s.reviewMessages()
	for _, m := range msgs {
		if n := strings.Count(m.Text, "stxTEST"); n > 20 {
			t.Fatalf("one message names %d charges", n)
		}
	}
	if len(msgs) > 6 {
		t.Fatalf("the 60 charges were told in %d messages, want at most 6 (20 a message, a few sweeps)", len(msgs))
	}
	s.noOrder("old00")
	if got := s.texts(chat, "refunded"); len(got) != 0 {
		t.Fatalf("buyer told %q", got)
	}
}

func TestSweepTwiceListsAChargeOnce(t *testing.T) {
	s := newPayShop(t, true, false)
	s.startedSweep()
	ctx := context.Background()
	// One charge older than the store, and one newer whose quote this
	// store never saw (so nothing proves it bought nothing).
	old := s.Fake.AddStarPayment(chat, "q:before", 150, time.Now().Add(-48*time.Hour), "")
	unknown := s.Fake.PushSuccessfulPayment(chat, "q:neverinvoiced", 120, "")
	for range 3 {
		if n := s.sweep(); n != 0 {
			t.Fatalf("sweep repaired %d", n)
		}
	}
	s.Idle(s.b)
	if n, _ := s.reviews().Len(ctx); n != 2 {
		t.Fatalf("%d listed, want 2", n)
	}
	for id, why := range map[string]string{old: state.ReviewBeforeStore, unknown: state.ReviewQuoteGone} {
		if rv, err := s.reviews().Get(ctx, id); err != nil || rv.Reason != why {
			t.Fatalf("review of %s: %+v %v", id, rv, err)
		}
		if s.Fake.Refunded(id) {
			t.Fatalf("charge %s refunded", id)
		}
	}
	if a := s.reviewAlerts(); a[old] != 1 || a[unknown] != 1 || len(a) != 2 {
		t.Fatalf("alerts %v", a)
	}
}

func TestSweepRunsStarsPartWhenWalletPartFails(t *testing.T) {
	s := newPayShop(t, true, false)
	s.startedSweep()
	ctx := context.Background()
	q := s.quote(1)
	s.checkout(q)
	res := s.payInvoice(botapitest.PayOptions{LoseUpdate: true})
	// The wallet part cannot read its list.
	if err := s.Rdb.Client.Set(ctx, s.Rdb.Prefix+"pay:wallet-pending", "not a zset", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var n int
	var err error
	s.Until(func() bool { n, err = s.pay.Sweep(ctx); return !errors.Is(err, checkout.ErrSweepBusy) })
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("sweep error %v, want the wallet part's", err)
	}
	if n != 1 {
		t.Fatalf("sweep repaired %d", n)
	}
	if o := s.order(q.ID); o.ChargeID != res.ChargeID {
		t.Fatalf("order %+v", o)
	}
}

func TestSweepLockIsReleasedOnlyByItsHolder(t *testing.T) {
	s := newPayShop(t, true, false)
	s.startedSweep()
	ctx := context.Background()
	lock := s.Rdb.Prefix + "pay:sweep-lock"
	// While this sweep reads the transactions its lock runs out and another
	// process takes it.
	s.Fake.Stub("getStarTransactions", func(calls.Call) (any, error) {
		s.Rdb.Client.Set(ctx, lock, "another-sweeper", time.Minute)
		return map[string]any{"transactions": []any{}}, nil
	})
	if _, err := s.pay.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Rdb.Client.Get(ctx, lock).Result(); err != nil || v != "another-sweeper" {
		t.Fatalf("the other sweeper's lock is %q (%v)", v, err)
	}
	if _, err := s.pay.Sweep(ctx); !errors.Is(err, checkout.ErrSweepBusy) {
		t.Fatalf("a sweep while another holds the lock: %v", err)
	}
	// The holder releases its own lock.
	s.Fake.Stub("getStarTransactions", nil)
	s.Rdb.Client.Del(ctx, lock)
	if _, err := s.pay.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.Rdb.Client.Exists(ctx, lock).Val(); n != 0 {
		t.Fatal("the lock outlived its sweep")
	}
}

// newPayShopUpstream is a payments shop whose bot also runs fulfilment and
// the orphan scan against the simulator (fast settings).
func newPayShopUpstream(t *testing.T, orphanEvery time.Duration) *payShop {
	return newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller = upstreamHere
		o.Fulfil = fulfil.Config{OrphanEvery: orphanEvery, OrphanAfter: 4 * time.Second, Tick: 10 * time.Millisecond}
	}, nil)
}

// waitOrphanMark waits until the orphan scan has set its mark.
func (s *payShop) waitOrphanMark() {
	s.T.Helper()
	orders := records.NewOrders(s.Rdb.Client, s.Rdb.Prefix)
	if !s.Until(func() bool { m, err := orders.OrphanMark(context.Background()); return err == nil && m > 0 }) {
		s.T.Fatal("the orphan scan never set its mark")
	}
}

// A Star payment arrives for a quote the store does not hold (a Redis
// crash took the quote, its invoice record and perhaps an order made for
// it). Every upstream order since the orphan scan's mark is claimed, so
// nothing was bought for it: it is refunded once, not parked for an admin.
func TestChargeWhoseQuoteACrashTookIsRefundedWhenNothingWasBought(t *testing.T) {
	s := newPayShopUpstream(t, 50*time.Millisecond)
	s.startedSweep()
	s.waitOrphanMark()
	charge := s.Fake.PushSuccessfulPayment(chat, "q:lostinacrash", 120, "")
	if !s.Until(func() bool { return s.Fake.Refunded(charge) }) {
		t.Fatal("the charge was never refunded")
	}
	s.sweep()
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	if n, _ := s.reviews().Len(context.Background()); n != 0 {
		t.Fatalf("%d charges listed for review", n)
	}
}

// The same, but an upstream order nobody claims exists since the mark: it
// may be the one made for this charge, so the charge is not refunded; once
// repairs have had their time it is listed for an admin.
func TestChargeWhoseQuoteACrashTookWaitsThenGoesToReviewWhenAnOrderMayExist(t *testing.T) {
	s := newPayShopUpstream(t, 50*time.Millisecond)
	s.startedSweep()
	s.waitOrphanMark()
	if _, err := s.sim.PlaceOtherClientOrder("/gift-cards/order", map[string]any{
		"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1}); err != nil {
		t.Fatal(err)
	}
	charge := s.Fake.PushSuccessfulPayment(chat, "q:lostinacrash", 120, "")
	ctx := context.Background()
	var rv *state.ChargeReview
	var swept time.Time
	if !s.UntilWithin(15*time.Second, func() bool {
		var err error
		if rv, err = s.reviews().Get(ctx, charge); err == nil {
			return true
		}
		if time.Since(swept) >= 20*time.Millisecond { // a sweep at most every 20 ms, not at each of its own calls
			s.sweep()
			swept = time.Now()
		}
		return false
	}) {
		t.Fatal("the charge was never listed for review")
	}
	if rv.Reason != state.ReviewQuoteGone {
		t.Fatalf("listed as %q", rv.Reason)
	}
	if s.Fake.Refunded(charge) {
		t.Fatal("a charge whose order may exist upstream was refunded")
	}
}

// An unclaimed upstream order the orphan scan saw well before the charge
// cannot be the one made for it: it does not hold the refund back.
func TestChargeWhoseQuoteACrashTookIgnoresOrphansOlderThanIt(t *testing.T) {
	s := newPayShopUpstream(t, time.Hour) // one scan, at start: the test plays the next
	s.startedSweep()
	s.waitOrphanMark()
	up, err := s.sim.PlaceOtherClientOrder("/gift-cards/order", map[string]any{
		"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	orders := records.NewOrders(s.Rdb.Client, s.Rdb.Prefix)
	if _, err := orders.UnclaimedSince(ctx, int64(up.Number), time.Now().Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	charge := s.Fake.PushSuccessfulPayment(chat, "q:lostinacrash", 120, "")
	if !s.Until(func() bool { return s.Fake.Refunded(charge) }) {
		t.Fatal("an orphan older than the charge held its refund back")
	}
	if n, _ := s.reviews().Len(ctx); n != 0 {
		t.Fatalf("%d charges listed for review", n)
	}
}
