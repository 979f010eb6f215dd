package state

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// OrderStatuses are every status an order can be in.
var OrderStatuses = []string{OrderPaid, OrderPlacing, OrderPlaced, OrderDelivered, OrderRefunding, OrderRefunded, OrderNeedsReview}

// OrderStats are the store-wide counts the metrics show: orders by status,
// upstream orders reported as nobody's (orphans) and those disputed by an
// order in review.
type OrderStats struct {
	ByStatus map[string]int64
	Orphans  int64
	Disputed int64
}

// Stats reads the counts in one round trip (ZCARD and SCARD: O(1) each).
func (s *Orders) Stats(ctx context.Context) (*OrderStats, error) {
	cards := make(map[string]*redis.IntCmd, len(OrderStatuses))
	var orphans, disputed *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, st := range OrderStatuses {
			cards[st] = p.ZCard(ctx, s.p+"st:"+st)
		}
		orphans = p.SCard(ctx, s.p+"orphans:reported")
		disputed = p.SCard(ctx, s.p+"disputed")
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read order stats: %w", err)
	}
	st := &OrderStats{ByStatus: make(map[string]int64, len(cards)), Orphans: orphans.Val(), Disputed: disputed.Val()}
	for k, c := range cards {
		st.ByStatus[k] = c.Val()
	}
	return st, nil
}
