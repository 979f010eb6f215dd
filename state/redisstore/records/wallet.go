package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"shopbot/state/redisstore"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// Wallets keeps each buyer's shop wallet: a USD balance and a ledger entry
// per movement. Balances are integer cents in Redis (INCRBY is exact and the
// scripts compare integers); the API speaks decimal. Keys of user u, under
// prefix + "{wallet:u}:" so one user's keys share a cluster slot:
//
//	bal   integer cents
//	led   LIST of "<balance cents>\n<entry JSON>", newest first
//	refs  HASH ref -> signed cents (idempotency)
//
// The ledger and refs grow by one entry per movement and are kept: they are
// the accounting record of money taken outside Telegram, and movements are
// rare (admin credits, purchases, refunds).
type Wallets struct {
	rdb redis.UniversalClient
	p   string
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Durable, when set, makes every debit and credit durable before it
	// returns (see Durability.Sync). A movement that happened but could not
	// be confirmed durable returns an error wrapping ErrNotDurable; as
	// movements are idempotent by ref, the caller simply tries again.
	Durable *redisstore.Durability
	// Archive, when set, receives every movement as it is made (with the
	// balance after it), outside Redis: a store that comes back empty
	// rebuilds the wallets from it (Restore). A movement it could not take
	// is reported to ArchiveFailed; the daily record of every balance
	// (ArchiveBalances) catches up with it.
	Archive       *state.Archive
	ArchiveFailed func(user int64, ref string, err error)
}

// NewWallets returns the wallet store under prefix.
func NewWallets(rdb redis.UniversalClient, prefix string) *Wallets {
	return &Wallets{rdb: rdb, p: prefix, Now: time.Now}
}

func (w *Wallets) keys(userID int64) []string {
	p := w.p + "{wallet:" + itoa(userID) + "}:"
	return []string{p + "bal", p + "led", p + "refs"}
}

// seqKey counts the wallet's movements (the archive orders a wallet's
// facts by it); restoredKey records the earlier stores whose archived
// wallet was restored into it (Restore). Both in the wallet's slot.
func (w *Wallets) seqKey(userID int64) string {
	return w.p + "{wallet:" + itoa(userID) + "}:seq"
}

func (w *Wallets) restoredKey(userID int64) string {
	return w.p + "{wallet:" + itoa(userID) + "}:restored"
}

// archive hands a movement just made to the archive.
func (w *Wallets) archive(userID int64, e state.Entry, balance decimal.Decimal, seq int64) {
	if w.Archive == nil {
		return
	}
	e.Balance = balance
	err := w.Archive.Append(state.ArchiveEntry{Kind: state.ArchiveWallet, User: userID, Seq: seq, Balance: balance, Entry: &e})
	if err != nil && w.ArchiveFailed != nil {
		w.ArchiveFailed(userID, e.Ref, err)
	}
}

// walletMoveScript: KEYS bal, led, refs, seq. ARGV: ref, signed cents,
// entry JSON. Returns {code, balance, seq}: 0 moved (seq: the wallet's
// movements now), 1 duplicate ref, -1 insufficient funds, -2 ref reused
// for another amount.
var walletMoveScript = redis.NewScript(`
local prev = redis.call('HGET', KEYS[3], ARGV[1])
if prev then
  if prev ~= ARGV[2] then return {-2, redis.call('GET', KEYS[1]) or '0'} end
  return {1, redis.call('GET', KEYS[1]) or '0'}
end
local amt = tonumber(ARGV[2])
local cur = redis.call('GET', KEYS[1]) or '0'
if amt < 0 and tonumber(cur) + amt < 0 then return {-1, cur} end
redis.call('INCRBY', KEYS[1], ARGV[2])
local bal = redis.call('GET', KEYS[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('LPUSH', KEYS[2], bal .. '\n' .. ARGV[3])
return {0, bal, redis.call('INCR', KEYS[4])}`)

// cents validates a movement amount and returns it in cents.
func cents(amount decimal.Decimal) (int64, error) {
	if !amount.IsPositive() || !amount.Equal(amount.Round(2)) || amount.GreaterThan(state.MaxWalletAmount) {
		return 0, fmt.Errorf("%w: %s", state.ErrBadAmount, amount)
	}
	return amount.Shift(2).IntPart(), nil
}

func fromCents(v any) decimal.Decimal {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return decimal.New(n, -2)
}

func (w *Wallets) move(ctx context.Context, userID int64, signed int64, e state.Entry) (decimal.Decimal, bool, error) {
	if e.Ref == "" {
		return decimal.Zero, false, errors.New("empty wallet ref")
	}
	e.Amount, e.At = decimal.New(signed, -2), w.Now().UTC()
	doc, err := json.Marshal(&e)
	if err != nil {
		return decimal.Zero, false, err
	}
	keys := w.keys(userID)
	res, err := walletMoveScript.Run(ctx, w.rdb, append(keys, w.seqKey(userID)), e.Ref, signed, doc).Slice()
	if err != nil {
		return decimal.Zero, false, err
	}
	bal := fromCents(res[1])
	if code, _ := res[0].(int64); code == 0 {
		if w.Durable != nil {
			if err := w.Durable.SyncWritten(ctx, keys[1]); err != nil { // the ledger: never emptied
				return bal, false, fmt.Errorf("wallet movement %s: %w", e.Ref, err)
			}
		}
		seq, _ := res[2].(int64)
		w.archive(userID, e, bal, seq)
	}
	switch code, _ := res[0].(int64); code {
	case 1:
		return bal, true, nil
	case -1:
		return bal, false, state.ErrInsufficientFunds
	case -2:
		return bal, false, state.ErrRefReused
	}
	return bal, false, nil
}

// Credit adds amount to the user's wallet with a ledger entry and returns the
// new balance. It is idempotent by ref: a second credit with the same ref
// changes nothing and returns the current balance with dup = true (a ref
// already used for a different movement is ErrRefReused). actor says who
// credited (an admin id, "refund", ...).
func (w *Wallets) Credit(ctx context.Context, userID int64, amount decimal.Decimal, ref, note, actor string) (balance decimal.Decimal, dup bool, err error) {
	c, err := cents(amount)
	if err != nil {
		return decimal.Zero, false, fmt.Errorf("credit wallet %d: %w", userID, err)
	}
	bal, dup, err := w.move(ctx, userID, c, state.Entry{Ref: ref, Note: note, Actor: actor})
	if err != nil {
		return bal, false, fmt.Errorf("credit wallet %d ref %s: %w", userID, ref, err)
	}
	return bal, dup, nil
}

// Debit takes amount from the user's wallet atomically and returns the new
// balance. The balance never goes negative: a debit it does not cover is
// ErrInsufficientFunds and changes nothing. It is idempotent by ref: a
// repeated debit with the same ref and amount changes nothing and returns the
// current balance (Moved tells whether a ref was recorded).
func (w *Wallets) Debit(ctx context.Context, userID int64, amount decimal.Decimal, ref, note string) (balance decimal.Decimal, err error) {
	c, err := cents(amount)
	if err != nil {
		return decimal.Zero, fmt.Errorf("debit wallet %d: %w", userID, err)
	}
	bal, _, err := w.move(ctx, userID, -c, state.Entry{Ref: ref, Note: note})
	if err != nil {
		return bal, fmt.Errorf("debit wallet %d ref %s: %w", userID, ref, err)
	}
	return bal, nil
}

// Moved returns the signed amount recorded under ref in the user's wallet
// and whether there is one, so a crashed purchase can tell whether its debit
// happened.
func (w *Wallets) Moved(ctx context.Context, userID int64, ref string) (decimal.Decimal, bool, error) {
	v, err := w.rdb.HGet(ctx, w.keys(userID)[2], ref).Result()
	if errors.Is(err, redis.Nil) {
		return decimal.Zero, false, nil
	}
	if err != nil {
		return decimal.Zero, false, fmt.Errorf("read wallet %d ref %s: %w", userID, ref, err)
	}
	return fromCents(v), true, nil
}

// Balance returns the user's wallet balance (zero for a user who never had
// one).
func (w *Wallets) Balance(ctx context.Context, userID int64) (decimal.Decimal, error) {
	v, err := w.rdb.Get(ctx, w.keys(userID)[0]).Result()
	if errors.Is(err, redis.Nil) {
		return decimal.Zero, nil
	}
	if err != nil {
		return decimal.Zero, fmt.Errorf("read wallet %d: %w", userID, err)
	}
	return fromCents(v), nil
}

// Ledger returns up to count of the user's ledger entries, newest first,
// after skipping offset of them.
func (w *Wallets) Ledger(ctx context.Context, userID int64, offset, count int) ([]state.Entry, error) {
	if count <= 0 || offset < 0 {
		return nil, nil
	}
	vals, err := w.rdb.LRange(ctx, w.keys(userID)[1], int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("read ledger of wallet %d: %w", userID, err)
	}
	out := make([]state.Entry, 0, len(vals))
	for _, v := range vals {
		bal, doc, ok := strings.Cut(v, "\n")
		if !ok {
			return nil, fmt.Errorf("corrupt ledger entry in wallet %d", userID)
		}
		var e state.Entry
		if err := json.Unmarshal([]byte(doc), &e); err != nil {
			return nil, fmt.Errorf("decode ledger entry of wallet %d: %w", userID, err)
		}
		e.Balance = fromCents(bal)
		out = append(out, e)
	}
	return out, nil
}

// LedgerLen returns how many ledger entries the user's wallet has, for
// pagination.
func (w *Wallets) LedgerLen(ctx context.Context, userID int64) (int64, error) {
	n, err := w.rdb.LLen(ctx, w.keys(userID)[1]).Result()
	if err != nil {
		return 0, fmt.Errorf("read ledger of wallet %d: %w", userID, err)
	}
	return n, nil
}
