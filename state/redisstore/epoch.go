package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// StoreEpochKey is the key (after the prefix) that records when the store
// was created.
const StoreEpochKey = "store:created"

// storeLineageKey holds the earlier stores this one continues (see
// StoreLineage), under the prefix like every key of the shop: a hash tag
// of the whole epoch key (or the prefix's own tag, which comes first when
// it has one) puts it in the epoch key's slot, so both are written by one
// script on a Redis Cluster.
func storeLineageKey(prefix string) string {
	return prefix + "{" + prefix + StoreEpochKey + "}:continues"
}

// maxLineage bounds how many earlier stores a store continues (the newest
// first): a shop whose store came back empty eight times in a row has
// older worries than the ninth.
const maxLineage = 8

// storeEpochScript: KEYS[1] the epoch key, KEYS[2] the lineage key.
// ARGV[1] now in ms, ARGV[2] the earlier stores (comma-separated epochs,
// may be empty). Sets the epoch only when it is missing (never expires),
// and with it the lineage, and returns what both hold.
var storeEpochScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') and ARGV[2] ~= '' then
  redis.call('SET', KEYS[2], ARGV[2])
end
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]) or ''}`)

// StoreEpoch returns when this store was created: the time (ms precision)
// that the first call on this Redis and prefix wrote under
// <prefix>store:created, set once (SET NX) and never expiring. The bot
// calls it when it starts and before it sends an invoice, so every record
// the store holds was written after its epoch.
//
// It is what the Stars sweep uses to tell a payment it lost track of from
// one it never knew: a Star charge made before the epoch may have been
// delivered from a store that is gone (a lost volume, a wrong database
// number, a run without REDIS_URL), so it is never refunded automatically.
// A store restored from a backup keeps its epoch; a flushed one gets a new
// one, which only makes more charges look old (the safe side).
func StoreEpoch(ctx context.Context, rdb redis.UniversalClient, prefix string, now time.Time) (time.Time, error) {
	l, err := StoreLineage(ctx, rdb, prefix, now, nil)
	return l.Epoch, err
}

// Lineage is a store and the earlier stores it continues.
type Lineage struct {
	// Epoch is when the store was created (StoreEpoch).
	Epoch time.Time
	// Continues are the epochs (Unix ms) of the stores this one took over
	// from, newest first: the store that came back empty (its Redis lost
	// its volume, or the shop moved to a new Redis) and the ones that one
	// continued. Empty for a shop's first store.
	Continues []int64
}

// StoreLineage is StoreEpoch that also records, when the call creates the
// store, the earlier stores it continues (prev, newest first: the store
// the caller served or the journal's directory last served, and what that
// one continued), and returns the lineage the store has. Only the call
// that creates the epoch writes the lineage, in the same script: a store's
// lineage never changes, and every process of the shop reads the same.
func StoreLineage(ctx context.Context, rdb redis.UniversalClient, prefix string, now time.Time, prev []int64) (Lineage, error) {
	var l Lineage
	parts := make([]string, 0, min(len(prev), maxLineage))
	for _, e := range prev {
		if e > 0 && e < now.UnixMilli() && len(parts) < maxLineage {
			parts = append(parts, strconv.FormatInt(e, 10))
		}
	}
	res, err := storeEpochScript.Run(ctx, rdb, []string{prefix + StoreEpochKey, storeLineageKey(prefix)}, now.UnixMilli(), strings.Join(parts, ",")).StringSlice()
	if err != nil {
		return l, fmt.Errorf("read store epoch: %w", err)
	}
	if len(res) != 2 {
		return l, fmt.Errorf("read store epoch: %d values", len(res))
	}
	ms, err := strconv.ParseInt(res[0], 10, 64)
	if err != nil {
		return l, fmt.Errorf("corrupt store epoch %q", res[0])
	}
	l.Epoch = time.UnixMilli(ms)
	for s := range strings.SplitSeq(res[1], ",") {
		if e, err := strconv.ParseInt(s, 10, 64); err == nil && e > 0 && e < ms {
			l.Continues = append(l.Continues, e)
		}
	}
	return l, nil
}
