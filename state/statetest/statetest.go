// Package statetest gives tests a Redis: miniredis by default, or the real
// server named by TEST_REDIS_URL, isolated by a per-test key prefix.
package statetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// RealRedisMarker is the key every test that uses the real server increments,
// so CI can prove the real-Redis tests ran.
const RealRedisMarker = "shopbot:test:real-redis-runs"

// Redis is a test's Redis client and key prefix. Mini is nil on real Redis.
type Redis struct {
	Client redis.UniversalClient
	Prefix string
	Mini   *miniredis.Miniredis
}

// Real reports whether the tests run against a real Redis server.
func Real() bool { return os.Getenv("TEST_REDIS_URL") != "" }

// New returns a Redis for t. With TEST_REDIS_URL set it connects to that
// server (a failure to connect fails the test; it never silently falls back)
// and removes the test's keys at cleanup; otherwise it starts miniredis.
func New(t testing.TB) *Redis {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "shopbot:test:" + hex.EncodeToString(b[:]) + ":"
	url := os.Getenv("TEST_REDIS_URL")
	if url == "" {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		return &Redis{Client: c, Prefix: prefix, Mini: m}
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("TEST_REDIS_URL is set but Redis does not answer: %v", err)
	}
	c.Incr(ctx, RealRedisMarker)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		for len(keys) > 0 {
			n := min(len(keys), 500)
			c.Del(ctx, keys[:n]...)
			keys = keys[n:]
		}
		_ = c.Close()
	})
	return &Redis{Client: c, Prefix: prefix}
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

// Addr returns a host:port of a Redis for tests that need a URL: the real
// server's when TEST_REDIS_URL is set, else a fresh miniredis.
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
