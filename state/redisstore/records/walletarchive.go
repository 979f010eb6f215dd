package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/state"
)

// ArchiveBalances returns every wallet's balance and movement count now, as the
// archive's daily record (state.ArchiveBalance): with it the newest fact of
// a wallet nobody moved for weeks is still inside the archive's keep.
func (w *Wallets) ArchiveBalances(ctx context.Context) ([]state.ArchiveEntry, error) {
	users, err := w.Holders(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]state.ArchiveEntry, 0, len(users))
	for start := 0; start < len(users); start += 200 {
		batch := users[start:min(start+200, len(users))]
		cmds := make([]*redis.SliceCmd, len(batch))
		_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, u := range batch {
				cmds[i] = p.MGet(ctx, w.keys(u)[0], w.seqKey(u)) // one slot: read together
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read wallet balances: %w", err)
		}
		for i, u := range batch {
			v := cmds[i].Val()
			seq, _ := strconv.ParseInt(str(v[1]), 10, 64)
			out = append(out, state.ArchiveEntry{Kind: state.ArchiveBalance, User: u, Balance: fromCents(v[0]), Seq: seq})
		}
	}
	return out, nil
}

// walletRestoreScript puts an archived wallet back into a store that
// continues the one it was archived from. KEYS: bal, led, refs, restored,
// seq. ARGV: the earlier store (epoch), the balance in cents, then per
// movement (newest first) its ref as restored, signed cents and ledger
// line. Returns {1, balance, seq} when it restored (the restore counts as
// a movement), {0} when that store's wallet was restored before. Movements this store made already (the buyer topped up before
// the restore) stay: the balance is added to theirs, the archived ledger
// lines go after theirs (they are older), and refs they used are kept.
var walletRestoreScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[4], ARGV[1], '1') == 0 then return {0} end
local bal = redis.call('INCRBY', KEYS[1], ARGV[2])
for i = 3, #ARGV, 3 do
  redis.call('HSETNX', KEYS[3], ARGV[i], ARGV[i+1])
  redis.call('RPUSH', KEYS[2], ARGV[i+2])
end
return {1, bal, redis.call('INCR', KEYS[5])}`)

// restoredRef is the ref an archived movement is restored under: as it
// was, so a top-up charge or a wallet payment the store lost is credited
// or debited once more at most never; but a ref naming a shop order by its
// number (a refund, a referral reward) is kept apart under the earlier
// store's name, as the store that continues it numbers its orders anew and
// its order 5 is not the old order 5.
func restoredRef(ref string, store int64) string {
	if strings.Contains(ref, ":order:") {
		return "was:" + strconv.FormatInt(store, 10) + ":" + ref
	}
	return ref
}

// Restore puts back a wallet from the archive of the stores this one
// continues (from names the newest of them): its balance by its newest
// fact, its movements in its ledger and their refs, once per earlier store
// however often and by however many replicas it is called. It reports
// whether this call restored it.
func (w *Wallets) Restore(ctx context.Context, from int64, f state.WalletFacts) (bool, error) {
	c := f.Balance.Shift(2).IntPart()
	args := []any{from, c}
	for i := len(f.Movements) - 1; i >= 0; i-- {
		m := f.Movements[i]
		e := *m.Entry
		e.Balance = m.Balance
		doc, err := json.Marshal(&e)
		if err != nil {
			return false, err
		}
		line := strconv.FormatInt(m.Balance.Shift(2).IntPart(), 10) + "\n" + string(doc)
		args = append(args, restoredRef(e.Ref, m.Shop.Store), e.Amount.Shift(2).IntPart(), line)
	}
	keys := w.keys(f.User)
	res, err := walletRestoreScript.Run(ctx, w.rdb, []string{keys[0], keys[1], keys[2], w.restoredKey(f.User), w.seqKey(f.User)}, args...).Int64Slice()
	if err != nil {
		return false, fmt.Errorf("restore wallet %d: %w", f.User, err)
	}
	if res[0] != 1 {
		return false, nil
	}
	if w.Durable != nil {
		if err := w.Durable.SyncWritten(ctx, keys[1]); err != nil {
			return true, fmt.Errorf("restore wallet %d: %w", f.User, err)
		}
	}
	if w.Archive != nil {
		// This store's own record of the restored balance: a store that
		// later continues this one finds it here.
		err := w.Archive.Append(state.ArchiveEntry{Kind: state.ArchiveBalance, User: f.User, Balance: decimal.New(res[1], -2), Seq: res[2]})
		if err != nil && w.ArchiveFailed != nil {
			w.ArchiveFailed(f.User, "restore", err)
		}
	}
	return true, nil
}

// walletsRestoredKey records (after the prefix) the earlier store whose
// wallets were restored into this one; walletsArchivedKey that one replica
// archived every balance lately.
const (
	walletsRestoredKey = "store:wallets-restored"
	walletsArchivedKey = "store:wallets-archived"
)

// RestoredFrom reports whether the wallets of the earlier store were
// restored into this one (MarkRestored).
func (w *Wallets) RestoredFrom(ctx context.Context, store int64) (bool, error) {
	v, err := w.rdb.Get(ctx, w.p+walletsRestoredKey).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read whether the wallets were restored: %w", err)
	}
	return v == strconv.FormatInt(store, 10), nil
}

// MarkRestored records that every wallet of the earlier store was
// restored into this one.
func (w *Wallets) MarkRestored(ctx context.Context, store int64) error {
	if err := w.rdb.Set(ctx, w.p+walletsRestoredKey, store, 0).Err(); err != nil {
		return fmt.Errorf("record that the wallets were restored: %w", err)
	}
	return nil
}

// ClaimBalancesRun reports whether the caller is the replica to archive
// every balance now: none did for every. A run that failed gives the
// claim back (DropBalancesRun), so the next look tries again.
func (w *Wallets) ClaimBalancesRun(ctx context.Context, every time.Duration) (bool, error) {
	return w.rdb.SetNX(ctx, w.p+walletsArchivedKey, w.Now().UTC().Format(time.RFC3339), every).Result()
}

// DropBalancesRun gives back a claim of ClaimBalancesRun.
func (w *Wallets) DropBalancesRun(ctx context.Context) error {
	return w.rdb.Del(ctx, w.p+walletsArchivedKey).Err()
}
