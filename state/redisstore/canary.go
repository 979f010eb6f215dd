package redisstore

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Canary notices a Redis that lost recent writes: a crash of a Redis with
// AOF everysec, or a failover to a replica that was behind. Every check
// increments one counter; a process that gets back a value not above the
// one it got last time has seen its own earlier write vanish. The shop
// then repairs at once from the systems of record (the Stars sweep, the
// orphan scan) instead of at their next turn.
//
// On Redis Cluster every master fails over on its own, so there is one
// counter per master: a key in a slot that master owns (prefix +
// "canary:{<tag>}"), found from the slot map at every check. A failover
// keeps the slots, so the promoted replica is checked under the same key;
// a resharding carries the key along with its value.
type Canary struct {
	rdb  redis.UniversalClient
	key  string
	mu   sync.Mutex
	last map[string]int64
}

// NewCanary returns the canary under prefix.
func NewCanary(rdb redis.UniversalClient, prefix string) *Canary {
	return &Canary{rdb: rdb, key: prefix + "canary", last: map[string]int64{}}
}

// Keys are the counters a check increments: one, or one per cluster
// master.
func (c *Canary) Keys(ctx context.Context) ([]string, error) {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return []string{c.key}, nil
	}
	shards, err := cc.ClusterShards(ctx).Result()
	if err != nil {
		return nil, err // CLUSTER SHARDS: Redis >= 7.0
	}
	var keys []string
	for _, sh := range shards {
		if len(sh.Slots) > 0 {
			keys = append(keys, c.key+":{"+slotTag(int(sh.Slots[0].Start))+"}")
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Check increments the counter and reports whether Redis lost a write this
// process had seen since the previous check.
//
// Checks of one process are serialized, so a value read by one is never
// compared with a later one read by another.
func (c *Canary) Check(ctx context.Context) (lost bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys, err := c.Keys(ctx)
	if err != nil {
		return false, fmt.Errorf("canary: %w", err)
	}
	for _, k := range keys {
		v, err := c.rdb.Incr(ctx, k).Result()
		if err != nil {
			return lost, fmt.Errorf("canary: %w", err)
		}
		if last := c.last[k]; last != 0 && v <= last {
			lost = true
		}
		c.last[k] = v
	}
	return lost, nil
}

// Seen returns the value each counter had at this process's last check.
func (c *Canary) Seen() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.last))
	for k, v := range c.last {
		out[k] = v
	}
	return out
}

// Remember takes values seen before this process started (recorded
// outside Redis) as seen: a counter found below one of them at the next
// check means Redis lost writes meanwhile.
func (c *Canary) Remember(seen map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range seen {
		c.last[k] = max(c.last[k], v)
	}
}
