package state

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// The archive keeps, outside Redis and for ArchiveKeep, what a store that
// comes back empty (its volume lost, the shop moved to a new Redis) must
// not lose with it and no system of record holds: the shop wallets, and
// which Star charge bought which delivered order. Every wallet movement is
// appended as it is made (its ref, amount and the balance after it), and
// every wallet's balance once a day, so the newest fact of each wallet is
// always inside the keep; every order that reaches its end (delivered,
// refunded) is appended then. A store that continues an earlier one
// (redisstore.Lineage) rebuilds the wallets from it, and its Stars sweep
// settles a charge the archive shows delivered instead of listing it.
//
// It lives in the journal's directory, in files of its own
// (archive-<day>-<process>.arc, one per process and day), framed like the
// journal's entries (a length and a checksum per line, a failed write cut
// back), and bound to the same shop: a reader takes only the entries of
// the stores it names. Unlike the journal it is read only when a store
// that continues another is first used, never on the hot path.

// ArchiveKeep is how long archive files are kept: longer than the Stars
// sweep looks back (its refs keep a top-up from being credited twice), and
// far longer than a day, within which every wallet's balance is written
// again.
const ArchiveKeep = 40 * 24 * time.Hour

// Archive entry kinds.
const (
	// ArchiveWallet is a wallet movement (Entry), with the balance after
	// it and the wallet's movement count (Seq).
	ArchiveWallet = "wallet"
	// ArchiveBalance is a wallet's balance and movement count at a moment
	// (the daily record of every wallet).
	ArchiveBalance = "balance"
	// ArchiveOrder is an order that reached its end (Order): delivered
	// or refunded.
	ArchiveOrder = "order"
)

// ArchivedOrder returns what the archive keeps of an order that reached
// its end: the order as the store held it, without its codes or keys and
// its history, enough to tell after the store is gone that its charge was
// delivered, to whom, for what and with which upstream order, and to
// store it again (records.Orders.CreateFinished).
func ArchivedOrder(o *Order) *Order {
	c := *o
	c.Codes, c.History = nil, nil
	return &c
}

// ArchiveEntry is one entry of the archive.
type ArchiveEntry struct {
	At   time.Time   `json:"at"`
	Shop JournalShop `json:"shop"` // set by Append: the journal's shop
	Kind string      `json:"kind"`
	User int64       `json:"user"`
	// Seq is how many movements the wallet had after this one (its order
	// among the wallet's facts of one store; 0: unknown).
	Seq     int64           `json:"seq,omitempty"`
	Balance decimal.Decimal `json:"balance"`
	// Entry is the movement (ArchiveWallet), as the wallet's own ledger
	// holds it.
	Entry *Entry `json:"entry,omitempty"`
	// Order is the order that reached its end (ArchiveOrder; see
	// ArchivedOrder).
	Order *Order `json:"order,omitempty"`
	// Undelivered says a delivered order never reached its buyer (they had
	// blocked the bot): stored again, it waits for their /start.
	Undelivered bool `json:"undelivered,omitempty"`
}

// Orders returns the orders among archive entries (Read) by charge: the
// newest fact of each.
func Orders(entries []ArchiveEntry) map[string]*Order {
	out := map[string]*Order{}
	for _, e := range entries {
		if e.Kind == ArchiveOrder && e.Order != nil && e.Order.ChargeID != "" {
			o := *e.Order
			if o.Status == OrderDelivered && o.DeliveredAt.IsZero() && !e.Undelivered {
				// Archived as it was handed to the buyer.
				o.DeliveredAt, o.NotifiedStatus = e.At, OrderDelivered
			}
			out[o.ChargeID] = &o
		}
	}
	return out
}

// Archive is the host's long-kept record of wallet movements. A nil
// Archive, or one over a journal in memory, keeps nothing.
type Archive struct {
	j    *Journal
	keep time.Duration

	mu   sync.Mutex
	f    *os.File
	name string
	day  string
	size int64
}

// archiveExt ends the archive's file names; archiveFileMax is the size at
// which a process starts a new file of the day.
const (
	archiveExt     = ".arc"
	archiveFileMax = 16 << 20
)

// OpenArchive returns the archive beside journal j (in its directory,
// bound to its shop). A journal in memory gives an archive that keeps
// nothing.
func OpenArchive(j *Journal, keep time.Duration) *Archive {
	if j == nil || j.dir == "" {
		return nil
	}
	return &Archive{j: j, keep: keep}
}

// Append writes the entries for the journal's shop and waits until they
// are on disk (one fsync for all). A write that fails is cut off again, so
// it never damages what comes after it.
func (a *Archive) Append(entries ...ArchiveEntry) error {
	if a == nil || len(entries) == 0 {
		return nil
	}
	shop, now := a.j.Shop(), a.j.now().UTC()
	var buf []byte
	for _, e := range entries {
		if e.At.IsZero() {
			e.At = now
		}
		e.Shop = shop
		payload, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		buf = append(buf, frame(payload)...)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.fileLocked(now); err != nil {
		return err
	}
	_, err := a.f.Write(buf)
	if err == nil {
		err = a.f.Sync()
	}
	if err != nil {
		// Cut back to the last whole entry; when that fails, go on in a
		// new file, so nothing is appended after the damage.
		if a.f.Truncate(a.size) != nil || a.f.Sync() != nil {
			_ = a.f.Close()
			a.f = nil
		}
		return fmt.Errorf("archive: %w", err)
	}
	a.size += int64(len(buf))
	return nil
}

// fileLocked opens this process's file of the day (a new one after a
// failed write, a new day or archiveFileMax), removing files older than
// the keep when it starts one.
func (a *Archive) fileLocked(now time.Time) error {
	day := now.Format("20060102")
	if a.f != nil && a.day == day && a.size < archiveFileMax {
		return nil
	}
	if a.f != nil {
		_ = a.f.Close()
		a.f = nil
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("archive-%s-%d-%s%s", day, os.Getpid(), hex.EncodeToString(b[:]), archiveExt)
	f, err := os.OpenFile(filepath.Join(a.j.dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	a.f, a.name, a.day, a.size = f, name, day, 0
	a.pruneLocked(now)
	return nil
}

// pruneLocked removes the archive files nobody wrote to for the keep.
func (a *Archive) pruneLocked(now time.Time) {
	names, _ := filepath.Glob(filepath.Join(a.j.dir, "archive-*"+archiveExt))
	for _, path := range names {
		if filepath.Base(path) == a.name {
			continue
		}
		if st, err := os.Stat(path); err == nil && now.Sub(st.ModTime()) > a.keep {
			_ = os.Remove(path)
		}
	}
}

// Close closes this process's file.
func (a *Archive) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// Read returns the archive's entries of the journal's bot and account
// written for one of stores, oldest first by when they were written, and
// how many damaged lines it skipped.
func (a *Archive) Read(stores []int64) ([]ArchiveEntry, int, error) {
	var c ArchiveCursor
	return a.ReadOn(stores, &c, true)
}

// ArchiveCursor is how far a reader of the archive got in each file
// (ReadOn); its zero value is the start of every file.
type ArchiveCursor struct {
	offsets map[string]int64
}

// ReadOn is Read of what the files gained since cursor c was last moved
// on: a reader that keeps c reads each entry once. With whole, a line cut
// short at the end of a file is damage (a write that failed); without, it
// is left for the next read (a write under way).
func (a *Archive) ReadOn(stores []int64, c *ArchiveCursor, whole bool) ([]ArchiveEntry, int, error) {
	if a == nil || len(stores) == 0 {
		return nil, 0, nil
	}
	if c.offsets == nil {
		c.offsets = map[string]int64{}
	}
	shop := a.j.Shop()
	names, err := filepath.Glob(filepath.Join(a.j.dir, "archive-*"+archiveExt))
	if err != nil {
		return nil, 0, fmt.Errorf("archive: %w", err)
	}
	var (
		out     []ArchiveEntry
		damaged int
	)
	for _, path := range names {
		name := filepath.Base(path)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, damaged, fmt.Errorf("archive: %w", err)
		}
		off := c.offsets[name]
		if off > 0 {
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				_ = f.Close()
				return nil, damaged, fmt.Errorf("archive: %w", err)
			}
		}
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && line[len(line)-1] == '\n' {
				off += int64(len(line))
				payload, ok := unframe(line[:len(line)-1])
				var e ArchiveEntry
				if !ok || json.Unmarshal(payload, &e) != nil {
					damaged++
				} else if e.Shop.Bot == shop.Bot && e.Shop.Account == shop.Account && slices.Contains(stores, e.Shop.Store) {
					out = append(out, e)
				}
			} else if len(line) > 0 && whole {
				damaged++ // a write cut short at the end of a file
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				_ = f.Close()
				return nil, damaged, fmt.Errorf("archive: %w", err)
			}
		}
		_ = f.Close()
		c.offsets[name] = off
	}
	slices.SortStableFunc(out, func(x, y ArchiveEntry) int { return x.At.Compare(y.At) })
	return out, damaged, nil
}

// WalletFacts is what the archive holds of one wallet across the stores
// it was read for.
type WalletFacts struct {
	User int64
	// Balance is the wallet's balance by its newest fact: the newest
	// store's, its highest movement count, its latest write.
	Balance decimal.Decimal
	// Movements are the wallet's movements, oldest first, each once (by
	// store and ref).
	Movements []ArchiveEntry
}

// Wallets sorts archive entries (Read) into each wallet's facts, by user.
func Wallets(entries []ArchiveEntry) []WalletFacts {
	type acc struct {
		facts  WalletFacts
		newest ArchiveEntry
		seen   map[string]bool
	}
	newer := func(x, y ArchiveEntry) bool { // x is a newer fact than y
		if x.Shop.Store != y.Shop.Store {
			return x.Shop.Store > y.Shop.Store
		}
		if x.Seq != y.Seq {
			return x.Seq > y.Seq
		}
		return !x.At.Before(y.At)
	}
	by := map[int64]*acc{}
	var users []int64
	for _, e := range entries {
		if e.User == 0 || (e.Kind != ArchiveWallet && e.Kind != ArchiveBalance) {
			continue
		}
		w := by[e.User]
		if w == nil {
			w = &acc{facts: WalletFacts{User: e.User}, newest: e, seen: map[string]bool{}}
			by[e.User] = w
			users = append(users, e.User)
		} else if newer(e, w.newest) {
			w.newest = e
		}
		if e.Kind == ArchiveWallet && e.Entry != nil {
			key := fmt.Sprintf("%d/%s", e.Shop.Store, e.Entry.Ref)
			if !w.seen[key] {
				w.seen[key] = true
				w.facts.Movements = append(w.facts.Movements, e)
			}
		}
	}
	slices.Sort(users)
	out := make([]WalletFacts, 0, len(users))
	for _, u := range users {
		w := by[u]
		w.facts.Balance = w.newest.Balance
		out = append(out, w.facts)
	}
	return out
}
