package statetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Snapshot copies every key of the test's prefix and returns a function
// that puts Redis back exactly as it was then: keys written since are
// deleted and changed ones restored. It is what a crash of a Redis with AOF
// everysec, or a failover to a replica that was behind, does to the writes
// of the last moments. (Keys are copied by type, as miniredis cannot DUMP
// anything but strings.)
func (r *Redis) Snapshot(t testing.TB) (rollback func()) {
	t.Helper()
	ctx := context.Background()
	type entry struct {
		typ  string
		str  string
		hash map[string]string
		set  []string
		zset []redis.Z
		list []string
		ttl  time.Duration
	}
	saved := map[string]*entry{}
	must := func(err error, k string) {
		if err != nil && err != redis.Nil {
			t.Fatalf("snapshot %s: %v", k, err)
		}
	}
	for _, k := range r.keys(t) {
		typ, err := r.Client.Type(ctx, k).Result()
		must(err, k)
		e := &entry{typ: typ}
		switch typ {
		case "string":
			e.str, err = r.Client.Get(ctx, k).Result()
		case "hash":
			e.hash, err = r.Client.HGetAll(ctx, k).Result()
		case "set":
			e.set, err = r.Client.SMembers(ctx, k).Result()
		case "zset":
			e.zset, err = r.Client.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "list":
			e.list, err = r.Client.LRange(ctx, k, 0, -1).Result()
		case "none":
			continue
		default:
			t.Fatalf("snapshot %s: type %s", k, typ)
		}
		must(err, k)
		if err == redis.Nil || (typ != "string" && len(e.hash)+len(e.set)+len(e.zset)+len(e.list) == 0) {
			continue // gone between TYPE and the read
		}
		e.ttl, err = r.Client.PTTL(ctx, k).Result()
		must(err, k)
		saved[k] = e
	}
	return func() {
		t.Helper()
		for _, k := range r.keys(t) {
			if err := r.Client.Del(ctx, k).Err(); err != nil {
				t.Fatalf("roll back %s: %v", k, err)
			}
		}
		for k, e := range saved {
			var err error
			switch e.typ {
			case "string":
				err = r.Client.Set(ctx, k, e.str, 0).Err()
			case "hash":
				err = r.Client.HSet(ctx, k, e.hash).Err()
			case "set":
				err = r.Client.SAdd(ctx, k, e.set).Err()
			case "zset":
				err = r.Client.ZAdd(ctx, k, e.zset...).Err()
			case "list":
				err = r.Client.RPush(ctx, k, e.list).Err()
			}
			if err == nil && e.ttl > 0 {
				err = r.Client.PExpire(ctx, k, e.ttl).Err()
			}
			if err != nil {
				t.Fatalf("roll back %s: %v", k, err)
			}
		}
	}
}

func (r *Redis) keys(t testing.TB) []string {
	t.Helper()
	var out []string
	var mu sync.Mutex
	scan := func(ctx context.Context, c redis.UniversalClient) error {
		iter := c.Scan(ctx, 0, r.Prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := r.Client.(*redis.ClusterClient); ok {
		// Every master holds some of the keys.
		err = cc.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error { return scan(ctx, m) })
	} else {
		err = scan(context.Background(), r.Client)
	}
	if err != nil {
		t.Fatalf("list keys: %v", err)
	}
	return out
}
