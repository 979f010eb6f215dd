// Package statetest gives tests a Redis: miniredis by default, or the real
// deployment named by the environment, isolated by a per-test key prefix:
// TEST_REDIS_CLUSTER_URL (a Redis Cluster), else TEST_REDIS_SENTINEL_URL (a
// Sentinel setup), else TEST_REDIS_URL (one server).
package statetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Modes of the real deployment (the same words as redisstore.Mode).
const (
	ModeSingle   = "single"
	ModeSentinel = "sentinel"
	ModeCluster  = "cluster"
)

// Target is a real Redis deployment named by the environment: its mode and
// URL. (statetest cannot import redisstore: its own tests import it.)
type Target struct {
	Mode string
	URL  string
}

// RealRedisMarker is the key every test that uses the real server increments,
// so CI can prove the real-Redis tests ran.
const RealRedisMarker = "shopbot:test:real-redis-runs"

// Redis is a test's Redis client and key prefix. Mini is nil on real Redis.
type Redis struct {
	Client redis.UniversalClient
	Prefix string
	Mini   *miniredis.Miniredis
	Mode   string
}

// Endpoint is the real deployment the environment names, and false when
// it names none (the tests then use miniredis).
func Endpoint() (Target, bool) {
	for _, e := range []struct{ env, mode string }{
		{"TEST_REDIS_CLUSTER_URL", ModeCluster},
		{"TEST_REDIS_SENTINEL_URL", ModeSentinel},
		{"TEST_REDIS_URL", ModeSingle},
	} {
		if u := os.Getenv(e.env); u != "" {
			return Target{Mode: e.mode, URL: u}, true
		}
	}
	return Target{}, false
}

// Real reports whether the tests run against a real Redis deployment.
func Real() bool { _, ok := Endpoint(); return ok }

// Cluster reports whether the tests run against a real Redis Cluster.
func Cluster() bool { e, _ := Endpoint(); return e.Mode == ModeCluster }

// New returns a Redis for t. With a real deployment named (see Endpoint) it
// connects to it (a failure to connect fails the test; it never silently
// falls back) and removes the test's keys at cleanup; otherwise it starts
// miniredis.
func New(t testing.TB) *Redis {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "shopbot:test:" + hex.EncodeToString(b[:]) + ":"
	e, ok := Endpoint()
	if !ok {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		return &Redis{Client: c, Prefix: prefix, Mini: m, Mode: ModeSingle}
	}
	c := Connect(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.Incr(ctx, RealRedisMarker)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		DeletePrefix(ctx, c, prefix)
		_ = c.Close()
	})
	return &Redis{Client: c, Prefix: prefix, Mode: e.Mode}
}

// Connect opens a client to e for t (closing it at cleanup is the
// caller's) and fails t when the deployment does not answer.
func Connect(t testing.TB, e Target) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	switch e.Mode {
	case ModeCluster:
		o, err := redis.ParseClusterURL(e.URL)
		if err != nil {
			t.Fatalf("TEST_REDIS_CLUSTER_URL: %v", err)
		}
		c = redis.NewClusterClient(o)
	case ModeSentinel:
		o, err := redis.ParseFailoverURL(e.URL)
		if err != nil {
			t.Fatalf("TEST_REDIS_SENTINEL_URL: %v", err)
		}
		// As redisstore.ParseSentinelURL: the URL's password is the master's.
		if o.Username == "" && o.Password == "" {
			o.Username, o.Password = o.SentinelUsername, o.SentinelPassword
		}
		o.SentinelUsername, o.SentinelPassword = "", ""
		c = redis.NewFailoverClient(o)
	default:
		o, err := redis.ParseURL(e.URL)
		if err != nil {
			t.Fatalf("TEST_REDIS_URL: %v", err)
		}
		c = redis.NewClient(o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Ping(ctx).Err()
	if cc, ok := c.(*redis.ClusterClient); ok && err == nil {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
	}
	if err != nil {
		t.Fatalf("the redis %s test URL is set but Redis does not answer: %v", e.Mode, err)
	}
	return c
}

// DeletePrefix deletes every key under prefix: on a cluster, on every
// master.
func DeletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) {
	del := func(ctx context.Context, n redis.UniversalClient) error {
		iter := n.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		// One DEL per key: keys of several slots may not share a command.
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Del(ctx, k)
			}
			return nil
		})
		return err
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		_ = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return del(ctx, m)
		})
		return
	}
	_ = del(ctx, c)
}

// FastForward moves time on for TTLs: miniredis is fast-forwarded; on real
// Redis the test sleeps, so keep d small there.
func (r *Redis) FastForward(d time.Duration) {
	if r.Mini != nil {
		r.Mini.FastForward(d)
		return
	}
	time.Sleep(d)
}

// Addr returns a host:port of a single Redis server for tests that need a
// URL: TEST_REDIS_URL's when set, else a fresh miniredis.
func Addr(t testing.TB) string {
	t.Helper()
	if url := os.Getenv("TEST_REDIS_URL"); url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("TEST_REDIS_URL: %v", err)
		}
		return opts.Addr
	}
	return miniredis.RunT(t).Addr()
}
