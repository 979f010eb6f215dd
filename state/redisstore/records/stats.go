package records

import (
	"context"
	"fmt"
	"shopbot/state"

	"github.com/redis/go-redis/v9"
)

// Stats reads the counts in one round trip (ZCARD and SCARD: O(1) each).
func (s *Orders) Stats(ctx context.Context) (*state.OrderStats, error) {
	cards := make(map[string]*redis.IntCmd, len(state.OrderStatuses))
	var orphans, disputed *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, st := range state.OrderStatuses {
			cards[st] = p.ZCard(ctx, s.p+"st:"+st)
		}
		orphans = p.SCard(ctx, s.p+"orphans:reported")
		disputed = p.SCard(ctx, s.p+"disputed")
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read order stats: %w", err)
	}
	st := &state.OrderStats{ByStatus: make(map[string]int64, len(cards)), Orphans: orphans.Val(), Disputed: disputed.Val()}
	for k, c := range cards {
		st.ByStatus[k] = c.Val()
	}
	return st, nil
}
