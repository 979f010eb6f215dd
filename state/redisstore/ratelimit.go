package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limiter counts actions per key in fixed windows: at most Limit in each
// Window. It guards what costs upstream calls (login checks, quotes).
type Limiter struct {
	rdb    redis.UniversalClient
	p      string
	Limit  int
	Window time.Duration
}

// NewLimiter returns a limiter of limit actions per window under prefix.
func NewLimiter(rdb redis.UniversalClient, prefix string, limit int, window time.Duration) *Limiter {
	return &Limiter{rdb: rdb, p: prefix + "rl:", Limit: limit, Window: window}
}

var limitScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`)

// Allow counts one action for key. When the window's limit is used up it
// returns false and how long until the window ends.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	res, err := limitScript.Run(ctx, l.rdb, []string{l.p + key}, l.Window.Milliseconds()).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("rate limit %s: %w", key, err)
	}
	if int(res[0]) <= l.Limit {
		return true, 0, nil
	}
	return false, time.Duration(res[1]) * time.Millisecond, nil
}
