package fulfil_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/bot/fulfil"
	"shopbot/bot/storefront"
	"shopbot/state"
)

// Named tests of issue 23: a journal that belongs to its shop, and a
// negative proof only where the journal is complete.

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
	s := newShop(t)
	dir := t.TempDir()
	var passed atomic.Int64 // time passed for the journal since the backup
	journal := func() *state.Journal {
		j, err := state.OpenJournal(dir, fulfil.JournalKeep, func() time.Time {
			return time.Now().Add(-2*time.Minute + time.Duration(passed.Load()))
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		return j
	}
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
