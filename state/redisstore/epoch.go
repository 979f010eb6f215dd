package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// StoreEpochKey is the key (after the prefix) that records when the store
// was created.
const StoreEpochKey = "store:created"

// storeEpochScript: KEYS[1] the epoch key. ARGV[1] now in ms. Sets the key
// only when it is missing (never expires) and returns what it holds.
var storeEpochScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`)

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
	v, err := storeEpochScript.Run(ctx, rdb, []string{prefix + StoreEpochKey}, now.UnixMilli()).Text()
	if err != nil {
		return time.Time{}, fmt.Errorf("read store epoch: %w", err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("corrupt store epoch %q", v)
	}
	return time.UnixMilli(ms), nil
}
