package fulfil_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// Named tests of issue 23: a journal that belongs to its shop, and a
// negative proof only where the journal is complete.

// agingJournal opens the journal in dir as a host that kept it for a while
// (its clock two minutes behind, as keptJournal), moved on by passed: a
// test ages the journal's entries past its window by raising passed.
func agingJournal(t *testing.T, dir string, passed *atomic.Int64) *state.Journal {
	t.Helper()
	j, err := state.OpenJournal(dir, fulfil.JournalKeep, func() time.Time {
		return time.Now().Add(-2*time.Minute + time.Duration(passed.Load()))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// withJournal runs a bot of s over journal j.
func (s *shop) withJournal(j *state.Journal) *storefront.Shop {
	return s.NewBot(func(opt *storefront.Options) {
		opt.Reseller, opt.Fulfil, opt.Admins, opt.Journal = s.Client, s.Cfg, []int64{admin}, j
	})
}

// Two shops with the same bot token, each with its own Redis and its own
// upstream account, use one journal directory in turn (a staging host with
// the production token, a shop moved to a new Redis and a new key while
// the old journal is still there). The second shop has an order under the
// charge id of one the first shop bought: it never takes the first shop's
// upstream order for its own, is bought in its own upstream once, and its
// journal counts the first shop's entries without applying them.
func TestTwoShopsOverOneJournalDirectoryKeepTheirOwnOrders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := newShop(t)
	warm := first.Run(first.withJournal(keptJournal(t, dir)))
	first.WaitWatermark()
	warm()
	theirs := first.Paid(topUp("5123456789"), state.PayStars)
	stop := first.Run(first.withJournal(keptJournal(t, dir)))
	theirsDone := first.WaitDelivered(theirs.ID)
	stop()

	second := newShop(t)
	if first.Fake.Token() != second.Fake.Token() {
		t.Fatal("the two shops should share the bot token")
	}
	ctx := context.Background()
	// The same buyer, the same purchase, the same charge id (ids of two
	// stores' charges can meet: the same token, a replayed test account).
	o := &state.Order{QuoteID: "q-second", ChatID: chat, UserID: chat, Lang: "en", Line: theirs.Line, Item: theirs.Item,
		UpstreamUSD: theirs.UpstreamUSD, ShopUSD: theirs.ShopUSD, Stars: theirs.Stars, PayMethod: state.PayStars,
		ChargeID: theirs.ChargeID, PaidAt: time.Now().UTC()}
	ours, _, err := second.Orders.CreatePaid(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	j := keptJournal(t, dir)
	second.Run(second.withJournal(j))
	if err := second.Sched.Put(ctx, fulfil.OrderJob(ours.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	got := second.WaitStatusIn(ours.ID, state.OrderDelivered)
	if n := second.Sim.CreateCount(); n != 1 {
		t.Fatalf("the second shop's upstream got %d creates, want 1", n)
	}
	if up, ok := second.Sim.Order(int(got.UpstreamNumber)); !ok || up.Fields["player_id"] != "5123456789" {
		t.Fatalf("the second shop's order has upstream %d, not an order of its own upstream (the first shop's was %d)", got.UpstreamNumber, theirsDone.UpstreamNumber)
	}
	if j.Foreign() == 0 {
		t.Fatal("the second shop's journal saw none of the first shop's entries: the test proves nothing")
	}
	if _, ok, _ := j.ByCharge(state.JournalCreated, theirs.ChargeID); !ok {
		t.Fatal("the second shop's own create is not in its journal")
	}
	if e, _, _ := j.ByCharge(state.JournalCreated, theirs.ChargeID); e.Number != got.UpstreamNumber {
		t.Fatalf("the journal gives the charge upstream %d, the order has %d", e.Number, got.UpstreamNumber)
	}
}

// Redis is restored from a backup older than the journal's window (15
// min): the order is gone, and the Stars sweep makes it again from the
// charge (its quote survived), with CreatedAt now. The journal's entries
// of its earlier create have aged out, so "no open attempt in the journal"
// proves nothing; the charge's own date shows that, and the order is
// looked for upstream (here: an unclaimed look-alike it cannot prove its
// own, so review) instead of being bought a second time.
func TestRestoreOlderThanTheJournalWindowIsNotBoughtTwice(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	dir := t.TempDir()
	var passed atomic.Int64 // time passed for the journal since the backup
	journal := func() *state.Journal { return agingJournal(t, dir, &passed) }
	warm := s.Run(s.withJournal(journal()))
	s.WaitWatermark()
	warm()
	restore := s.Rdb.Snapshot(t) // the backup
	o := s.Paid(topUp("5123456789"), state.PayStars)
	stop := s.Run(s.withJournal(journal()))
	first := s.WaitDelivered(o.ID)
	stop()
	restore()
	passed.Store(int64(fulfil.JournalKeep + 3*time.Minute))
	// The sweep's order: the same charge, paid when the charge was.
	ctx := context.Background()
	again := *o
	again.ID, again.Status, again.History, again.Rev = 0, "", nil, 0
	re, _, err := s.Orders.CreatePaid(ctx, &again)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sched.Put(ctx, fulfil.OrderJob(re.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Run(s.withJournal(journal()))
	got := s.WaitStatusIn(re.ID, state.OrderNeedsReview, state.OrderDelivered)
	if n := s.Sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one charge (the first was %d, now %s/%d)", n, first.UpstreamNumber, got.Status, got.UpstreamNumber)
	}
	for _, up := range s.Sim.Orders() {
		if int64(up.Number) != got.UpstreamNumber {
			s.Foreign[up.Number] = true // the admin decides
			s.External = s.External.Add(up.ChargedUSD)
		}
	}
}

// An unclaimed upstream order that another order's review named (disputed)
// may still be this order's own create, lost with the store: it must keep
// blocking a second create of this order (review), not be left out of the
// listing as "in an admin's hands".
func TestDisputedUpstreamOrderStillBlocksASecondCreate(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	warm := s.Run(s.Worker(nil))
	s.WaitWatermark()
	warm()
	restore := s.Rdb.Snapshot(t) // the backup
	o := s.Paid(topUp("5123456789"), state.PayStars)
	stop := s.Run(s.Worker(nil))
	first := s.WaitDelivered(o.ID)
	stop()
	restore()
	ctx := context.Background()
	// Another order of the kind went to review naming the unclaimed order.
	if err := s.Orders.Dispute(ctx, first.UpstreamNumber); err != nil {
		t.Fatal(err)
	}
	again := *o
	again.ID, again.Status, again.History, again.Rev = 0, "", nil, 0
	re, _, err := s.Orders.CreatePaid(ctx, &again)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sched.Put(ctx, fulfil.OrderJob(re.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Run(s.Worker(nil))
	got := s.WaitStatusIn(re.ID, state.OrderNeedsReview, state.OrderDelivered)
	if n := s.Sim.CreateCount(); n != 1 {
		t.Fatalf("%d upstream creates for one charge (the first was %d, now %s/%d)", n, first.UpstreamNumber, got.Status, got.UpstreamNumber)
	}
	if got.Status == state.OrderNeedsReview {
		s.Foreign[int(first.UpstreamNumber)] = true // the admin decides
		s.External = s.External.Add(first.ChargedUSD)
	}
}

// Redis is restored on a backup older than the journal's window while the
// shop runs: two identical gift-card purchases, both delivered, lose their
// orders and are made again by the Stars sweep. Any unclaimed order of the
// card serves either purchase as far as the upstream can tell, but each
// one's codes went to its own buyer already: neither purchase may take the
// other's (the second would get codes the first holds), and a purchase
// paid after the restore must buy its own.
func TestRestoreNeverHandsOnePurchasesGiftCardsToAnother(t *testing.T) {
	t.Parallel()
	// Either the shop runs while Redis comes back on the backup (its
	// canary notices), or every replica is down and a new one starts on
	// the restored store (the canary values the journal kept tell it).
	for _, down := range []bool{false, true} {
		t.Run(map[bool]string{false: "shop running", true: "shop down"}[down], func(t *testing.T) {
			t.Parallel()
			restoreGiftCards(t, down)
		})
	}
}

func restoreGiftCards(t *testing.T, down bool) {
	s := newShop(t)
	dir := t.TempDir()
	var passed atomic.Int64 // time passed for the journal since the backup
	journal := func() *state.Journal { return agingJournal(t, dir, &passed) }
	stop := s.Run(s.withJournal(journal()))
	s.WaitWatermark()
	ctx := context.Background()
	hint, err := s.Orders.UpstreamHint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restore := s.Rdb.Snapshot(t) // the backup
	a := s.Paid(giftCards(1), state.PayStars)
	ua := s.WaitDelivered(a.ID).UpstreamNumber
	b := s.Paid(giftCards(1), state.PayStars)
	ub := s.WaitDelivered(b.ID).UpstreamNumber
	passed.Store(int64(fulfil.JournalKeep + 3*time.Minute))
	if down {
		// Let the canary's last values reach the journal's directory.
		seen := func() int64 { n, _ := s.Rdb.Client.Get(ctx, s.Rdb.Prefix+"fulfil:canary").Int64(); return n }
		at := seen()
		if !s.Until(func() bool { return seen() > at+1 }) {
			t.Fatal("the canary is not checked")
		}
		stop()
	}
	restore()
	if down {
		s.Run(s.withJournal(journal()))
	}
	if !s.Until(func() bool { mark, _, err := s.Orders.Loss(ctx); return err == nil && mark >= ub }) {
		t.Fatal("the loss of writes was never recorded")
	}
	// The sweep makes the lost orders again, the later purchase first, with
	// the watermark the restored store knows (checkout's settle).
	again := func(o *state.Order) *state.Order {
		re := *o
		re.ID, re.Status, re.History, re.Rev, re.Watermark = 0, "", nil, 0, hint
		made, _, err := s.Orders.CreatePaid(ctx, &re)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Sched.Put(ctx, fulfil.OrderJob(made.ID), time.Now()); err != nil {
			t.Fatal(err)
		}
		return made
	}
	rb := s.WaitStatusIn(again(b).ID, state.OrderNeedsReview, state.OrderDelivered)
	ra := s.WaitStatusIn(again(a).ID, state.OrderNeedsReview, state.OrderDelivered)
	if rb.UpstreamNumber == ua || ra.UpstreamNumber == ub {
		t.Fatalf("a purchase took the other's delivered gift cards: the first (upstream %d) now claims %d, the second (upstream %d) %d",
			ua, ra.UpstreamNumber, ub, rb.UpstreamNumber)
	}
	c := s.Paid(giftCards(1), state.PayStars)
	uc := s.WaitDelivered(c.ID).UpstreamNumber
	if uc == ua || uc == ub {
		t.Fatalf("a purchase paid after the restore took upstream order %d, delivered before it (%d, %d)", uc, ua, ub)
	}
	if n := s.Sim.CreateCount(); n != 3 {
		t.Fatalf("%d upstream creates for three purchases", n)
	}
	for _, up := range s.Sim.Orders() {
		if n := int64(up.Number); n != uc && n != ra.UpstreamNumber && n != rb.UpstreamNumber {
			s.Foreign[up.Number] = true // in review: the admin decides
			s.External = s.External.Add(up.ChargedUSD)
		}
	}
}

// Redis is restored, under the running shop, on a backup older than the
// journal's window and from before an order failed upstream and its Stars
// were refunded: the order is back in paid, its refund forgotten, its
// failed upstream order unclaimed, and the upstream would now fill a new
// create. Telegram lists the charge as refunded: the sweep settles the
// order as refunded; it is never bought again for a charge the buyer has
// back, nor left for an admin's review.
func TestRestoreThatForgotARefundSettlesTheOrderAsRefunded(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	var passed atomic.Int64 // time passed for the journal since the backup
	j := agingJournal(t, t.TempDir(), &passed)
	b := s.NewBot(func(opt *storefront.Options) {
		opt.Reseller, opt.Fulfil, opt.Admins, opt.Journal = s.Client, s.Cfg, []int64{admin}, j
		opt.Checkout = &checkout.Options{Stars: true, Upstream: s.Client}
	})
	s.Run(b)
	s.WaitWatermark()
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Fail})
	o := s.PaidUnscheduled(giftCards(1), state.PayStars)
	restore := s.Rdb.Snapshot(t) // the backup: the order paid (or about to fail)
	ctx := context.Background()
	if err := s.Sched.Put(ctx, fulfil.OrderJob(o.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(o.ID, state.OrderRefunded)
	if !s.Fake.Refunded(o.ChargeID) {
		t.Fatal("the failed order's charge was not refunded")
	}
	s.Sim.ClearBehavior(simcatalog.DemoGiftCard) // a second create would be filled
	passed.Store(int64(fulfil.JournalKeep + 3*time.Minute))
	restore()
	if !s.Until(func() bool { mark, _, err := s.Orders.Loss(ctx); return err == nil && mark > 0 }) {
		t.Fatal("the loss of writes was never recorded")
	}
	if !s.Until(func() bool { _, err := b.Checkout.Sweep(ctx); return !errors.Is(err, checkout.ErrSweepBusy) }) {
		t.Fatal("the sweep never ran")
	}
	if err := s.Sched.Put(ctx, fulfil.OrderJob(o.ID), time.Now()); err != nil { // as a starting replica does
		t.Fatal(err)
	}
	got := s.WaitStatusIn(o.ID, state.OrderRefunded, state.OrderDelivered, state.OrderNeedsReview)
	if got.Status != state.OrderRefunded || s.Sim.CreateCount() != 1 {
		t.Fatalf("order %s after the restore, %d upstream creates: the refunded charge was bought again or held (%s; history %v)", got.Status, s.Sim.CreateCount(), got.Reason, got.History)
	}
	if n := s.StarRefunds(o.ChargeID); n != 1 {
		t.Fatalf("%d refunds of the charge", n)
	}
	for _, up := range s.Sim.Orders() {
		if int64(up.Number) != got.UpstreamNumber {
			// The failed create, whose claim the restore took (unless the
			// order found it again before the sweep): it cost nothing.
			s.Foreign[up.Number] = true
		}
	}
}

// Telegram lists the charge refunded (a restore took the refund) while a
// create of the order is in doubt, and that create did go through: the
// order is not moved to refunding under its worker (the upstream order
// would be bought and claimed by nobody); the worker settles the create,
// adopts what it made and holds it for an admin, and never buys again.
func TestRefundSeenWhileACreateIsInDoubtHoldsWhatItBought(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	b := s.NewBot(func(opt *storefront.Options) {
		opt.Reseller, opt.Fulfil, opt.Admins = s.Client, s.Cfg, []int64{admin}
		opt.Checkout = &checkout.Options{Stars: true, Upstream: s.Client}
	})
	s.Run(b)
	s.WaitWatermark()
	s.Sim.ScriptCreates(faults.CreatedThenHang(), faults.Created())
	o := s.Paid(giftCards(1), state.PayStars)
	ctx := context.Background()
	if !s.Until(func() bool { return s.Sim.CreateCount() == 1 }) {
		t.Fatal("the create was never sent")
	}
	if err := b.RefundStars(ctx, o.UserID, o.ChargeID); err != nil { // the refund a restore took
		t.Fatal(err)
	}
	if !s.Until(func() bool { _, err := b.Checkout.Sweep(ctx); return !errors.Is(err, checkout.ErrSweepBusy) }) {
		t.Fatal("the sweep never ran")
	}
	got := s.WaitStatusIn(o.ID, state.OrderRefunded, state.OrderDelivered, state.OrderNeedsReview)
	if got.Status != state.OrderNeedsReview || got.UpstreamNumber == 0 || s.Sim.CreateCount() != 1 {
		t.Fatalf("order %s claiming upstream %d after %d creates; want it held with the one it bought", got.Status, got.UpstreamNumber, s.Sim.CreateCount())
	}
	s.External = s.External.Add(got.ChargedUSD) // the admin decides what becomes of it
	s.RefundedInReview[o.ID] = true
}

// Redis comes back on a backup older than the journal's window, under the
// running shop, and a purchase is placed before any periodic check of the
// canary (here: none) has noticed. The gift cards the backup forgot were
// delivered to another buyer: the placement's listing sees them unclaimed,
// but the fence after it notices the loss first, records its mark and
// looks again, so the purchase never takes them.
func TestRestoreJustBeforeAPlacementIsNoticedBeforeAnythingUnclaimedIsTaken(t *testing.T) {
	s := newShop(t)
	s.Cfg.CanaryEvery = time.Hour // only the placements check the canary
	var passed atomic.Int64
	s.Run(s.withJournal(agingJournal(t, t.TempDir(), &passed)))
	s.WaitWatermark()
	ctx := context.Background()
	seen := func() int64 { n, _ := s.Rdb.Client.Get(ctx, s.Rdb.Prefix+"fulfil:canary").Int64(); return n }
	if !s.Until(func() bool { return seen() > 0 }) {
		t.Fatal("the canary is not checked at start")
	}
	restore := s.Rdb.Snapshot(t) // the backup
	b := s.Paid(giftCards(1), state.PayStars)
	ub := s.WaitDelivered(b.ID).UpstreamNumber
	passed.Store(int64(fulfil.JournalKeep + 3*time.Minute))
	restore()
	a := s.Paid(giftCards(1), state.PayStars)
	ra := s.WaitStatusIn(a.ID, state.OrderNeedsReview, state.OrderDelivered)
	if ra.UpstreamNumber == ub {
		t.Fatalf("a purchase placed right after the restore took upstream order %d, delivered to another buyer before it", ub)
	}
	if mark, _, err := s.Orders.Loss(ctx); err != nil || mark < ub {
		t.Fatalf("loss mark %d (%v), want at least %d", mark, err, ub)
	}
	for _, up := range s.Sim.Orders() {
		if n := int64(up.Number); n != ra.UpstreamNumber && !claimedAgain(s, n) {
			s.Foreign[up.Number] = true // the restore took its claim: in the admin's hands
			s.External = s.External.Add(up.ChargedUSD)
		}
	}
}

// The same restore, but it lands while a placement is between reading the
// loss mark and listing the upstream, and the process's canary watch
// notices it before the placement's own fence checks: the fence finds the
// canary as this process saw it last, but the loss noticed since the
// listing began sends the placement to look again, with the new mark.
// Without that, the listing's claims (read after the restore) and its
// mark (read before) disagree, and the gift card the restore forgot,
// delivered to another buyer, is taken.
func TestLossNoticedByTheWatchDuringAListingIsNoticedByItsFence(t *testing.T) {
	s := newShop(t)
	s.Cfg.CanaryEvery = 10 * time.Millisecond
	var target atomic.Int64 // the order whose listing waits
	entered, release := make(chan struct{}), make(chan struct{})
	s.Cfg.Failpoint = func(step string, id int64) error {
		if step == fulfil.FailpointListing && id == target.Load() && target.CompareAndSwap(id, 0) {
			close(entered)
			<-release
		}
		return nil
	}
	var passed atomic.Int64
	s.Run(s.withJournal(agingJournal(t, t.TempDir(), &passed)))
	s.WaitWatermark()
	ctx := context.Background()
	// a is paid before the backup; its first listing waits.
	a := s.PaidUnscheduled(giftCards(1), state.PayStars)
	target.Store(a.ID)
	if err := s.Sched.Put(ctx, fulfil.OrderJob(a.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("order a never listed")
	}
	restore := s.Rdb.Snapshot(t) // the backup: a paid, nothing of b
	b := s.Paid(giftCards(1), state.PayStars)
	ub := s.WaitDelivered(b.ID).UpstreamNumber
	passed.Store(int64(fulfil.JournalKeep + 3*time.Minute))
	restore()
	// The canary watch notices and records the loss while a waits.
	if !s.Until(func() bool { mark, _, err := s.Orders.Loss(ctx); return err == nil && mark >= ub }) {
		t.Fatal("the canary watch never recorded the loss")
	}
	close(release)
	ra := s.WaitStatusIn(a.ID, state.OrderNeedsReview, state.OrderDelivered)
	if ra.UpstreamNumber == ub {
		t.Fatalf("order a took upstream order %d, delivered to another buyer before the restore", ub)
	}
	for _, up := range s.Sim.Orders() {
		if n := int64(up.Number); n != ra.UpstreamNumber && !claimedAgain(s, n) {
			s.Foreign[up.Number] = true // the restore took its claim: in the admin's hands
			s.External = s.External.Add(up.ChargedUSD)
		}
	}
}

// Two purchases of the same gift card. B's attempt is open (its worker
// died after the intent, before the POST: nothing was bought for it) when
// A's create makes upstream order X; then Redis comes back on a backup
// from before A, and X is unclaimed. B's open attempt "could" have made X,
// but the journal holds A's create of X: X is never B's. B finds nothing
// of its own and places again; X waits for its maker's order.
func TestUnclaimedOrderTheJournalSaysAnotherChargeMadeIsNeverAdopted(t *testing.T) {
	s := newShop(t)
	var target atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	s.Cfg.Failpoint = func(step string, id int64) error {
		if step == fulfil.FailpointIntent && id == target.Load() && target.CompareAndSwap(id, 0) {
			close(entered)
			<-release
			return errors.New("the worker dies before the POST")
		}
		return nil
	}
	s.Run(s.withJournal(keptJournal(t, t.TempDir())))
	s.WaitWatermark()
	ctx := context.Background()
	b := s.PaidUnscheduled(giftCards(1), state.PayStars)
	target.Store(b.ID)
	if err := s.Sched.Put(ctx, fulfil.OrderJob(b.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("order b never wrote its intent")
	}
	restore := s.Rdb.Snapshot(t) // the backup: b placing, nothing of a
	a := s.Paid(giftCards(1), state.PayStars)
	x := s.WaitDelivered(a.ID).UpstreamNumber
	restore()
	close(release)
	rb := s.WaitStatusIn(b.ID, state.OrderNeedsReview, state.OrderDelivered)
	if rb.UpstreamNumber == x {
		t.Fatalf("order b took upstream order %d, which a's create made (the journal says so)", x)
	}
	for _, up := range s.Sim.Orders() {
		if n := int64(up.Number); n != rb.UpstreamNumber && !claimedAgain(s, n) {
			s.Foreign[up.Number] = true // a's: its order the restore took
			s.External = s.External.Add(up.ChargedUSD)
		}
	}
}

// claimedAgain reports whether upstream order n is claimed by an order of
// the store: one the restore took, which the archive stored again (its
// buyer's own, delivered before the restore).
func claimedAgain(s *shop, n int64) bool {
	_, err := s.Orders.ByUpstream(context.Background(), n)
	return err == nil
}

// Two purchases of the same gift card. A's create makes upstream order X;
// before A stores it, B (an identical purchase, with no attempt of its
// own yet) finds X unclaimed and takes it; A then places again and gets Y.
// Redis comes back on a backup from before both, and the sweep makes both
// orders again: the journal puts X back on B (it took it; its entry is
// newer than A's create) and Y on A (A's newest create), and nothing is
// bought a third time or left unclaimed. (Before: the oldest create of a
// charge was put back, X on A; B bought again and Y was nobody's.)
func TestCreateAnIdenticalPurchaseTookGoesBackToItAfterALoss(t *testing.T) {
	s := newShop(t)
	var target atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	s.Cfg.Failpoint = func(step string, id int64) error {
		if step == fulfil.FailpointCreated && id == target.Load() && target.CompareAndSwap(id, 0) {
			close(entered)
			<-release
		}
		return nil
	}
	dir := t.TempDir()
	stop := s.Run(s.withJournal(keptJournal(t, dir)))
	s.WaitWatermark()
	ctx := context.Background()
	hint, err := s.Orders.UpstreamHint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restore := s.Rdb.Snapshot(t) // the backup: neither purchase
	a := s.PaidUnscheduled(giftCards(1), state.PayStars)
	target.Store(a.ID)
	if err := s.Sched.Put(ctx, fulfil.OrderJob(a.ID), time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("order a never created its upstream order")
	}
	b := s.Paid(giftCards(1), state.PayStars)
	x := s.WaitDelivered(b.ID).UpstreamNumber
	close(release)
	y := s.WaitDelivered(a.ID).UpstreamNumber
	if x == y {
		t.Fatalf("both purchases hold upstream order %d", x)
	}
	stop()
	restore()
	// The sweep makes the lost orders again, with the restored watermark.
	again := func(o *state.Order) *state.Order {
		re := *o
		re.Status, re.History, re.Rev, re.Watermark = "", nil, 0, hint
		made, _, err := s.Orders.CreatePaid(ctx, &re)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Sched.Put(ctx, fulfil.OrderJob(made.ID), time.Now()); err != nil {
			t.Fatal(err)
		}
		return made
	}
	ra, rb := again(a), again(b)
	s.Run(s.withJournal(keptJournal(t, dir)))
	ga := s.WaitStatusIn(ra.ID, state.OrderNeedsReview, state.OrderDelivered)
	gb := s.WaitStatusIn(rb.ID, state.OrderNeedsReview, state.OrderDelivered)
	if ga.UpstreamNumber != y || gb.UpstreamNumber != x {
		t.Fatalf("after the restore a holds upstream %d (%s), b %d (%s); want a %d, b %d", ga.UpstreamNumber, ga.Status, gb.UpstreamNumber, gb.Status, y, x)
	}
	if n := s.Sim.CreateCount(); n != 2 {
		t.Fatalf("%d upstream creates for two purchases", n)
	}
}
