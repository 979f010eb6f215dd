package state_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
)

func archiveOf(t *testing.T, dir string, shop state.JournalShop) *state.Archive {
	t.Helper()
	j, err := state.OpenJournal(dir, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	if err := j.Bind(shop, nil); err != nil {
		t.Fatal(err)
	}
	a := state.OpenArchive(j, state.ArchiveKeep)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func usd(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// The archive gives back the entries of the stores asked for, of its own
// bot and account only, and skips a damaged line without losing the
// entries after it.
func TestArchiveReadsTheStoresAskedForAndSkipsDamage(t *testing.T) {
	dir := t.TempDir()
	old := state.JournalShop{Bot: 1, Account: "a", Store: 100}
	a := archiveOf(t, dir, old)
	move := func(a *state.Archive, user int64, ref, amount, bal string, seq int64) {
		t.Helper()
		e := &state.Entry{Ref: ref, Amount: usd(amount)}
		if err := a.Append(state.ArchiveEntry{Kind: state.ArchiveWallet, User: user, Seq: seq, Balance: usd(bal), Entry: e}); err != nil {
			t.Fatal(err)
		}
	}
	move(a, 7, "credit:1", "10", "10", 1)
	// A write cut short (a full disk) between two entries.
	names, _ := filepath.Glob(filepath.Join(dir, "archive-*.arc"))
	if len(names) != 1 {
		t.Fatalf("%d archive files", len(names))
	}
	f, err := os.OpenFile(names[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("57 0badf00d {\"kind\":\"wallet\",\"user\":7,\n")
	_ = f.Close()
	a2 := archiveOf(t, dir, old) // another process of the store
	move(a2, 7, "pay:quote:q1", "-4", "6", 2)
	move(a2, 8, "topup:c1", "5", "5", 1)
	other := archiveOf(t, dir, state.JournalShop{Bot: 1, Account: "b", Store: 100})
	move(other, 7, "credit:x", "99", "99", 1)
	newer := archiveOf(t, dir, state.JournalShop{Bot: 1, Account: "a", Store: 200})
	if err := newer.Append(state.ArchiveEntry{Kind: state.ArchiveBalance, User: 8, Balance: usd("12"), Seq: 1}); err != nil {
		t.Fatal(err)
	}

	got, damaged, err := a.Read([]int64{100})
	if err != nil || damaged != 1 || len(got) != 3 {
		t.Fatalf("read %d entries, %d damaged, %v; want 3 of store 100, 1 damaged", len(got), damaged, err)
	}
	w := state.Wallets(got)
	if len(w) != 2 || w[0].User != 7 || !w[0].Balance.Equal(usd("6")) || len(w[0].Movements) != 2 {
		t.Fatalf("wallets %+v; want user 7 at 6 with two movements", w)
	}
	// Over both stores, the newer store's fact is the balance.
	both, _, _ := newer.Read([]int64{200, 100})
	w = state.Wallets(both)
	if len(w) != 2 || w[1].User != 8 || !w[1].Balance.Equal(usd("12")) || len(w[1].Movements) != 1 {
		t.Fatalf("wallets over two stores %+v; want user 8 at 12 (the newer store's balance)", w)
	}
}

// A reader that keeps its cursor reads each entry once, from every
// process's file; a line still being written at the end of a file is left
// for the next read, not taken for damage.
func TestArchiveReadOnReadsWhatTheFilesGained(t *testing.T) {
	dir := t.TempDir()
	shop := state.JournalShop{Bot: 1, Account: "a", Store: 100}
	a, a2 := archiveOf(t, dir, shop), archiveOf(t, dir, shop)
	order := func(a *state.Archive, charge string) {
		t.Helper()
		if err := a.Append(state.ArchiveEntry{Kind: state.ArchiveOrder, User: 7, Order: &state.Order{ID: 1, ChargeID: charge, UserID: 7, Status: state.OrderDelivered}}); err != nil {
			t.Fatal(err)
		}
	}
	var c state.ArchiveCursor
	read := func(want ...string) {
		t.Helper()
		got, damaged, err := a.ReadOn([]int64{100}, &c, false)
		var charges []string
		for _, e := range got {
			charges = append(charges, e.Order.ChargeID)
		}
		if err != nil || damaged != 0 || !slices.Equal(charges, want) {
			t.Fatalf("read %v, %d damaged, %v; want %v", charges, damaged, err, want)
		}
	}
	order(a, "c1")
	order(a2, "c2")
	read("c1", "c2")
	read()
	order(a2, "c3")
	read("c3")
	// Half a line at the end of a file: a write under way.
	names, _ := filepath.Glob(filepath.Join(dir, "archive-*.arc"))
	f, err := os.OpenFile(names[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("57 0badf00d {\"kind\":\"order\",")
	_ = f.Close()
	read()
	if _, damaged, _ := a.Read([]int64{100}); damaged != 1 {
		t.Fatalf("a whole read counts %d damaged lines, want the cut-short one", damaged)
	}
}

// A journal in memory gives an archive that keeps nothing (and says so by
// being nil, which every method takes).
func TestArchiveOfAJournalInMemoryKeepsNothing(t *testing.T) {
	j, err := state.OpenJournal("", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := state.OpenArchive(j, state.ArchiveKeep)
	if a != nil {
		t.Fatal("an archive over a journal in memory")
	}
	if err := a.Append(state.ArchiveEntry{Kind: state.ArchiveBalance, User: 1}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := a.Read([]int64{1}); err != nil || len(got) != 0 {
		t.Fatalf("read %v %v", got, err)
	}
}

// A store bound as continuing an earlier one takes the earlier store's
// journal entries as its own; a store that does not, never.
func TestJournalOfAStoreThatContinuesAnotherAppliesItsEntries(t *testing.T) {
	dir := t.TempDir()
	open := func() *state.Journal {
		j, err := state.OpenJournal(dir, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		return j
	}
	old := state.JournalShop{Bot: 5, Account: "acct", Store: 1000}
	a := open()
	if err := a.Bind(old, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(state.JournalEntry{Kind: state.JournalPaid, Charge: "ch1", Order: &state.Order{ID: 1, ChargeID: "ch1"}}); err != nil {
		t.Fatal(err)
	}
	b := open()
	if got := b.LastStore(5, "acct"); len(got) != 1 || got[0] != 1000 {
		t.Fatalf("the directory's last store of the shop: %v, want [1000]", got)
	}
	if got := b.LastStore(5, "other"); got != nil {
		t.Fatalf("another account's last store: %v", got)
	}
	if err := b.BindLineage(state.JournalShop{Bot: 5, Account: "acct", Store: 2000}, []int64{1000}, nil); err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := b.ByCharge(state.JournalPaid, "ch1"); !ok || e.Order.ID != 1 {
		t.Fatalf("the continuing store reads %+v %v, want the earlier store's paid order", e, ok)
	}
	if n := b.Foreign(); n != 0 {
		t.Fatalf("%d entries of the earlier store counted as another shop's", n)
	}
	if got := open().LastStore(5, "acct"); len(got) != 2 || got[0] != 2000 || got[1] != 1000 {
		t.Fatalf("the directory's last store after: %v, want [2000 1000]", got)
	}
	// The process that wrote the entry, bound again to the continuing
	// store (Redis came back empty under it), applies its own entries too.
	if err := a.BindLineage(state.JournalShop{Bot: 5, Account: "acct", Store: 2000}, []int64{1000}, nil); err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := a.ByCharge(state.JournalPaid, "ch1"); !ok || e.Order.ID != 1 || a.NewestOrder() != 1 {
		t.Fatalf("the writer bound to the continuing store reads %+v %v (newest order %d), want its own paid order 1", e, ok, a.NewestOrder())
	}
	if err := a.Append(state.JournalEntry{Kind: state.JournalPaid, Charge: "ch2", Order: &state.Order{ID: 2, ChargeID: "ch2"}}); err != nil {
		t.Fatal(err)
	}
	if list, _ := a.Recent(state.JournalPaid); len(list) != 2 {
		t.Fatalf("the writer reads %d paid entries, want 2 (each once)", len(list))
	}
	// A store of the same bot and account that does not continue it.
	c := open()
	if err := c.Bind(state.JournalShop{Bot: 5, Account: "acct", Store: 3000}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.ByCharge(state.JournalPaid, "ch1"); ok {
		t.Fatal("a store that does not continue the earlier one applies its entries")
	}
	// Another account's store naming the same epoch is still another shop.
	d := open()
	if err := d.BindLineage(state.JournalShop{Bot: 5, Account: "other", Store: 2000}, []int64{1000}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.ByCharge(state.JournalPaid, "ch1"); ok {
		t.Fatal("another account's store applies the entries")
	}
}
