package checkout_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/reseller/resellersim"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
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

// openJournal opens a process's journal in dir.
func openJournal(t *testing.T, dir string) *state.Journal {
	t.Helper()
	j, err := state.OpenJournal(dir, fulfil.JournalKeep, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// wipe empties the shop's Redis as a lost volume would: every key of the
// shop is gone.
func (s *payShop) wipe() {
	s.T.Helper()
	statetest.DeletePrefix(context.Background(), s.Rdb.Client, s.Rdb.Prefix)
	if n, _ := s.Rdb.Client.Exists(context.Background(), s.Rdb.Prefix+redisstore.StoreEpochKey).Result(); n != 0 {
		s.T.Fatal("the store's epoch survived the wipe")
	}
}

// archived waits until the archive of store shows the order of charge (a
// Star charge's id, a wallet payment's ref) delivered, and returns it as
// archived: its buyer was handed it by then (the archive is written right
// after).
func (s *payShop) archived(charge string, store int64) *state.Order {
	s.T.Helper()
	var a *state.Order
	if !s.Until(func() bool {
		entries, _, _ := s.pay.Wallets.Archive.Read([]int64{store})
		a = state.Orders(entries)[charge]
		return a != nil && a.Status == state.OrderDelivered
	}) {
		s.T.Fatalf("the delivered order of %s was never archived", charge)
	}
	return a
}

// Redis loses its volume while the shop is down and comes back empty; the
// shop starts again on it with its journal's directory. The new store
// continues the old one: the buyer's wallet is back (balance, movements,
// and the refs that keep a payment from being taken twice), and the
// wallet purchase the journal still holds is not charged again.
func TestStoreThatComesBackEmptyGetsItsWalletsBack(t *testing.T) {
	dir := t.TempDir()
	first := openJournal(t, dir)
	s := newPayShopWith(t, false, true, func(o *storefront.Options) {
		o.Reseller, o.Journal = upstreamHere, first
	}, nil)
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(100), "admin:gift-1", "admin credit", "admin:9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(2)
	s.checkout(q)
	o := s.order(q.ID)
	if !s.Until(func() bool {
		got, err := s.pay.Orders.Get(ctx, o.ID)
		return err == nil && got.Status == state.OrderDelivered
	}) {
		t.Fatal("the wallet purchase was never delivered")
	}
	oldStore := first.Shop().Store
	s.archived(checkout.WalletRef(q.ID), oldStore)
	bal, _ := s.pay.Wallets.Balance(ctx, chat)
	lines, _ := s.pay.Wallets.LedgerLen(ctx, chat)
	delivered, _ := s.pay.Orders.Get(ctx, o.ID)
	s.stop()
	s.wipe()

	next := openJournal(t, dir)
	s.again(next)
	if got := next.Continues(); len(got) != 1 || got[0] != oldStore {
		t.Fatalf("the new store continues %v, want [%d]", got, oldStore)
	}
	if !s.Until(func() bool { b, err := s.pay.Wallets.Balance(ctx, chat); return err == nil && b.Equal(bal) }) {
		b, _ := s.pay.Wallets.Balance(ctx, chat)
		t.Fatalf("the wallet holds %s after the store came back empty, want %s", b, bal)
	}
	if n, _ := s.pay.Wallets.LedgerLen(ctx, chat); n != lines {
		t.Fatalf("the wallet's ledger has %d lines, want %d", n, lines)
	}
	if _, moved, _ := s.pay.Wallets.Moved(ctx, chat, checkout.WalletRef(q.ID)); !moved {
		t.Fatal("the wallet payment's ref is not back: it could be taken again")
	}
	// The journal still holds the wallet purchase, and the archive shows
	// it delivered: it is back as delivered, neither charged nor bought
	// nor sent again.
	s.sweep()
	s.Idle(s.b)
	if b, _ := s.pay.Wallets.Balance(ctx, chat); !b.Equal(bal) {
		t.Fatalf("the wallet holds %s after the sweep, want %s (charged once)", b, bal)
	}
	if n := s.sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one purchase", n)
	}
	again, err := s.pay.Orders.ByCharge(ctx, checkout.WalletRef(q.ID))
	if err != nil || again.Status != state.OrderDelivered || again.UpstreamNumber != delivered.UpstreamNumber || again.DeliveredAt.IsZero() {
		t.Fatalf("the delivered wallet purchase is back as %+v (%v), want delivered with upstream order %d", again, err, delivered.UpstreamNumber)
	}
	if len(again.Codes) != 0 {
		t.Fatal("the archive kept the purchase's codes")
	}
	// A second start of the store restores nothing again.
	s.stop()
	s.again(openJournal(t, dir))
	s.Idle(s.b)
	if b, _ := s.pay.Wallets.Balance(ctx, chat); !b.Equal(bal) {
		t.Fatalf("the wallet holds %s after another start, want %s", b, bal)
	}
}

// Redis loses its volume while a paid Stars purchase is at the upstream
// (created, not yet complete), with every replica down. The shop starts
// again on the empty store: the sweep finds the charge, older than the
// new store, whose order the journal of the store it continues holds; the
// order is made again, takes back its upstream order and is delivered to
// its buyer, with no second create, no refund and nothing for review.
func TestPaidOrderUnderWayWhenTheStoreCameBackEmptyIsDeliveredNotListed(t *testing.T) {
	dir := t.TempDir()
	first := openJournal(t, dir)
	s := newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller, o.Journal = upstreamHere, first
		o.Fulfil = fulfil.Config{OrphanEvery: 50 * time.Millisecond, OrphanAfter: time.Minute, Settle: 200 * time.Millisecond, Tick: 10 * time.Millisecond}
	}, nil)
	s.startedSweep()
	s.sim.SetBehavior("gift_card", resellersim.Behavior{Mode: resellersim.Complete, CompleteAfter: time.Hour})
	ctx := context.Background()
	q := s.quote(1)
	s.checkout(q)
	paid := s.payInvoice(botapitest.PayOptions{})
	o := s.order(q.ID)
	var number int64
	if !s.Until(func() bool {
		got, err := s.pay.Orders.Get(ctx, o.ID)
		number = got.UpstreamNumber
		return err == nil && number != 0
	}) {
		t.Fatal("the order never reached the upstream")
	}
	s.stop()
	s.wipe()
	if err := s.sim.CompleteOrder(int(number)); err != nil {
		t.Fatal(err)
	}

	s.again(openJournal(t, dir))
	var got *state.Order
	if !s.Until(func() bool {
		var err error
		got, err = s.pay.Orders.ByCharge(ctx, paid.ChargeID)
		return err == nil && got.Status == state.OrderDelivered && !got.DeliveredAt.IsZero()
	}) {
		rv, _ := s.reviews().Get(ctx, paid.ChargeID)
		t.Fatalf("the paid order was not rebuilt and delivered (order %+v, review %+v, refunded %v)", got, rv, s.Fake.Refunded(paid.ChargeID))
	}
	if got.UpstreamNumber != number || got.UserID != chat {
		t.Fatalf("delivered with upstream %d to %d, want %d to %d", got.UpstreamNumber, got.UserID, number, chat)
	}
	if n := s.sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one payment", n)
	}
	if _, err := s.reviews().Get(ctx, paid.ChargeID); err == nil {
		t.Fatal("the charge was listed for review")
	}
	if s.Fake.Refunded(paid.ChargeID) {
		t.Fatal("the charge was refunded")
	}
	up, _ := s.sim.Order(int(number))
	if len(up.Codes) == 0 || len(s.texts(chat, up.Codes[0])) != 1 {
		t.Fatalf("the buyer did not get the codes once: %q", s.texts(chat, ""))
	}
}

// A wallet top-up paid in Stars and credited before Redis lost its
// volume: the new store continues the old one and gets the wallet back
// from the archive, and the Stars sweep, which still lists the charge,
// neither credits it again nor lists it for review.
func TestTopupCreditedBeforeTheStoreCameBackEmptyIsNotCreditedAgainNorListed(t *testing.T) {
	dir := t.TempDir()
	s := newPayShopWith(t, true, true, func(o *storefront.Options) { o.Journal = openJournal(t, dir) }, nil)
	s.startedSweep()
	// Paid ten minutes ago and credited then (its update handled).
	paidAt := time.Now().Add(-10 * time.Minute)
	tp := s.topupRecord(chat, "10", 770, time.Now().Add(15*time.Minute))
	charge := s.Fake.AddStarPayment(chat, "w:"+tp.ID, 770, paidAt, "")
	if out, err := s.pay.Wallets.SettleTopup(context.Background(), state.TopupCharge{ChargeID: charge, Payer: chat, TopupID: tp.ID, Stars: 770, PaidAt: paidAt},
		state.TopupRules{WalletOn: true, Grace: time.Minute}); err != nil || !out.Fresh {
		t.Fatalf("credit %+v %v", out, err)
	}
	s.sweep()
	s.waitBalance(chat, "10")
	res := struct{ ChargeID string }{charge}
	s.stop()
	s.wipe()
	s.again(openJournal(t, dir))
	s.waitBalance(chat, "10")
	s.sweep()
	s.Idle(s.b)
	if b := s.balance(chat); !b.Equal(usd("10")) {
		t.Fatalf("balance %s after the sweep, want 10 (credited once)", b)
	}
	if _, err := s.reviews().Get(context.Background(), res.ChargeID); err == nil {
		t.Fatal("the credited top-up was listed for review")
	}
	if s.Fake.Refunded(res.ChargeID) {
		t.Fatal("the credited top-up was refunded")
	}
}

// A Stars purchase delivered long before Redis lost its volume (its
// journal entries aged out): the sweep of the store that continues the
// old one still lists the charge, without an order, and older than the
// store. The archive shows it delivered to the buyer who paid: its order
// is back, delivered, claiming its upstream order; it is not listed for
// review, not refunded, not bought or sent again.
func TestChargeDeliveredLongBeforeTheStoreCameBackEmptyIsNotListed(t *testing.T) {
	dir := t.TempDir()
	var passed atomic.Int64
	aging := func() *state.Journal {
		j, err := state.OpenJournal(dir, fulfil.JournalKeep, func() time.Time { return time.Now().Add(time.Duration(passed.Load())) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		return j
	}
	first := aging()
	s := newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller, o.Journal = upstreamHere, first
	}, nil)
	s.startedSweep()
	ctx := context.Background()
	q := s.quote(1)
	s.checkout(q)
	paid := s.payInvoice(botapitest.PayOptions{})
	o := s.order(q.ID)
	if a := s.archived(paid.ChargeID, first.Shop().Store); a.ID != o.ID {
		t.Fatalf("the order is archived as #%d, want #%d", a.ID, o.ID)
	}
	delivered, _ := s.pay.Orders.Get(ctx, o.ID)
	s.stop()
	sent := len(s.Fake.MessagesIn(chat)) // once the bot is stopped: what it sent after delivering is in
	s.wipe()
	passed.Store(int64(fulfil.JournalKeep + 5*time.Minute)) // the journal's entries aged out

	s.again(aging())
	s.sweep()
	s.Idle(s.b)
	if _, err := s.reviews().Get(ctx, paid.ChargeID); err == nil {
		t.Fatal("the delivered charge was listed for review")
	}
	back, err := s.pay.Orders.ByCharge(ctx, paid.ChargeID)
	if err != nil || back.Status != state.OrderDelivered || back.UpstreamNumber != delivered.UpstreamNumber || back.UserID != chat {
		t.Fatalf("the charge's order is back as %+v (%v), want delivered to %d with upstream order %d", back, err, chat, delivered.UpstreamNumber)
	}
	if owner, err := s.pay.Orders.ByUpstream(ctx, delivered.UpstreamNumber); err != nil || owner.ID != back.ID {
		t.Fatalf("upstream order %d is claimed by %+v (%v), want the order back", delivered.UpstreamNumber, owner, err)
	}
	if s.Fake.Refunded(paid.ChargeID) {
		t.Fatal("the delivered charge was refunded")
	}
	if n := s.sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one payment", n)
	}
	if n := len(s.Fake.MessagesIn(chat)); n != sent {
		t.Fatalf("the buyer got %d more messages", n-sent)
	}
}

// Redis is restored from a backup taken before a Stars purchase, after
// the purchase was delivered (the store keeps its epoch: not a new
// store). The replica's canary notices the loss, and before the sweep
// looks at the charge the archive puts the delivered order back as it was
// (its number, its upstream order claimed): the buyer is not sent the
// codes again, nothing is listed for review, refunded or bought again. A
// purchase paid right after the restore, before anything noticed it, takes
// a number of its own, past those the journal names (the restored seq is
// behind them): the number the first buyer was told stays theirs.
func TestOrderDeliveredAfterTheBackupIsBackAfterARestore(t *testing.T) {
	journal := openJournal(t, t.TempDir())
	s := newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller, o.Journal = upstreamHere, journal
	}, nil)
	s.startedSweep()
	ctx := context.Background()
	backup := s.Rdb.Snapshot(t) // before the quote, the payment and the order
	q := s.quote(1)
	s.checkout(q)
	paid := s.payInvoice(botapitest.PayOptions{})
	o := s.order(q.ID)
	s.archived(paid.ChargeID, journal.Shop().Store)
	delivered, _ := s.pay.Orders.Get(ctx, o.ID)
	backup()
	q2 := s.quote(1)
	s.checkout(q2)
	paid2 := s.payInvoice(botapitest.PayOptions{})
	if o2 := s.order(q2.ID); o2.ID <= delivered.ID {
		t.Fatalf("the purchase paid after the restore is order #%d, a number the first buyer was told (#%d) or before it", o2.ID, delivered.ID)
	}
	var back *state.Order
	if !s.Until(func() bool {
		var err error
		back, err = s.pay.Orders.ByCharge(ctx, paid.ChargeID)
		return err == nil
	}) {
		t.Fatal("the charge has no order after the restore")
	}
	s.sweep()
	if !s.Until(func() bool {
		o2, err := s.pay.Orders.ByCharge(ctx, paid2.ChargeID)
		return err == nil && !o2.DeliveredAt.IsZero()
	}) {
		t.Fatal("the purchase paid after the restore was never delivered")
	}
	s.Idle(s.b)
	back, _ = s.pay.Orders.ByCharge(ctx, paid.ChargeID)
	if back.ID != delivered.ID || back.Status != state.OrderDelivered || back.UpstreamNumber != delivered.UpstreamNumber {
		t.Fatalf("the order is back as #%d %s upstream %d, want #%d delivered upstream %d", back.ID, back.Status, back.UpstreamNumber, delivered.ID, delivered.UpstreamNumber)
	}
	ready := 0
	for _, m := range s.Fake.MessagesIn(chat) {
		if strings.Contains(m.Text, fmt.Sprintf("Order #%d is ready", delivered.ID)) {
			ready++
		}
	}
	if ready != 1 {
		t.Fatalf("the buyer was told %d times that order #%d is ready, want once", ready, delivered.ID)
	}
	if _, err := s.reviews().Get(ctx, paid.ChargeID); err == nil {
		t.Fatal("the delivered charge was listed for review")
	}
	if s.Fake.Refunded(paid.ChargeID) {
		t.Fatal("the delivered charge was refunded")
	}
	if n := s.sim.CreateCount(); n != 2 {
		t.Fatalf("%d upstream creates for two payments", n)
	}
}

// Redis is restored from a backup taken after a Stars purchase's quote was
// saved and before it was paid, after the purchase was delivered; the
// payment's update comes again (the restored intake queue, Telegram's
// redelivery) before any replica noticed the loss. Its order comes back
// from the archive as it was, its number and upstream order kept, whether
// the journal still holds the paid order or has aged it out: nothing is
// bought again, sent again or listed for review.
func TestPaymentThatComesAgainAfterARestoreGetsItsDeliveredOrderBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		aged bool // the journal's keep has passed since the payment
	}{{"journal holds it", false}, {"journal aged it out", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var shift atomic.Int64 // the journal's clock runs ahead by it
			journal, err := state.OpenJournal(t.TempDir(), fulfil.JournalKeep, func() time.Time { return time.Now().Add(time.Duration(shift.Load())) })
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = journal.Close() })
			s := newPayShopWith(t, true, false, func(o *storefront.Options) {
				o.Reseller, o.Journal = upstreamHere, journal
			}, nil)
			ctx := context.Background()
			q := s.quote(1)
			backup := s.Rdb.Snapshot(t) // the quote, not the payment or the order
			s.checkout(q)
			paidAt := time.Now()
			paid := s.payInvoice(botapitest.PayOptions{})
			s.archived(paid.ChargeID, journal.Shop().Store)
			delivered, _ := s.pay.Orders.ByCharge(ctx, paid.ChargeID)
			s.Idle(s.b)
			sent := len(s.Fake.MessagesIn(chat))
			if tc.aged {
				shift.Store(int64(fulfil.JournalKeep + time.Minute))
			}
			backup()
			s.Fake.PushSuccessfulPaymentAt(chat, "q:"+q.ID, q.Stars, paid.ChargeID, paidAt)
			var back *state.Order
			if !s.Until(func() bool {
				var err error
				back, err = s.pay.Orders.ByCharge(ctx, paid.ChargeID)
				return err == nil
			}) {
				t.Fatal("the charge has no order after its payment came again")
			}
			s.Idle(s.b)
			back, _ = s.pay.Orders.ByCharge(ctx, paid.ChargeID)
			if back.ID != delivered.ID || back.Status != state.OrderDelivered || back.UpstreamNumber != delivered.UpstreamNumber {
				t.Fatalf("the order is back as #%d %s upstream %d, want #%d delivered upstream %d", back.ID, back.Status, back.UpstreamNumber, delivered.ID, delivered.UpstreamNumber)
			}
			// The review prompt may come after the delivery (once); nothing
			// else may.
			prompts := 0
			for i, m := range s.Fake.MessagesIn(chat) {
				if strings.Contains(m.Text, "How was order") {
					prompts++
				} else if i >= sent {
					t.Fatalf("the buyer got another message after the payment came again: %q", m.Text)
				}
			}
			if prompts > 1 {
				t.Fatalf("the buyer was asked %d times to rate the order", prompts)
			}
			if _, err := s.reviews().Get(ctx, paid.ChargeID); err == nil {
				t.Fatal("the delivered charge was listed for review")
			}
			if s.Fake.Refunded(paid.ChargeID) {
				t.Fatal("the delivered charge was refunded")
			}
			if n := s.sim.CreateCount(); n != 1 {
				t.Fatalf("%d upstream creates for one payment", n)
			}
		})
	}
}

// A buyer blocks the bot right after paying: the order is delivered but
// never reaches them, and the archive says so. Redis comes back empty; the
// new store stores the order again, still waiting for its buyer, and their
// /start hands it over (before: stored as handed over, it never came).
func TestOrderABuyerNeverGotIsHandedOverAtStartAfterTheStoreCameBackEmpty(t *testing.T) {
	dir := t.TempDir()
	journal := func() *state.Journal { return openJournal(t, dir) }
	first := journal()
	s := newPayShopWith(t, true, false, func(o *storefront.Options) {
		o.Reseller, o.Journal = upstreamHere, first
	}, nil)
	ctx := context.Background()
	q := s.quote(1)
	s.checkout(q)
	s.Fake.BlockChat(chat)
	paid := s.payInvoice(botapitest.PayOptions{})
	s.archived(paid.ChargeID, first.Shop().Store)
	o, _ := s.pay.Orders.ByCharge(ctx, paid.ChargeID)
	if !o.DeliveredAt.IsZero() {
		t.Fatal("the order reached a buyer who blocked the bot")
	}
	s.stop()
	s.wipe()
	s.again(journal())
	var back *state.Order
	if !s.Until(func() bool {
		var err error
		back, err = s.pay.Orders.ByCharge(ctx, paid.ChargeID)
		return err == nil
	}) {
		t.Fatal("the order was never stored again")
	}
	if back.Status != state.OrderDelivered || !back.DeliveredAt.IsZero() {
		t.Fatalf("the order is back as %s, delivered at %v; want delivered, not yet handed over", back.Status, back.DeliveredAt)
	}
	s.Fake.UnblockChat(chat)
	s.Fake.SendText(chat, "/start")
	ready := fmt.Sprintf("Order #%d is delivered", back.ID)
	if !s.Until(func() bool {
		for _, m := range s.Fake.MessagesIn(chat) {
			if strings.Contains(m.Text, ready) {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the buyer's /start did not hand over the order (no %q)", ready)
	}
	if n := s.sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one payment", n)
	}
}
