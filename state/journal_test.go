package state_test

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/state"
)

// Two processes of a host share the journal directory: each reads what
// the other wrote (a killed replica's creates are put back by another).
func TestJournalIsSharedByTheHostsProcesses(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, err := state.OpenJournal(dir, 10*time.Minute, clock)
	if err != nil {
		t.Fatal(err)
	}
	b, err := state.OpenJournal(dir, 10*time.Minute, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(state.JournalEntry{Kind: state.JournalCreated, Charge: "c1", Number: 7, Upstream: json.RawMessage(`{"number":7}`)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(state.JournalEntry{Kind: state.JournalPaid, Charge: "c2", Order: &state.Order{ID: 3, ChargeID: "c2", UserID: 9}}); err != nil {
		t.Fatal(err)
	}
	e, ok, err := b.ByCharge(state.JournalCreated, "c1")
	if err != nil || !ok || e.Number != 7 || string(e.Upstream) != `{"number":7}` {
		t.Fatalf("b reads a's create: %+v %v %v", e, ok, err)
	}
	p, ok, err := a.ByCharge(state.JournalPaid, "c2")
	if err != nil || !ok || p.Order == nil || p.Order.UserID != 9 {
		t.Fatalf("a reads b's paid order: %+v %v %v", p, ok, err)
	}
	_ = a.Close() // a is killed; a new process reads everything back
	c, err := state.OpenJournal(dir, 10*time.Minute, clock)
	if err != nil {
		t.Fatal(err)
	}
	if all, err := c.Recent(""); err != nil || len(all) != 2 {
		t.Fatalf("a new process reads %d entries (%v), want 2", len(all), err)
	}
	// Entries older than the keep are no longer read.
	now = now.Add(11 * time.Minute)
	if all, _ := c.Recent(""); len(all) != 0 {
		t.Fatalf("%d entries past the keep", len(all))
	}
}

// A line a process was writing when it died (torn) stays for the next
// read; a damaged entry is skipped and counted, and the good ones after it
// (in the same line, glued to it, or on the next) are read; the damage
// makes the journal prove nothing about the time before the file last
// changed. A file of a process long gone is removed.
func TestJournalSkipsADamagedEntryAndReadsTheNext(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	framed := func(e state.JournalEntry) string {
		b, _ := json.Marshal(e)
		return fmt.Sprintf("%d %08x %s", len(b), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)), b)
	}
	good := framed(state.JournalEntry{At: now, Kind: state.JournalCreated, Charge: "c9", Number: 9})
	glued := framed(state.JournalEntry{At: now, Kind: state.JournalCreated, Charge: "c8", Number: 8})
	bitrot := strings.Replace(framed(state.JournalEntry{At: now, Kind: state.JournalCreated, Charge: "c7", Number: 7}), "c7", "c1", 1)
	content := good[:30] + "\n" + bitrot + "\n" + good[:40] + glued + "\n" + good + "\n" + good[:25]
	if err := os.WriteFile(filepath.Join(dir, "journal-1-dead.jnl"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	written := now.Add(-2 * time.Minute)
	if err := os.Chtimes(filepath.Join(dir, "journal-1-dead.jnl"), written, written); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "journal-2-old.jnl")
	if err := os.WriteFile(stale, []byte(good+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	j, err := state.OpenJournal(dir, 10*time.Minute, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	all, _ := j.Recent(state.JournalCreated)
	var got []string
	for _, e := range all {
		got = append(got, e.Charge)
	}
	if strings.Join(got, ",") != "c8,c9" {
		t.Fatalf("read %v, want the glued c8 and the whole c9 (not the damaged c7, nor the torn tail)", got)
	}
	if n := j.Damaged(); n != 3 {
		t.Fatalf("%d damaged lines, want 3", n)
	}
	if j.Covers(written) {
		t.Fatal("the journal covers a time before a damaged entry was written")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a file nobody wrote to for an hour is still there: %v", err)
	}
}

// A journal proves "nothing was done for a charge" only for a charge paid
// after it started holding its shop's entries, within its keep.
func TestJournalCoversOnlySinceItWasKept(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	j, err := state.OpenJournal(dir, 15*time.Minute, clock)
	if err != nil {
		t.Fatal(err)
	}
	shop := state.JournalShop{Bot: 1, Account: "a", Store: 5}
	if err := j.Bind(shop, nil); err != nil {
		t.Fatal(err)
	}
	started := now
	if j.Covers(started.Add(-time.Minute)) {
		t.Fatal("covers a payment from before the journal was kept")
	}
	now = now.Add(5 * time.Minute)
	if !j.Covers(started.Add(2 * time.Minute)) {
		t.Fatal("does not cover a payment made while it was kept")
	}
	// Another process of the same shop later: the directory has held the
	// shop's entries since the first one.
	k, err := state.OpenJournal(dir, 15*time.Minute, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Bind(shop, nil); err != nil {
		t.Fatal(err)
	}
	if !k.Covers(started.Add(2 * time.Minute)) {
		t.Fatal("a later process of the shop does not cover what the directory holds")
	}
	now = now.Add(20 * time.Minute)
	if j.Covers(started.Add(2 * time.Minute)) {
		t.Fatal("covers a payment whose entries are past the keep")
	}
	mem, _ := state.OpenJournal("", 15*time.Minute, clock)
	if mem.Covers(now) {
		t.Fatal("a memory journal proves something")
	}
}

// Two shops write to one directory (the same bot, another upstream
// account or another store): each applies only its own entries, and the
// others are counted, not applied.
func TestJournalAppliesOnlyItsOwnShopsEntries(t *testing.T) {
	dir := t.TempDir()
	open := func(shop state.JournalShop) *state.Journal {
		j, err := state.OpenJournal(dir, 10*time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Bind(shop, nil); err != nil {
			t.Fatal(err)
		}
		return j
	}
	ours := state.JournalShop{Bot: 42, Account: "acct-a", Store: 1000}
	a := open(ours)
	b := open(state.JournalShop{Bot: 42, Account: "acct-b", Store: 2000})
	c := open(state.JournalShop{Bot: 42, Account: "acct-a", Store: 3000})
	for i, j := range []*state.Journal{a, b, c} {
		if err := j.Append(state.JournalEntry{Kind: state.JournalPaid, Charge: "ch", Order: &state.Order{ID: int64(i + 1), ChargeID: "ch"}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, j := range []*state.Journal{a, b, c} {
		list, _ := j.Recent("")
		if len(list) != 1 || list[0].Order.ID != int64(i+1) {
			t.Fatalf("shop %d reads %d entries (%+v), want its own only", i+1, len(list), list)
		}
		if n := j.Foreign(); n != 2 {
			t.Fatalf("shop %d ignored %d entries of others, want 2", i+1, n)
		}
	}
	// A process of the first shop started later reads its shop's entry.
	if e, ok, _ := open(ours).ByCharge(state.JournalPaid, "ch"); !ok || e.Order.ID != 1 {
		t.Fatalf("a new process of the shop reads %+v %v", e, ok)
	}
}

// The newest order number a shop's journal names counts every process's
// paid entries of the shop (and of the store it continues), never another
// shop's: a new order takes no number at or below it.
func TestJournalNewestOrderIsTheShopsOverEveryProcess(t *testing.T) {
	dir := t.TempDir()
	open := func(shop state.JournalShop, continues ...int64) *state.Journal {
		j, err := state.OpenJournal(dir, 10*time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.BindLineage(shop, continues, nil); err != nil {
			t.Fatal(err)
		}
		return j
	}
	paid := func(j *state.Journal, id int64) {
		t.Helper()
		ch := fmt.Sprintf("ch%d", id)
		if err := j.Append(state.JournalEntry{Kind: state.JournalPaid, Charge: ch, Order: &state.Order{ID: id, ChargeID: ch}}); err != nil {
			t.Fatal(err)
		}
	}
	ours := state.JournalShop{Bot: 42, Account: "acct-a", Store: 1000}
	a, a2 := open(ours), open(ours)
	other := open(state.JournalShop{Bot: 42, Account: "acct-b", Store: 2000})
	if n := a.NewestOrder(); n != 0 {
		t.Fatalf("an empty journal names order %d", n)
	}
	paid(a, 7)
	paid(a2, 5)
	paid(other, 90)
	for i, j := range []*state.Journal{a, a2} {
		if n := j.NewestOrder(); n != 7 {
			t.Fatalf("process %d of the shop: newest order %d, want 7", i+1, n)
		}
	}
	if n := other.NewestOrder(); n != 90 {
		t.Fatalf("the other shop: newest order %d, want 90", n)
	}
	// A store that continues ours counts its numbers; a process bound to
	// another store of the same account that does not continue it does not.
	if n := open(state.JournalShop{Bot: 42, Account: "acct-a", Store: 3000}, 1000).NewestOrder(); n != 7 {
		t.Fatalf("the continuing store: newest order %d, want 7", n)
	}
	if n := open(state.JournalShop{Bot: 42, Account: "acct-a", Store: 4000}).NewestOrder(); n != 0 {
		t.Fatalf("an unrelated store: newest order %d, want 0", n)
	}
}

// A journal without a directory serves its own process from memory, and
// concurrent appends are all kept.
func TestJournalInMemory(t *testing.T) {
	j, err := state.OpenJournal("", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = j.Append(state.JournalEntry{Kind: state.JournalCreated, Charge: "c", Number: int64(i + 1)})
		}()
	}
	wg.Wait()
	if all, _ := j.Recent(state.JournalCreated); len(all) != 50 {
		t.Fatalf("%d of 50 entries", len(all))
	}
	var none *state.Journal
	if err := none.Append(state.JournalEntry{Kind: state.JournalPaid}); err != nil {
		t.Fatal(err)
	}
}

// The canary values a shop's processes saw are read back as the highest of
// each counter over that shop's files; another shop's are never taken.
func TestJournalKeepsTheCanaryOfItsOwnShop(t *testing.T) {
	dir := t.TempDir()
	open := func(shop state.JournalShop) *state.Journal {
		j, err := state.OpenJournal(dir, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = j.Close() })
		if err := j.Bind(shop, nil); err != nil {
			t.Fatal(err)
		}
		return j
	}
	ours, theirs := state.JournalShop{Bot: 1, Account: "a", Store: 1}, state.JournalShop{Bot: 1, Account: "b", Store: 1}
	one, two, other := open(ours), open(ours), open(theirs)
	for _, n := range []struct {
		j *state.Journal
		c map[string]int64
	}{{one, map[string]int64{"k1": 10, "k2": 3}}, {two, map[string]int64{"k1": 7, "k2": 5}}, {other, map[string]int64{"k1": 99}}, {one, map[string]int64{"k1": 12, "k2": 3}}} {
		if err := n.j.NoteCanary(n.c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := open(ours).LastCanary()
	if err != nil || got["k1"] != 12 || got["k2"] != 5 || len(got) != 2 {
		t.Fatalf("LastCanary = %v, %v; want k1 12, k2 5", got, err)
	}
	mem, _ := state.OpenJournal("", time.Minute, nil)
	if err := mem.NoteCanary(map[string]int64{"k": 1}); err != nil {
		t.Fatal(err)
	}
	if got, _ := mem.LastCanary(); len(got) != 0 {
		t.Fatalf("a journal in memory kept %v", got)
	}
}
