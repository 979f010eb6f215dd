package records

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Holders returns the ids of every user whose wallet has a ledger (who
// ever had a movement), in ascending order. It scans the keyspace (on
// every master of a Redis Cluster): it is for admin exports, not for a
// buyer's request.
func (w *Wallets) Holders(ctx context.Context) ([]int64, error) {
	var (
		mu  sync.Mutex // the masters of a cluster are scanned at once
		out []int64
	)
	scan := func(ctx context.Context, rdb redis.Cmdable) error {
		match := w.p + "{wallet:*}:led"
		var cursor uint64
		for {
			keys, next, err := rdb.Scan(ctx, cursor, match, 500).Result()
			if err != nil {
				return fmt.Errorf("list wallets: %w", err)
			}
			for _, k := range keys {
				id := strings.TrimSuffix(strings.TrimPrefix(k, w.p+"{wallet:"), "}:led")
				if n, err := strconv.ParseInt(id, 10, 64); err == nil {
					mu.Lock()
					out = append(out, n)
					mu.Unlock()
				}
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	if cc, ok := w.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	} else {
		err = scan(ctx, w.rdb)
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
