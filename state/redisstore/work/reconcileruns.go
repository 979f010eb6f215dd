package work

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReconcileRun is the last run of the books' daily reconciliation.
type ReconcileRun struct {
	At          time.Time // when it ran (zero: never)
	Unexplained int       // the items it could not explain
	Runs        int64     // how many runs there have been
}

// ReconcileRuns records the runs of the books' daily reconciliation, for
// the admins and the tests. Its key, under prefix:
//
//	books:reconcile    HASH at (unix seconds), unexplained, runs
type ReconcileRuns struct {
	rdb redis.UniversalClient
	key string
}

// NewReconcileRuns returns the run record under prefix.
func NewReconcileRuns(rdb redis.UniversalClient, prefix string) *ReconcileRuns {
	return &ReconcileRuns{rdb: rdb, key: prefix + "books:reconcile"}
}

// Record records a run at at that left unexplained items, and counts it.
func (s *ReconcileRuns) Record(ctx context.Context, at time.Time, unexplained int) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.key, "at", at.Unix(), "unexplained", unexplained)
		p.HIncrBy(ctx, s.key, "runs", 1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record a reconciliation run: %w", err)
	}
	return nil
}

// Last reads the last run (a zero ReconcileRun when there was none).
func (s *ReconcileRuns) Last(ctx context.Context) (ReconcileRun, error) {
	m, err := s.rdb.HGetAll(ctx, s.key).Result()
	if err != nil {
		return ReconcileRun{}, fmt.Errorf("read the last reconciliation run: %w", err)
	}
	var run ReconcileRun
	if at, err := strconv.ParseInt(m["at"], 10, 64); err == nil {
		run.At = time.Unix(at, 0)
	}
	run.Unexplained, _ = strconv.Atoi(m["unexplained"])
	run.Runs, _ = strconv.ParseInt(m["runs"], 10, 64)
	return run, nil
}
