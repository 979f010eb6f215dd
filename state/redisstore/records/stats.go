package records

import (
	"context"
	"errors"
	"fmt"
	"shopbot/state"
	"time"

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

// inProgress are the statuses of an order on its way: neither finished nor
// waiting for an admin.
var inProgress = []string{state.OrderPaid, state.OrderPlacing, state.OrderPlaced, state.OrderRefunding}

// OldestInProgress returns when the oldest order still on its way (paid,
// placing, placed or refunding: not finished, not in review) was created,
// or the zero time when there is none. Order ids grow with time, so it is
// the lowest id of those statuses' indexes: two round trips whatever the
// number of orders. Fulfilment alerts admins about an order older than
// its StuckAfter; the metrics export this age for the same reason.
func (s *Orders) OldestInProgress(ctx context.Context) (time.Time, error) {
	firsts := make([]*redis.StringSliceCmd, len(inProgress))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, st := range inProgress {
			firsts[i] = p.ZRange(ctx, s.p+"st:"+st, 0, 0)
		}
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read the oldest orders in progress: %w", err)
	}
	var oldest int64
	for _, c := range firsts {
		for _, id := range parseIDs(c.Val()) {
			if oldest == 0 || id < oldest {
				oldest = id
			}
		}
	}
	if oldest == 0 {
		return time.Time{}, nil
	}
	o, err := s.Get(ctx, oldest)
	if errors.Is(err, state.ErrOrderNotFound) {
		return time.Time{}, nil // moved on and shrunk since: read again at the next scrape
	}
	if err != nil {
		return time.Time{}, err
	}
	return o.CreatedAt, nil
}
