package state_test

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shopbot/state"
)

// A replica of a newer build shares the journal directory during an
// upgrade. An entry this build cannot read (a newer version, or a kind it
// does not know: a new kind of attempt) is never applied, and the journal
// no longer proves that nothing was sent for the time it was written: its
// silence about an attempt there could be wrong.
func TestJournalDoesNotProveAcrossEntriesOfANewerVersion(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	clock := func() time.Time { return now }
	// This build's journal was kept for a while already.
	early, err := state.OpenJournal(dir, 10*time.Minute, func() time.Time { return now.Add(-5 * time.Minute) })
	if err != nil {
		t.Fatal(err)
	}
	_ = early.Close()
	j, err := state.OpenJournal(dir, 10*time.Minute, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(state.JournalEntry{Kind: state.JournalCreated, Charge: "c1", Number: 1}); err != nil {
		t.Fatal(err)
	}
	written := now.Add(-2 * time.Minute)
	if !j.Covers(written) {
		t.Fatal("the journal does not cover its own time before the newer entries")
	}
	framed := func(doc string) string {
		return fmt.Sprintf("%d %08x %s\n", len(doc), crc32.Checksum([]byte(doc), crc32.MakeTable(crc32.Castagnoli)), doc)
	}
	at, _ := json.Marshal(written)
	newer := framed(`{"v":2,"at":`+string(at)+`,"shop":{},"kind":"created","charge":"c2","number":2}`) +
		framed(`{"v":1,"at":`+string(at)+`,"shop":{},"kind":"intent2","charge":"c3","attempt":"a3"}`) +
		framed(`{"v":1,"at":`+string(at)+`,"shop":{},"kind":"created","charge":"c4","number":4}`)
	if err := os.WriteFile(filepath.Join(dir, "journal-9-newer.jnl"), []byte(newer), 0o600); err != nil {
		t.Fatal(err)
	}
	all, err := j.Recent("")
	if err != nil {
		t.Fatal(err)
	}
	var charges []string
	for _, e := range all {
		charges = append(charges, e.Charge)
	}
	if fmt.Sprint(charges) != "[c4 c1]" {
		t.Fatalf("read %v, want c4 (this build's format) and c1, never the newer entries", charges)
	}
	if j.Covers(written) {
		t.Fatal("the journal proves nothing was sent across entries it cannot read")
	}
	if e, ok, _ := j.ByCharge(state.JournalCreated, "c1"); !ok || e.V != state.JournalVersion {
		t.Fatalf("own entry written with version %d, want %d", e.V, state.JournalVersion)
	}
}
