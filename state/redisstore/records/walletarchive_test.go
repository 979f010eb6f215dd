package records_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

// archivedWallets returns a wallet store of a new Redis store archiving
// into dir as store epoch of bot 1, account "a", continuing the stores in
// continues.
func archivedWallets(t *testing.T, dir string, store int64, continues ...int64) *records.Wallets {
	t.Helper()
	r := statetest.New(t)
	j, err := state.OpenJournal(dir, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	if err := j.BindLineage(state.JournalShop{Bot: 1, Account: "a", Store: store}, continues, nil); err != nil {
		t.Fatal(err)
	}
	w := records.NewWallets(r.Client, r.Prefix)
	w.Archive = state.OpenArchive(j, state.ArchiveKeep)
	w.ArchiveFailed = func(user int64, ref string, err error) { t.Errorf("archive %d %s: %v", user, ref, err) }
	return w
}

// Every movement is archived as it is made, and a store that comes back
// empty gets each wallet back from the archive once: its balance, its
// ledger and its refs (a top-up charge or a wallet payment is never
// credited or taken again; a ref that names a shop order by its number is
// kept apart, as the new store numbers its orders anew). A buyer who moved
// money in the new store before the restore keeps it too.
func TestWalletsComeBackFromTheArchiveOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	old := archivedWallets(t, dir, 1000)
	if _, _, err := old.Credit(ctx, 7, walletUSD("50"), "admin:gift", "admin credit", "admin:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Debit(ctx, 7, walletUSD("12.30"), "pay:quote:q1", "order"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := old.Credit(ctx, 7, walletUSD("2.00"), "refund:order:5", "refund of order 5", "refund"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := old.Credit(ctx, 9, walletUSD("5"), "admin:other", "admin credit", "admin:1"); err != nil {
		t.Fatal(err)
	}
	// The new store (an empty Redis) continues it; buyer 9 was credited
	// there before the restore ran.
	fresh := archivedWallets(t, dir, 2000, 1000)
	if _, _, err := fresh.Credit(ctx, 9, walletUSD("1"), "admin:new", "admin credit", "admin:1"); err != nil {
		t.Fatal(err)
	}
	entries, damaged, err := fresh.Archive.Read([]int64{1000})
	if err != nil || damaged != 0 {
		t.Fatalf("read the archive: %v (%d damaged)", err, damaged)
	}
	facts := state.Wallets(entries)
	if len(facts) != 2 {
		t.Fatalf("%d wallets in the archive, want 2", len(facts))
	}
	for _, f := range facts {
		if done, err := fresh.Restore(ctx, 1000, f); err != nil || !done {
			t.Fatalf("restore %d: %v %v", f.User, done, err)
		}
		if done, err := fresh.Restore(ctx, 1000, f); err != nil || done {
			t.Fatalf("restore %d again: %v %v, want nothing done", f.User, done, err)
		}
	}
	if bal, _ := fresh.Balance(ctx, 7); !bal.Equal(walletUSD("39.70")) {
		t.Fatalf("buyer 7 has %s, want 39.70", bal)
	}
	if bal, _ := fresh.Balance(ctx, 9); !bal.Equal(walletUSD("6")) {
		t.Fatalf("buyer 9 has %s, want 6 (5 restored, 1 credited in the new store)", bal)
	}
	if n, _ := fresh.LedgerLen(ctx, 7); n != 3 {
		t.Fatalf("buyer 7's ledger has %d lines, want 3", n)
	}
	if led, _ := fresh.Ledger(ctx, 9, 0, 10); len(led) != 2 || led[0].Ref != "admin:new" || led[1].Ref != "admin:other" {
		t.Fatalf("buyer 9's ledger %+v, want the new store's credit first, then the restored one", led)
	}
	// The wallet payment is not taken again, the admin credit not given
	// again; the new store's order 5 gets its own refund.
	if bal, err := fresh.Debit(ctx, 7, walletUSD("12.30"), "pay:quote:q1", "order"); err != nil || !bal.Equal(walletUSD("39.70")) {
		t.Fatalf("the restored payment taken again: %s %v", bal, err)
	}
	if _, dup, err := fresh.Credit(ctx, 7, walletUSD("50"), "admin:gift", "admin credit", "admin:1"); err != nil || !dup {
		t.Fatalf("the restored credit given again: dup=%v %v", dup, err)
	}
	if _, dup, err := fresh.Credit(ctx, 7, walletUSD("1.00"), "refund:order:5", "refund of order 5", "refund"); err != nil || dup {
		t.Fatalf("the new store's order 5 refund: dup=%v %v, want credited", dup, err)
	}
	// A store that later continues this one finds the restored balances
	// (and what moved since) in its own archive.
	later, _, _ := fresh.Archive.Read([]int64{2000, 1000})
	for _, f := range state.Wallets(later) {
		want := map[int64]string{7: "40.70", 9: "6"}[f.User]
		if !f.Balance.Equal(walletUSD(want)) {
			t.Fatalf("the archive's newest balance of %d is %s, want %s", f.User, f.Balance, want)
		}
	}
	// The daily record of every balance.
	all, err := fresh.ArchiveBalances(ctx)
	if err != nil || len(all) != 2 || all[0].User != 7 || !all[0].Balance.Equal(walletUSD("40.70")) || all[0].Seq == 0 {
		t.Fatalf("balances %+v %v", all, err)
	}
}

// An order that reached its end in a store this one continues is stored
// again in its final status: never among the unfinished a restart
// resumes, its upstream order claimed; once per charge; refused when
// another order claims that upstream order.
func TestFinishedOrderStoredAgainClaimsItsUpstreamOrderOnce(t *testing.T) {
	r := statetest.New(t)
	orders := records.NewOrders(r.Client, r.Prefix)
	ctx := t.Context()
	was := &state.Order{ID: 5, QuoteID: "q5", ChatID: 7, UserID: 7, Line: "giftcards", PayMethod: state.PayStars, ChargeID: "stx5",
		Status: state.OrderDelivered, UpstreamNumber: 1001, DeliveredAt: time.Now().Add(-time.Hour), Codes: []string{"AAAA"}}
	got, dup, err := orders.CreateFinished(ctx, state.ArchivedOrder(was), "from the archive")
	if err != nil || dup || got.ID != 5 || got.Status != state.OrderDelivered || got.UpstreamNumber != 1001 || len(got.Codes) != 0 {
		t.Fatalf("stored %+v dup=%v %v; want order 5 delivered with upstream 1001 and no codes", got, dup, err)
	}
	// Its number is taken: a later order, and another stored again under
	// the same number, get the next ones.
	next, _, err := orders.CreatePaid(ctx, &state.Order{QuoteID: "q9", ChatID: 8, UserID: 8, Line: "giftcards", PayMethod: state.PayStars, ChargeID: "stx9"})
	if err != nil || next.ID != 6 {
		t.Fatalf("the next paid order: %+v %v, want number 6", next, err)
	}
	same := *state.ArchivedOrder(was)
	same.ChargeID, same.QuoteID, same.UpstreamNumber = "stx8", "q8", 1002
	if o, _, err := orders.CreateFinished(ctx, &same, "from the archive"); err != nil || o.ID != 7 {
		t.Fatalf("another archived order numbered 5: %+v %v, want number 7", o, err)
	}
	if owner, err := orders.ByUpstream(ctx, 1001); err != nil || owner.ID != got.ID {
		t.Fatalf("upstream 1001 claimed by %+v %v", owner, err)
	}
	if ids, _ := orders.Unfinished(ctx); slices.Contains(ids, got.ID) {
		t.Fatalf("unfinished %v: a restart would resume it", ids)
	}
	if again, dup, err := orders.CreateFinished(ctx, state.ArchivedOrder(was), "from the archive"); err != nil || !dup || again.ID != got.ID {
		t.Fatalf("again: %+v dup=%v %v", again, dup, err)
	}
	other := *was
	other.ChargeID, other.QuoteID = "stx6", "q6"
	if _, _, err := orders.CreateFinished(ctx, &other, "from the archive"); !errors.Is(err, state.ErrUpstreamClaimed) {
		t.Fatalf("another charge with the same upstream order: %v, want ErrUpstreamClaimed", err)
	}
	if _, err := orders.ByCharge(ctx, "stx6"); !errors.Is(err, state.ErrOrderNotFound) {
		t.Fatalf("the refused order was stored: %v", err)
	}
	paid := *was
	paid.ChargeID, paid.Status = "stx7", state.OrderPaid
	if _, _, err := orders.CreateFinished(ctx, &paid, "from the archive"); err == nil {
		t.Fatal("an unfinished order stored as finished")
	}
}

// After Redis went back (a restore from a backup: seq behind numbers its
// buyers were told), a new order takes a number above the newest the
// shop's journal names, and a paid order rebuilt from the journal keeps its
// own number when no order has it.
func TestNewOrderTakesNoNumberBuyersWereToldAfterSeqWentBack(t *testing.T) {
	r := statetest.New(t)
	orders := records.NewOrders(r.Client, r.Prefix)
	ctx := t.Context()
	paid := func(n int, id int64) *state.Order {
		t.Helper()
		o, _, err := orders.CreatePaid(ctx, &state.Order{ID: id, QuoteID: fmt.Sprintf("q%d", n), ChatID: 7, UserID: 7, Line: "giftcards", PayMethod: state.PayStars, ChargeID: fmt.Sprintf("stx%d", n)})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	for n := 1; n <= 3; n++ {
		paid(n, 0)
	}
	// The journal names orders up to 12 (Redis lost 4 to 12).
	orders.Floor = func() int64 { return 12 }
	if o := paid(4, 0); o.ID != 13 {
		t.Fatalf("a new order after seq went back: number %d, want 13 (4 to 12 were told to buyers)", o.ID)
	}
	if o := paid(5, 0); o.ID != 14 {
		t.Fatalf("the next: number %d, want 14", o.ID)
	}
	// A lost paid order rebuilt from the journal keeps its number; one
	// whose number another order has takes the next.
	if o := paid(6, 9); o.ID != 9 {
		t.Fatalf("rebuilt order 9: number %d, want 9", o.ID)
	}
	if o := paid(7, 13); o.ID != 15 {
		t.Fatalf("rebuilt order 13 (taken): number %d, want 15", o.ID)
	}
	if ids, _ := orders.Unfinished(ctx); !slices.Contains(ids, 9) {
		t.Fatalf("unfinished %v: the rebuilt order 9 is not among them", ids)
	}
	// A kept number above seq raises it.
	orders.Floor = nil
	if o := paid(8, 40); o.ID != 40 {
		t.Fatalf("rebuilt order 40: number %d", o.ID)
	}
	if o := paid(9, 0); o.ID != 41 {
		t.Fatalf("after a kept 40: number %d, want 41", o.ID)
	}
	// Numbers the archive names (older than the journal keeps) are kept
	// too, and seq never goes back.
	if err := orders.KeepNumbers(ctx, 60); err != nil {
		t.Fatal(err)
	}
	if err := orders.KeepNumbers(ctx, 50); err != nil {
		t.Fatal(err)
	}
	if o := paid(10, 0); o.ID != 61 {
		t.Fatalf("after keeping numbers up to 60: number %d, want 61", o.ID)
	}
}
