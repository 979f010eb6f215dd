package state_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// A line a process was writing when it died (torn) is skipped, and what
// follows in another file is still read; a file of a process long gone is
// removed.
func TestJournalSkipsATornLineAndRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	torn := filepath.Join(dir, "journal-1-dead.jsonl")
	good, _ := json.Marshal(state.JournalEntry{At: now, Kind: state.JournalCreated, Charge: "c9", Number: 9})
	if err := os.WriteFile(torn, append(append([]byte(`{"at":"garbage`+"\n"), good...), "\n"+`{"at":"2026-`...), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "journal-2-old.jsonl")
	if err := os.WriteFile(stale, good, 0o600); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	j, err := state.OpenJournal(dir, 10*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := j.ByCharge(state.JournalCreated, "c9"); !ok || e.Number != 9 {
		t.Fatalf("the good line after a torn one: %+v %v", e, ok)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a file nobody wrote to for an hour is still there: %v", err)
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
