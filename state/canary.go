package state

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Canary notices a Redis that lost recent writes: a crash of a Redis with
// AOF everysec, or a failover to a replica that was behind. Every check
// increments one counter; a process that gets back a value not above the
// one it got last time has seen its own earlier write vanish. The shop
// then repairs at once from the systems of record (the Stars sweep, the
// orphan scan) instead of at their next turn.
type Canary struct {
	rdb  redis.UniversalClient
	key  string
	mu   sync.Mutex
	last int64
}

// NewCanary returns the canary under prefix.
func NewCanary(rdb redis.UniversalClient, prefix string) *Canary {
	return &Canary{rdb: rdb, key: prefix + "canary"}
}

// Check increments the counter and reports whether Redis lost a write this
// process had seen since the previous check.
//
// Checks of one process are serialized, so a value read by one is never
// compared with a later one read by another.
func (c *Canary) Check(ctx context.Context) (lost bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.rdb.Incr(ctx, c.key).Result()
	if err != nil {
		return false, fmt.Errorf("canary: %w", err)
	}
	lost = c.last != 0 && v <= c.last
	c.last = v
	return lost, nil
}
