package state

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// Every entry names the shop it was written for (JournalShop: the bot, the
// upstream account and the Redis store), and a journal applies only its own
// shop's: a directory another shop writes to as well (the same bot token on
// a staging host, a shop moved to a new Redis and a new upstream key) never
// rebuilds that shop's orders here or attaches its upstream orders to ours.
//
// Each entry is one line framed by its length and checksum ("<len> <crc32c>
// <json>"): a write that fails midway (a full disk, a file size limit) is
// cut off again, and a reader skips a damaged line and reads on at the
// next good one. Damage it finds, and lines it cannot tell the shop of,
// mark the journal incomplete up to when they were written (Covers).
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

// JournalShop is the shop a journal entry belongs to: the bot (its id, the
// token's number), the upstream account (a fingerprint of the API key,
// never the key) and the Redis store (its epoch, see
// redisstore.StoreEpoch). A store that lost writes, fails over or is
// restored from a backup keeps its epoch and so its entries; a flushed or
// new one has a new epoch and applies the old store's entries only when it
// continues that store (BindLineage: the same bot and account, named when
// the new store was created).
type JournalShop struct {
	Bot     int64  `json:"bot,omitempty"`
	Account string `json:"account,omitempty"`
	Store   int64  `json:"store,omitempty"`
}

// String names the shop in logs.
func (s JournalShop) String() string {
	return fmt.Sprintf("bot %d, account %s, store %d", s.Bot, s.Account, s.Store)
}

// JournalEntry is one entry of the journal.
type JournalEntry struct {
	// V is the entry's version (JournalVersion, set by Append; 0 before
	// versions). An entry of a newer version, or of a kind this build does
	// not know, is one it cannot read: it is not applied, and the journal
	// proves nothing for when it was written (Covers), as for damage.
	V    int         `json:"v,omitempty"`
	At   time.Time   `json:"at"`
	Shop JournalShop `json:"shop"` // set by Append: the journal's shop
	Kind string      `json:"kind"`
	// Charge is the order's identity: ids are reused after a rollback.
	Charge string `json:"charge"`
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
	shop    JournalShop
	since   time.Time // since when the directory has held shop's entries
	log     *slog.Logger
	f       *os.File // this process's file (nil: memory only)
	name    string
	size    int64            // bytes of this process's file that are whole entries
	offsets map[string]int64 // bytes of each file already read
	entries []JournalEntry   // this shop's entries read or written, oldest first
	// broken is the latest time an entry of the directory may have been
	// written that could not be read (damaged) or told the shop of (an
	// older format): before it, the journal is not provably complete.
	broken  time.Time
	damaged int                 // damaged lines read
	foreign map[JournalShop]int // entries of other shops, not applied
	// continues are the earlier stores of the shop's bot and account that
	// its store continues (redisstore.Lineage), newest first: their
	// entries are the shop's own.
	continues []int64
	told      map[JournalShop]bool
	// newestOrder is the highest order number among the shop's paid
	// entries read or written (NewestOrder).
	newestOrder int64
	// canaryName is this process's canary file (journal_canary.go).
	canaryName string
}

// OpenJournal opens the journal in dir ("" keeps entries in memory only);
// entries younger than keep are read back at the first use. Until Bind
// names its shop, it reads and writes the entries of the unnamed shop
// only.
func OpenJournal(dir string, keep time.Duration, now func() time.Time) (*Journal, error) {
	if now == nil {
		now = time.Now
	}
	j := &Journal{dir: dir, keep: keep, now: now, offsets: map[string]int64{}, foreign: map[JournalShop]int{}, told: map[JournalShop]bool{}, log: slog.New(slog.DiscardHandler)}
	if dir == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		j.id = "mem-" + hex.EncodeToString(b[:])
		j.since = now()
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
	if j.since, err = j.sinceOf(j.shop); err != nil {
		return nil, err
	}
	if err := j.rotateLocked(); err != nil {
		return nil, err
	}
	return j, nil
}

// Bind names the shop whose entries the journal writes and applies; log
// hears once of each other shop whose entries it ignores. The files are
// read again for the shop's entries, this process's own too (what it wrote
// for another shop is no longer applied, unless the shop's store continues
// that one: BindLineage).
func (j *Journal) Bind(shop JournalShop, log *slog.Logger) error {
	return j.BindLineage(shop, nil, log)
}

// BindLineage is Bind for a store that continues earlier stores of the
// same bot and account (continues, newest first: redisstore.Lineage): a
// store that came back empty, or a shop moved to a new Redis, takes the
// entries of the store it continues as its own, so the journal refills it
// with what the old one had not finished. The directory remembers the
// latest store its shop bound (LastStore), which a process that creates
// the next store names as the one it continues.
func (j *Journal) BindLineage(shop JournalShop, continues []int64, log *slog.Logger) error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if log != nil {
		j.log = log
	}
	continues = slices.DeleteFunc(slices.Clone(continues), func(e int64) bool { return e == 0 || e == shop.Store })
	if shop == j.shop && slices.Equal(continues, j.continues) {
		return nil
	}
	since := j.now()
	if j.dir != "" {
		var err error
		if since, err = j.sinceOf(shop); err != nil {
			return err
		}
		for _, e := range continues {
			// The directory held the earlier store's entries since its
			// own first use: the journal is complete from then on.
			if t, ok := j.sinceIfAny(JournalShop{Bot: shop.Bot, Account: shop.Account, Store: e}); ok && t.Before(since) {
				since = t
			}
		}
		if err := j.noteStore(shop, continues); err != nil {
			return err
		}
	}
	j.shop, j.since, j.continues = shop, since, continues
	clear(j.told)
	j.entries, j.damaged, j.newestOrder = nil, 0, 0
	clear(j.foreign)
	// Every file is read again for the new binding's entries, this
	// process's own too (what it wrote for the store this one continues
	// is the shop's now).
	clear(j.offsets)
	return nil
}

// storeRecord is the directory's record of the latest store a shop (bot
// and account) bound, and the stores that one continued.
type storeRecord struct {
	Bot       int64     `json:"bot"`
	Account   string    `json:"account"`
	Store     int64     `json:"store"`
	Continues []int64   `json:"continues,omitempty"`
	At        time.Time `json:"at"`
}

// storePath is the file of the latest store of the bot and account.
func (j *Journal) storePath(bot int64, account string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s", bot, account))
	return filepath.Join(j.dir, "store-"+hex.EncodeToString(sum[:8])+".json")
}

// noteStore records shop's store as the latest its bot and account bound,
// unless a newer one is on record (a process still bound to a store that
// came back empty never names the old store again).
func (j *Journal) noteStore(shop JournalShop, continues []int64) error {
	path := j.storePath(shop.Bot, shop.Account)
	if data, err := os.ReadFile(path); err == nil {
		var rec storeRecord
		if json.Unmarshal(data, &rec) == nil && rec.Store >= shop.Store {
			return nil
		}
	}
	data, err := json.Marshal(storeRecord{Bot: shop.Bot, Account: shop.Account, Store: shop.Store, Continues: continues, At: j.now().UTC()})
	if err != nil {
		return err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := path + "." + hex.EncodeToString(b[:]) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("journal: record the store: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("journal: record the store: %w", err)
	}
	return nil
}

// LastStore returns the latest store the bot and account bound a journal
// in this directory to, and the stores that one continued, newest first
// (none for a journal in memory, or a directory that never served them):
// the lineage a new store of the shop continues.
func (j *Journal) LastStore(bot int64, account string) []int64 {
	if j == nil || j.dir == "" {
		return nil
	}
	data, err := os.ReadFile(j.storePath(bot, account))
	if err != nil {
		return nil
	}
	var rec storeRecord
	if json.Unmarshal(data, &rec) != nil || rec.Bot != bot || rec.Account != account || rec.Store == 0 {
		return nil
	}
	return append([]int64{rec.Store}, rec.Continues...)
}

// Continues returns the stores the journal's store continues, newest
// first (BindLineage).
func (j *Journal) Continues() []int64 {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.continues)
}

// Shop returns the shop the journal is bound to.
func (j *Journal) Shop() JournalShop {
	if j == nil {
		return JournalShop{}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.shop
}

// ownLocked reports whether e is the bound shop's, counting (and logging
// once per shop) the entries of others.
func (j *Journal) ownLocked(e JournalEntry) bool {
	if e.Shop == j.shop {
		return true
	}
	if e.Shop.Bot == j.shop.Bot && e.Shop.Account == j.shop.Account && slices.Contains(j.continues, e.Shop.Store) {
		return true // the store this one continues
	}
	if !j.told[e.Shop] {
		j.told[e.Shop] = true
		j.log.Warn("journal holds entries of another shop; not applied (give each shop its own JOURNAL_DIR)",
			"dir", j.dir, "theirs", e.Shop.String(), "ours", j.shop.String())
	}
	j.foreign[e.Shop]++
	return false
}

// Foreign returns how many entries of other shops the journal ignored.
func (j *Journal) Foreign() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, c := range j.foreign {
		n += c
	}
	return n
}

// Damaged returns how many damaged lines the journal skipped.
func (j *Journal) Damaged() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.damaged
}

// journalMargin is how far the journal's proofs keep from the edges of
// what it covers: entries are stamped before they take the file, and the
// clocks compared (Telegram's, the host's) may be apart.
const journalMargin = time.Minute

// Covers reports whether the journal provably holds every entry its shop
// wrote since t, so that "no entry of a charge paid at t" proves that
// nothing was done for it: the directory has held the shop's entries since
// before t, they are still read back, and nothing written since was
// damaged or left unreadable. A memory journal covers only what this
// process did, which is never proof for the shop: it covers nothing.
func (j *Journal) Covers(t time.Time) bool {
	if j == nil || j.dir == "" {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.readLocked() // damage found now counts; a read error shows as damage too
	from := t.Add(-journalMargin)
	return !from.Before(j.since) && !from.Before(j.now().Add(-j.keep)) && from.After(j.broken)
}

// sincePath is the file that records since when the directory has held
// shop's entries.
func (j *Journal) sincePath(shop JournalShop) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%d", shop.Bot, shop.Account, shop.Store))
	return filepath.Join(j.dir, "shop-"+hex.EncodeToString(sum[:8])+".since")
}

// sinceIfAny returns since when the directory has held shop's entries, if
// it ever did.
func (j *Journal) sinceIfAny(shop JournalShop) (time.Time, bool) {
	v, err := os.ReadFile(j.sincePath(shop))
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(v)))
	return t, err == nil
}

// sinceOf returns since when the directory has held shop's entries, made
// at its first use with shop (a file named by the shop's fingerprint).
func (j *Journal) sinceOf(shop JournalShop) (time.Time, error) {
	path := j.sincePath(shop)
	v, err := createOnce(path, j.now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("journal: %s: %w", path, err)
	}
	return t, nil
}

// journalFileMax is the size at which a process starts a new file (the
// old one is removed once nobody needs its entries).
const journalFileMax = 4 << 20

// journalExt ends the names of the framed files; journalOldExt the older
// unframed ones (JSON lines), which are read only to mark the journal
// incomplete while a process of an older version writes to the directory.
const (
	journalExt    = ".jnl"
	journalOldExt = ".jsonl"
)

// rotateLocked starts a new file of this process and removes stale ones.
func (j *Journal) rotateLocked() error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("journal-%d-%s%s", os.Getpid(), hex.EncodeToString(b[:]), journalExt)
	f, err := os.OpenFile(filepath.Join(j.dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.f != nil {
		_ = j.f.Close()
		j.offsets[j.name] = 1 << 62 // ours, and in memory: never read back
	}
	j.f, j.name, j.size = f, name, 0
	j.prune()
	return nil
}

// journalID returns the identity of the journal in dir, made at its first
// use: processes that share the directory share it.
func journalID(dir string) (string, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return createOnce(filepath.Join(dir, "journal.id"), hex.EncodeToString(b[:]))
}

// createOnce returns the content of the file at path, writing value there
// first when there is none. Link, not rename: of processes that make it at
// the same moment, all but one lose and read the winner's.
func createOnce(path, value string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return string(bytes.TrimSpace(b)), nil
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := path + "." + hex.EncodeToString(b[:])
	if err := os.WriteFile(tmp, []byte(value+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("journal: %w", err)
	}
	_ = os.Remove(tmp)
	got, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("journal: %w", err)
	}
	return string(bytes.TrimSpace(got)), nil
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

// crcTable is CRC-32C (Castagnoli), the checksum of each entry.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// frame returns the line of payload: "<len> <crc32c> <payload>\n". JSON
// holds no raw newline, so a line is an entry.
func frame(payload []byte) []byte {
	line := fmt.Appendf(make([]byte, 0, len(payload)+20), "%d %08x ", len(payload), crc32.Checksum(payload, crcTable))
	line = append(line, payload...)
	return append(line, '\n')
}

// unframe returns the payload of a line (without its newline), or false
// when the line is not one whole entry.
func unframe(line []byte) ([]byte, bool) {
	n, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(n) == 0 || len(n) > 9 {
		return nil, false
	}
	size, err := strconv.Atoi(string(n))
	if err != nil || len(rest) != 9+size || rest[8] != ' ' {
		return nil, false
	}
	sum, err := strconv.ParseUint(string(rest[:8]), 16, 32)
	payload := rest[9:]
	if err != nil || uint32(sum) != crc32.Checksum(payload, crcTable) {
		return nil, false
	}
	return payload, true
}

// Append writes e for the journal's shop and waits until it is on disk. A
// write that fails is cut off again (or, when that fails too, the process
// goes on in a new file), so it never damages the entries after it.
func (j *Journal) Append(e JournalEntry) error {
	if j == nil {
		return nil
	}
	if e.At.IsZero() {
		e.At = j.now().UTC()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	e.Shop, e.V = j.shop, JournalVersion
	payload, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.f != nil {
		line := frame(payload)
		_, err := j.f.Write(line)
		if err == nil {
			err = j.f.Sync()
		}
		if err != nil {
			j.undoLocked()
			return fmt.Errorf("journal: %w", err)
		}
		j.size += int64(len(line))
		j.offsets[j.name] = j.size
		if j.size > journalFileMax {
			if err := j.rotateLocked(); err != nil {
				return err
			}
		}
	}
	j.entries = append(j.entries, e)
	j.noteOrderLocked(e)
	return nil
}

// noteOrderLocked raises newestOrder to the number of e's paid order.
func (j *Journal) noteOrderLocked(e JournalEntry) {
	if e.Kind == JournalPaid && e.Order != nil && e.Order.ID > j.newestOrder {
		j.newestOrder = e.Order.ID
	}
}

// NewestOrder returns the highest order number the shop's paid entries
// name, in every process's file (0: none). Its store hands out no number
// at or below it again: after Redis went back (a restore from a backup, a
// failover that lost writes, a store that came back empty and continues
// the one before) its counter is behind numbers buyers were already told.
func (j *Journal) NewestOrder() int64 {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	// A file that cannot be read breaks the journal's proof (Covers says
	// so); the numbers of the files read still count.
	_ = j.readLocked()
	return j.newestOrder
}

// undoLocked cuts this process's file back to its last whole entry after a
// failed write. When that fails, what is left of the write may be read as
// damage by others (and the journal marks itself incomplete): the process
// goes on in a new file, so nothing is ever appended after it.
func (j *Journal) undoLocked() {
	err := j.f.Truncate(j.size)
	if err == nil {
		err = j.f.Sync()
	}
	if err == nil {
		return
	}
	j.broken = j.now()
	j.log.Error("journal: cut back a failed write", "file", j.name, "err", err)
	if err := j.rotateLocked(); err != nil {
		j.log.Error("journal: start a new file", "err", err)
	}
}

// Recent returns the shop's entries of kind (every kind for "") younger
// than the journal's keep, from every process's file, oldest first.
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

// journalFiles returns the paths of the directory's journal files, of both
// formats.
func (j *Journal) journalFiles() ([]string, error) {
	names, err := filepath.Glob(filepath.Join(j.dir, "journal-*"+journalExt))
	if err != nil {
		return nil, err
	}
	old, err := filepath.Glob(filepath.Join(j.dir, "journal-*"+journalOldExt))
	return append(names, old...), err
}

// readLocked reads what every file gained since the last read: the shop's
// entries join the list (kept sorted by time), others' are counted, and
// damage moves broken on. A file that cannot be read breaks the journal's
// proof until it can.
func (j *Journal) readLocked() error {
	if j.dir == "" {
		return nil
	}
	names, err := j.journalFiles()
	if err != nil {
		j.broken = j.now()
		return fmt.Errorf("journal: %w", err)
	}
	var errs []error
	added := false
	for _, path := range names {
		name := filepath.Base(path)
		if j.offsets[name] >= 1<<62 {
			continue
		}
		// This process's own file is read only after a new binding: what
		// it appends since is in memory, and its offset moves past it.
		r, err := readJournalFile(path, j.offsets[name])
		if err != nil {
			j.broken = j.now()
			errs = append(errs, err)
			continue
		}
		j.offsets[name] = r.offset
		j.damaged += r.damaged
		if r.newer > 0 {
			j.log.Info("journal entries of a newer version not read; the journal proves nothing for when they were written", "file", name, "entries", r.newer)
		}
		if r.broken.After(j.broken) {
			j.broken = r.broken
		}
		for _, e := range r.entries {
			if j.ownLocked(e) {
				j.entries = append(j.entries, e)
				j.noteOrderLocked(e)
				added = true
			}
		}
	}
	if added {
		sortEntries(j.entries)
	}
	return errors.Join(errs...)
}

// fileRead is what one read of a journal file found.
type fileRead struct {
	entries []JournalEntry
	offset  int64     // after the last whole line
	damaged int       // lines that were not whole entries
	newer   int       // entries of a newer build this one cannot read
	broken  time.Time // the latest time a line that could not be used was written
}

// journalKinds are the entry kinds this build reads.
var journalKinds = []string{JournalPaid, JournalCreated, JournalIntent, JournalNone, JournalUncertain}

// readable reports whether this build can read entry e: a version and a
// kind it knows.
func readable(e JournalEntry) bool {
	return e.V <= JournalVersion && slices.Contains(journalKinds, e.Kind)
}

// readJournalFile reads the whole lines of path from offset on (a line
// being written is read next time). A damaged line is skipped and counted;
// it was written before the file's last change, which bounds when. A line
// of the unframed format is read only for its time.
func readJournalFile(path string, offset int64) (fileRead, error) {
	r := fileRead{offset: offset}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return r, fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return r, fmt.Errorf("journal: %w", err)
	}
	old := strings.HasSuffix(path, journalOldExt)
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break // EOF: a partial line stays for the next read
		}
		r.offset += int64(len(line))
		line = line[:len(line)-1]
		var e JournalEntry
		if old {
			// No shop and no checksum: never applied, and while such
			// lines are written the journal proves nothing.
			at := st.ModTime()
			if json.Unmarshal(line, &e) == nil && !e.At.IsZero() {
				at = e.At
			}
			r.broken = later(r.broken, at)
			continue
		}
		payload, ok := unframe(line)
		if ok && json.Unmarshal(payload, &e) == nil && e.Kind != "" {
			if !readable(e) {
				// A newer build's: what it says cannot be told, so
				// the journal's silence proves nothing around it.
				r.newer++
				r.broken = later(r.broken, e.At)
				continue
			}
			r.entries = append(r.entries, e)
			continue
		}
		r.damaged++
		r.broken = later(r.broken, st.ModTime())
		if e, ok := resync(line); ok && readable(e) {
			r.entries = append(r.entries, e)
		}
	}
	return r, nil
}

// resync finds a whole entry at the end of a damaged line: one written
// after a write that failed midway and was not cut back.
func resync(line []byte) (JournalEntry, bool) {
	for i := 1; i < len(line); i++ {
		if line[i] < '0' || line[i] > '9' {
			continue
		}
		var e JournalEntry
		if payload, ok := unframe(line[i:]); ok && json.Unmarshal(payload, &e) == nil && e.Kind != "" {
			return e, true
		}
	}
	return JournalEntry{}, false
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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
	names, err := j.journalFiles()
	if err != nil {
		return
	}
	cut := j.now().Add(-2 * j.keep)
	for _, path := range names {
		if filepath.Base(path) == j.name {
			continue
		}
		if st, err := os.Stat(path); err == nil && st.ModTime().Before(cut) {
			_ = os.Remove(path)
			delete(j.offsets, filepath.Base(path))
		}
	}
}
