//go:build linux

package state_test

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shopbot/state"
)

// shortWriteDir names, in the environment of the test's own subprocess,
// the directory it writes its journal to under a file size limit.
const shortWriteDir = "SHOPBOT_JOURNAL_SHORT_WRITE_DIR"

var shortWriteShop = state.JournalShop{Bot: 7, Account: "acct", Store: 1}

// A journal write that fails midway (here a real short write: the file
// size limit, RLIMIT_FSIZE, is reached in the middle of the entry, and the
// write ends with EFBIG) is cut back: the entry after it is whole, every
// other process reads it, nothing is damaged, and the journal's proof
// still holds. Before, the partial line stayed, the next entry was glued
// to it, and every reader skipped both.
func TestJournalShortWriteDamagesNothingAfterIt(t *testing.T) {
	if dir := os.Getenv(shortWriteDir); dir != "" {
		shortWriteChild(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalShortWriteDamagesNothingAfterIt$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), shortWriteDir+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "short write: EFBIG") {
		t.Fatalf("the writer: %v\n%s", err, out)
	}
	j, err := state.OpenJournal(dir, 10*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Bind(shortWriteShop, nil); err != nil {
		t.Fatal(err)
	}
	all, _ := j.Recent("")
	var got []string
	for _, e := range all {
		got = append(got, e.Charge)
	}
	if strings.Join(got, ",") != "before,after" {
		t.Fatalf("another process reads %v, want before,after (and not the failed one)", got)
	}
	if n := j.Damaged(); n != 0 {
		t.Fatalf("%d damaged lines after a failed write", n)
	}
	if !j.Covers(time.Now()) {
		t.Fatal("a failed write that was cut back broke the journal's proof")
	}
}

// shortWriteChild appends an entry, one that the file size limit cuts off
// midway, and one after it.
func shortWriteChild(t *testing.T, dir string) {
	now := func() time.Time { return time.Now().Add(-time.Minute) }
	j, err := state.OpenJournal(dir, 10*time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Bind(shortWriteShop, nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(state.JournalEntry{Kind: state.JournalIntent, Charge: "before", Attempt: "a1", Slot: "k"}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "journal-*.jnl"))
	if len(files) != 1 {
		t.Fatalf("journal files %v", files)
	}
	st, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ) // the write fails with EFBIG instead of killing the process
	limit := syscall.Rlimit{Cur: uint64(st.Size()) + 60, Max: was.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	err = j.Append(state.JournalEntry{Kind: state.JournalIntent, Charge: "failed", Attempt: "a2", Slot: "k", Watermark: 123456789})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	if err == nil || !strings.Contains(err.Error(), "file too large") {
		t.Fatalf("the write under the limit: %v", err)
	}
	if err := j.Append(state.JournalEntry{Kind: state.JournalIntent, Charge: "after", Attempt: "a3", Slot: "k"}); err != nil {
		t.Fatal(err)
	}
	t.Log("short write: EFBIG")
}
