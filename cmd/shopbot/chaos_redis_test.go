//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"shopbot/state/redisstore"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The chaos test's Redis: the real server of TEST_REDIS_URL, in a database
// of its own (CHAOS_REDIS_DB, default 13), because the binary's key prefix
// (redisstore.DefaultPrefix) cannot be configured. Only keys under that prefix
// are ever deleted or restored there.

// chaosLockKey keeps two chaos runs out of one database; the run renews
// it while it lasts, so a run killed outright frees it within chaosLockTTL.
const (
	chaosLockKey = "shopbot:chaos:lock"
	chaosLockTTL = 2 * time.Minute
)

// chaosRedis is the test's connection to the replicas' database.
type chaosRedis struct {
	rdb *redis.Client
	url string // what the replicas get as REDIS_URL
	db  int
}

// openChaosRedis connects to TEST_REDIS_URL's server in database db, takes
// the chaos lock there (one chaos run per database at a time) and empties
// the shop's prefix. Cleanup empties it again and releases the lock.
func openChaosRedis(t *testing.T, raw string, db int) *chaosRedis {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		t.Fatalf("chaos: TEST_REDIS_URL is not a redis:// URL")
	}
	u.Path = "/" + strconv.Itoa(db)
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatalf("chaos: TEST_REDIS_URL with database %d: %v", db, err)
	}
	rdb := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("chaos: TEST_REDIS_URL is set but Redis database %d does not answer: %v", db, err)
	}
	token := strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + strconv.Itoa(os.Getpid())
	ok, err := rdb.SetNX(ctx, chaosLockKey, token, chaosLockTTL).Result()
	if err != nil {
		t.Fatalf("chaos: take the chaos lock: %v", err)
	}
	if !ok {
		t.Fatalf("chaos: another chaos run holds %s in Redis database %d (wait for it, or set CHAOS_REDIS_DB)", chaosLockKey, db)
	}
	cr := &chaosRedis{rdb: rdb, url: u.String(), db: db}
	if n, err := cr.clean(ctx); err != nil {
		t.Fatalf("chaos: clean database %d: %v", db, err)
	} else if n > 0 {
		t.Logf("chaos: removed %d keys left under %s in database %d", n, redisstore.DefaultPrefix, db)
	}
	renewCtx, stopRenew := context.WithCancel(context.Background())
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for sleepCtx(renewCtx, chaosLockTTL/4) {
			rdb.Expire(renewCtx, chaosLockKey, chaosLockTTL)
		}
	}()
	t.Cleanup(func() {
		stopRenew()
		<-renewed
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if os.Getenv("CHAOS_KEEP_REDIS") == "" {
			_, _ = cr.clean(ctx)
		}
		if v, _ := rdb.Get(ctx, chaosLockKey).Result(); v == token {
			rdb.Del(ctx, chaosLockKey)
		}
		_ = rdb.Close()
	})
	return cr
}

// keys lists every key under the shop's prefix.
func (cr *chaosRedis) keys(ctx context.Context) ([]string, error) {
	var out []string
	iter := cr.rdb.Scan(ctx, 0, redisstore.DefaultPrefix+"*", 2000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}

// clean deletes every key under the shop's prefix.
func (cr *chaosRedis) clean(ctx context.Context) (int, error) {
	keys, err := cr.keys(ctx)
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(keys); i += 500 {
		if err := cr.rdb.Del(ctx, keys[i:min(i+500, len(keys))]...).Err(); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// snapshot is every key of the prefix at one moment: DUMP payloads and the
// time to live each had then.
type snapshot struct {
	at   time.Time
	dump map[string]string
	pttl map[string]time.Duration
}

// takeSnapshot dumps every key of the prefix in one MULTI/EXEC. The caller
// has frozen the replicas, so the snapshot is one consistent moment of the
// store, as an append-only file is.
func (cr *chaosRedis) takeSnapshot(ctx context.Context) (*snapshot, error) {
	keys, err := cr.keys(ctx)
	if err != nil {
		return nil, err
	}
	snap := &snapshot{at: time.Now(), dump: map[string]string{}, pttl: map[string]time.Duration{}}
	dumps := make([]*redis.StringCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	_, err = cr.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			dumps[i] = p.Dump(ctx, k)
			ttls[i] = p.PTTL(ctx, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("dump: %w", err)
	}
	for i, k := range keys {
		d, err := dumps[i].Result()
		if errors.Is(err, redis.Nil) {
			continue // gone between SCAN and DUMP
		}
		if err != nil {
			return nil, fmt.Errorf("dump %s: %w", k, err)
		}
		snap.dump[k] = d
		snap.pttl[k] = ttls[i].Val()
	}
	return snap, nil
}

// rollback makes the prefix exactly what snap holds, in one MULTI/EXEC:
// keys written since are deleted, the others restored with the absolute
// expiry they had (as an AOF replay keeps PEXPIREAT). It is what a Redis
// that lost its last writes (an everysec fsync crash, a failover to a
// replica that lagged) looks like after it comes back. It returns how many
// keys it deleted and restored.
func (cr *chaosRedis) rollback(ctx context.Context, snap *snapshot) (deleted, restored int, err error) {
	now, err := cr.keys(ctx)
	if err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(snap.at)
	_, err = cr.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range now {
			if _, ok := snap.dump[k]; !ok {
				p.Del(ctx, k)
				deleted++
			}
		}
		for k, d := range snap.dump {
			ttl := time.Duration(0)
			if pt := snap.pttl[k]; pt > 0 {
				if ttl = pt - elapsed; ttl <= 0 {
					p.Del(ctx, k) // expired meanwhile
					continue
				}
			}
			p.RestoreReplace(ctx, k, ttl, d)
			restored++
		}
		return nil
	})
	return deleted, restored, err
}

// killClients closes every other client connection to the database, as a
// restarting Redis or a failover does; the replicas reconnect.
func (cr *chaosRedis) killClients(ctx context.Context) (int, error) {
	conn := cr.rdb.Conn()
	defer conn.Close()
	self, err := conn.ClientID(ctx).Result()
	if err != nil {
		return 0, err
	}
	list, err := conn.ClientList(ctx).Result()
	if err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(list))
	for sc.Scan() {
		var id int64
		db := -1
		for _, f := range strings.Fields(sc.Text()) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "id":
				id, _ = strconv.ParseInt(v, 10, 64)
			case "db":
				db, _ = strconv.Atoi(v)
			}
		}
		if db != cr.db || id == self || id == 0 {
			continue
		}
		if err := conn.ClientKillByFilter(ctx, "ID", strconv.FormatInt(id, 10)).Err(); err == nil {
			n++
		}
	}
	return n, nil
}
