package redisstore

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Memory is what one Redis master says in INFO about its memory and what
// it dropped to stay under it: the figures an operator watches so that
// an order is never evicted (docs/operator.md, "Redis settings we
// recommend").
type Memory struct {
	Node        string // the master's address ("" for a Sentinel client's master)
	UsedBytes   int64  // used_memory
	MaxBytes    int64  // maxmemory; 0 means no limit
	Policy      string // maxmemory_policy; "" when INFO does not say
	EvictedKeys int64  // evicted_keys since the server started (or CONFIG RESETSTAT)
}

// Known reports whether INFO described the server's memory at all (an
// embedded store or a proxy may not).
func (m Memory) Known() bool { return m.Policy != "" }

// ReadMemory reads INFO from every master c writes to: the server of a
// single-node or Sentinel client, every master of a cluster (sorted by
// address). A master that cannot be read is an error naming it.
func ReadMemory(ctx context.Context, c redis.UniversalClient) ([]Memory, error) {
	switch cc := c.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		var out []Memory
		err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			info, err := m.Info(ctx).Result()
			if err != nil {
				return fmt.Errorf("INFO on %s: %w", m.Options().Addr, err)
			}
			mem := parseMemory(info)
			mem.Node = m.Options().Addr
			mu.Lock()
			out = append(out, mem)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
		return out, nil
	case *redis.Client:
		info, err := cc.Info(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("INFO: %w", err)
		}
		mem := parseMemory(info)
		if a := cc.Options().Addr; a != "FailoverClient" {
			mem.Node = a
		}
		return []Memory{mem}, nil
	default:
		return nil, fmt.Errorf("state: cannot read INFO from a %T", c)
	}
}

// parseMemory reads the memory and eviction fields of an INFO reply.
func parseMemory(info string) Memory {
	var m Memory
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "used_memory":
			m.UsedBytes, _ = strconv.ParseInt(v, 10, 64)
		case "maxmemory":
			m.MaxBytes, _ = strconv.ParseInt(v, 10, 64)
		case "maxmemory_policy":
			m.Policy = v
		case "evicted_keys":
			m.EvictedKeys, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return m
}
