package state

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A Redis that crashes with AOF everysec, fails over to a replica that was
// behind, or is restored from a snapshot loses its last writes: a paid
// order, or the upstream number an order just got. The upstream's order
// list and Telegram's Star transactions still hold the money, but not the
// link between them: which of several look-alike upstream orders (an
// in-game top-up does not echo the player id) a rolled-back order made.
//
// The journal keeps that link outside Redis: an append-only file, fsynced
// before the shop goes on, in a directory every replica of the host shares
// (JOURNAL_DIR). Each process writes its own file and reads everyone's, so
// a replica put back what another one created even when that one was
// killed at the same moment. Entries are read back for Keep (the window in
// which Redis may still lose a write or a repair may still need it); files
// nobody wrote to for longer are removed.
//
// A Journal with an empty directory keeps its entries in memory only: it
// still serves the process that wrote them.

// Journal entry kinds.
const (
	// JournalPaid records a paid order as it was created (the sweep
	// rebuilds it when Redis lost it together with its quote).
	JournalPaid = "paid"
	// JournalCreated records that an order's attempt made (or adopted)
	// upstream order Number (the order's record of it may be lost).
	JournalCreated = "created"
	// JournalIntent records an attempt about to POST a create: its
	// placement kind and watermark. Until a created or none entry of the
	// attempt follows, a create of it may exist upstream.
	JournalIntent = "intent"
	// JournalNone records that an attempt provably created nothing (or was
	// given up after its grace).
	JournalNone = "none"
	// JournalUncertain records that an attempt's create came back without a
	// known outcome; Answered says the server answered (a 5xx: it had
	// finished with the request).
	JournalUncertain = "uncertain"
)

// JournalEntry is one line of the journal.
type JournalEntry struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"`
	Charge string    `json:"charge"` // the order's identity: ids are reused after a rollback
	// Order is the paid order (JournalPaid).
	Order *Order `json:"order,omitempty"`
	// Number and Upstream are the upstream order (JournalCreated), without
	// any codes or keys.
	Number   int64           `json:"number,omitempty"`
	Upstream json.RawMessage `json:"upstream,omitempty"`
	// Attempt, Slot and Watermark describe a placement attempt (intent,
	// created, none).
	Attempt   string `json:"attempt,omitempty"`
	Slot      string `json:"slot,omitempty"`
	Watermark int64  `json:"watermark,omitempty"`
	Answered  bool   `json:"answered,omitempty"`
	// Bounded says Number bounds an answered uncertain attempt's create
	// (the newest order number of its type right after the answer).
	Bounded bool `json:"bounded,omitempty"`
}

// Journal is the host-local record of paid orders and upstream creates.
type Journal struct {
	id   string // the directory's identity ("mem-..." for memory only)
	dir  string
	keep time.Duration
	now  func() time.Time

	mu      sync.Mutex
	f       *os.File // this process's file (nil: memory only)
	name    string
	offsets map[string]int64 // bytes of each file already read
	entries []JournalEntry   // everything read or written, oldest first
}

// OpenJournal opens the journal in dir ("" keeps entries in memory only),
// reading back every entry younger than keep.
func OpenJournal(dir string, keep time.Duration, now func() time.Time) (*Journal, error) {
	if now == nil {
		now = time.Now
	}
	j := &Journal{dir: dir, keep: keep, now: now, offsets: map[string]int64{}}
	if dir == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		j.id = "mem-" + hex.EncodeToString(b[:])
		return j, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	id, err := journalID(dir)
	if err != nil {
		return nil, err
	}
	j.id = id
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.rotateLocked(); err != nil {
		return nil, err
	}
	if err := j.readLocked(); err != nil {
		_ = j.f.Close()
		return nil, err
	}
	return j, nil
}

// journalFileMax is the size at which a process starts a new file (the
// old one is removed once nobody needs its entries).
const journalFileMax = 4 << 20

// rotateLocked starts a new file of this process and removes stale ones.
func (j *Journal) rotateLocked() error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("journal-%d-%s.jsonl", os.Getpid(), hex.EncodeToString(b[:]))
	f, err := os.OpenFile(filepath.Join(j.dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.f != nil {
		_ = j.f.Close()
		j.offsets[j.name] = 1 << 62 // ours, and in memory: never read back
	}
	j.f, j.name = f, name
	j.prune()
	return nil
}

// journalID returns the identity of the journal in dir, made at its first
// use: processes that share the directory share it.
func journalID(dir string) (string, error) {
	path := filepath.Join(dir, "journal.id")
	if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return string(bytes.TrimSpace(b)), nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	tmp := path + "." + id
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	// Link, not rename: a process that made its own at the same moment
	// loses and reads the winner's.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("journal: %w", err)
	}
	_ = os.Remove(tmp)
	b2, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	return string(bytes.TrimSpace(b2)), nil
}

// ID returns the journal's identity: the same for every process that
// shares its directory; a memory journal's is its own ("mem-...").
func (j *Journal) ID() string {
	if j == nil {
		return ""
	}
	return j.id
}

// Shared reports whether the journal is on disk (other processes of the
// host can read it).
func (j *Journal) Shared() bool { return j != nil && j.dir != "" }

// Keep returns how long entries are read back.
func (j *Journal) Keep() time.Duration {
	if j == nil {
		return 0
	}
	return j.keep
}

// Dir returns the journal's directory ("" when in memory only).
func (j *Journal) Dir() string {
	if j == nil {
		return ""
	}
	return j.dir
}

// Close closes this process's file.
func (j *Journal) Close() error {
	if j == nil || j.f == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.f.Close()
	j.f = nil
	return err
}

// Append writes e and waits until it is on disk.
func (j *Journal) Append(e JournalEntry) error {
	if j == nil {
		return nil
	}
	if e.At.IsZero() {
		e.At = j.now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		if _, err := j.f.Write(line); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.offsets[j.name] += int64(len(line))
		if j.offsets[j.name] > journalFileMax {
			if err := j.rotateLocked(); err != nil {
				return err
			}
		}
	}
	j.entries = append(j.entries, e)
	return nil
}

// Recent returns the entries of kind (every kind for "") younger than the
// journal's keep, from every process's file, oldest first.
func (j *Journal) Recent(kind string) ([]JournalEntry, error) {
	if j == nil {
		return nil, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.readLocked()
	cut := j.now().Add(-j.keep)
	i := 0
	for i < len(j.entries) && j.entries[i].At.Before(cut) {
		i++
	}
	j.entries = j.entries[i:]
	var out []JournalEntry
	for _, e := range j.entries {
		if kind == "" || e.Kind == kind {
			out = append(out, e)
		}
	}
	return out, err
}

// ByCharge returns the newest entry of kind for charge.
func (j *Journal) ByCharge(kind, charge string) (JournalEntry, bool, error) {
	list, err := j.Recent(kind)
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Charge == charge {
			return list[i], true, err
		}
	}
	return JournalEntry{}, false, err
}

// readLocked reads what every file gained since the last read. Entries of
// other processes arrive in their files' order; the list is kept sorted
// by time.
func (j *Journal) readLocked() error {
	if j.dir == "" {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(j.dir, "journal-*.jsonl"))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	var errs []error
	added := false
	for _, path := range names {
		name := filepath.Base(path)
		if name == j.name || j.offsets[name] >= 1<<62 {
			continue // ours are in memory already
		}
		list, n, err := readJournalFile(path, j.offsets[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		j.offsets[name] = n
		if len(list) > 0 {
			j.entries = append(j.entries, list...)
			added = true
		}
	}
	if added {
		sortEntries(j.entries)
	}
	return errors.Join(errs...)
}

// readJournalFile reads the complete lines of path from offset on and
// returns them with the offset after the last complete line (a line being
// written is read next time; a damaged one is skipped).
func readJournalFile(path string, offset int64) ([]JournalEntry, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, fmt.Errorf("journal: %w", err)
	}
	var out []JournalEntry
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF: a partial line stays for the next read
		}
		offset += int64(len(line))
		var e JournalEntry
		if json.Unmarshal(bytes.TrimSpace(line), &e) == nil && e.Kind != "" {
			out = append(out, e)
		}
	}
	return out, offset, nil
}

// sortEntries sorts by time, keeping the order of equal times (insertion
// sort: the list is nearly sorted).
func sortEntries(list []JournalEntry) {
	for i := 1; i < len(list); i++ {
		for k := i; k > 0 && list[k].At.Before(list[k-1].At); k-- {
			list[k], list[k-1] = list[k-1], list[k]
		}
	}
}

// prune removes files nobody wrote to for twice the keep.
func (j *Journal) prune() {
	names, err := filepath.Glob(filepath.Join(j.dir, "journal-*.jsonl"))
	if err != nil {
		return
	}
	cut := j.now().Add(-2 * j.keep)
	for _, path := range names {
		if strings.HasSuffix(path, j.name) {
			continue
		}
		if st, err := os.Stat(path); err == nil && st.ModTime().Before(cut) {
			_ = os.Remove(path)
			delete(j.offsets, filepath.Base(path))
		}
	}
}
