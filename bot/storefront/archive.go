package storefront

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/state"
)

// The wallets' archive (state.Archive): every movement is archived as it
// is made (records.Wallets.Archive); every wallet's balance once a day
// (archiveBalances); and a store that continues an earlier one (it came
// back empty, or the shop moved to a new Redis) gets the earlier store's
// wallets back once (restoreWallets), before the shop serves and again
// whenever a replica notices the store it served is gone.

// walletsRestoredKey records (after the prefix) the earlier store whose
// wallets were restored into this one; walletsArchivedKey that one replica
// archived every balance lately.
const (
	walletsRestoredKey = "store:wallets-restored"
	walletsArchivedKey = "store:wallets-archived"
)

// archiveEvery is how often every balance is archived (by one replica);
// archiveCheck how often each replica looks whether that is due.
const (
	archiveEvery = 20 * time.Hour
	archiveCheck = time.Hour
)

// restoreWallets puts back the wallets of the store this one continues
// from the archive, once for the store (each wallet once, however many
// replicas do it at the same moment). Errors are logged: the next start,
// or the next loss, tries again.
func (s *Shop) restoreWallets(ctx context.Context) {
	from := s.opts.Journal.Continues()
	if len(from) == 0 || s.wallets.Archive == nil {
		return
	}
	log, key := s.opts.Logger, s.opts.Prefix+walletsRestoredKey
	mark := strconv.FormatInt(from[0], 10)
	if v, err := s.rdb.Get(ctx, key).Result(); err == nil && v == mark {
		return
	} else if err != nil && !errors.Is(err, redis.Nil) {
		log.Warn("read whether the wallets were restored", "err", err)
		return
	}
	entries, damaged, err := s.wallets.Archive.Read(from)
	if err != nil {
		log.Error("read the wallets' archive", "err", err)
		return
	}
	restored, total := 0, decimal.Zero
	for _, f := range state.Wallets(entries) {
		done, err := s.wallets.Restore(ctx, from[0], f)
		if err != nil {
			log.Error("restore a wallet from the archive", "user", f.User, "err", err)
			return
		}
		if done {
			restored++
			total = total.Add(f.Balance)
		}
	}
	if err := s.rdb.Set(ctx, key, mark, 0).Err(); err != nil {
		log.Warn("record that the wallets were restored", "err", err)
	}
	log.Warn("wallets of the store this one continues restored from the archive",
		"from_store", from[0], "wallets", restored, "usd", total.StringFixed(2), "damaged_lines", damaged)
}

// archiveBalances archives every wallet's balance every archiveEvery, in
// one replica (the first to find it due), until ctx ends.
func (s *Shop) archiveBalances(ctx context.Context) {
	if s.wallets.Archive == nil {
		return
	}
	t := time.NewTicker(archiveCheck)
	defer t.Stop()
	for {
		s.archiveBalancesOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// archiveBalancesOnce archives every balance when no replica did for
// archiveEvery.
func (s *Shop) archiveBalancesOnce(ctx context.Context) {
	log := s.opts.Logger
	ok, err := s.rdb.SetNX(ctx, s.opts.Prefix+walletsArchivedKey, s.opts.Now().UTC().Format(time.RFC3339), archiveEvery).Result()
	if err != nil || !ok {
		return
	}
	list, err := s.wallets.ArchiveBalances(ctx)
	if err == nil {
		err = s.wallets.Archive.Append(list...)
	}
	if err != nil {
		log.Error("archive every wallet's balance", "err", err)
		_ = s.rdb.Del(context.WithoutCancel(ctx), s.opts.Prefix+walletsArchivedKey).Err() // the next check tries again
		return
	}
	log.Info("archived every wallet's balance", "wallets", len(list))
}
