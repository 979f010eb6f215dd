package work

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// CacheOptions says how long one cached catalog response stays fresh and
// how callers behave while it is being refreshed.
type CacheOptions struct {
	TTL       time.Duration // freshness; after it the value is refetched (required)
	KeepStale time.Duration // how long a stale copy is kept to serve when the upstream fails (default 24h)
	WaitFetch time.Duration // how long a caller waits for another caller's in-flight fetch before fetching itself or serving stale (default 5s)
}

func (o CacheOptions) withDefaults() CacheOptions {
	if o.KeepStale <= 0 {
		o.KeepStale = 24 * time.Hour
	}
	if o.WaitFetch <= 0 {
		o.WaitFetch = 5 * time.Second
	}
	return o
}

// CacheStats counts what a Cache did since it was made. Every Get is either
// a hit or a miss; Fetches counts calls to the upstream; StaleServes counts
// callers given a stale copy.
type CacheStats struct {
	Hits, Misses, Fetches, StaleServes int64
}

// Cache is the Redis-backed catalog cache shared by every bot process. Each
// key is one hash `<prefix>cache:<key>` with the value `v`, the time it was
// fetched `at` (unix ms) and, after a failed refresh, the time of that
// failure `f`. Freshness is judged from `at`; the Redis TTL (TTL+KeepStale)
// only cleans up. At most one fetch per key runs at a time: callers in one
// process share a flight, and flights in different processes take a short
// lock `<prefix>cache:<key>:lock`; the others wait for its value.
type Cache struct {
	rdb redis.UniversalClient
	p   string

	// Now dates fetched values and judges their freshness. Lock expiry and
	// waiting use real time.
	Now func() time.Time
	// FetchTimeout bounds one fetch. The fetch runs detached from the
	// caller's context, so a caller who gives up does not fail the others.
	FetchTimeout time.Duration
	// ErrorBackoff is how long after a failed refresh the stale copy is
	// served without asking the upstream again.
	ErrorBackoff time.Duration

	// Local is how long this process reuses a fresh value it has read,
	// without asking Redis again (never past the value's TTL): a thousand
	// buyers browsing one screen then cost one Redis read a second or so,
	// not one each. Zero turns it off.
	Local time.Duration

	mu      sync.Mutex
	flights map[string]*flight
	local   map[string]localEntry

	hits, misses, fetches, staleServes atomic.Int64
}

// flight is one refresh of a key in this process; every caller that finds
// the key missing or expired while it runs waits for its outcome.
type flight struct {
	done  chan struct{}
	val   []byte
	stale bool
	err   error
}

// NewCache returns the catalog cache stored under prefix.
func NewCache(rdb redis.UniversalClient, prefix string) *Cache {
	return &Cache{
		rdb: rdb, p: prefix + "cache:",
		Now: time.Now, FetchTimeout: 20 * time.Second, ErrorBackoff: 10 * time.Second,
		flights: map[string]*flight{}, local: map[string]localEntry{},
		Local: 2 * time.Second,
	}
}

// localEntry is a fresh value this process read, and until when it may be
// reused (unix ms).
type localEntry struct {
	val   []byte
	until int64
}

// maxLocal bounds the local copies (search keys are as many as queries).
const maxLocal = 4096

func (c *Cache) localGet(k string, now int64) ([]byte, bool) {
	if c.Local <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.local[k]
	if !ok || now >= e.until {
		return nil, false
	}
	return e.val, true
}

func (c *Cache) localPut(k string, val []byte, now, freshUntil int64) {
	if c.Local <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.local) >= maxLocal {
		clear(c.local)
	}
	c.local[k] = localEntry{val: val, until: min(freshUntil, now+c.Local.Milliseconds())}
}

// Stats returns the counters so far.
func (c *Cache) Stats() CacheStats {
	return CacheStats{
		Hits: c.hits.Load(), Misses: c.misses.Load(),
		Fetches: c.fetches.Load(), StaleServes: c.staleServes.Load(),
	}
}

// entry is what one read of a cache hash found.
type entry struct {
	ok     bool // a value is stored
	val    []byte
	at     int64 // when val was fetched, unix ms
	failed int64 // when a refresh last failed, unix ms; 0 if none since val
}

func (e entry) fresh(now int64, ttl time.Duration) bool {
	return e.ok && now < e.at+ttl.Milliseconds()
}

func (e entry) backingOff(now int64, backoff time.Duration) bool {
	return e.ok && e.failed > 0 && now < e.failed+backoff.Milliseconds()
}

func (c *Cache) read(ctx context.Context, k string) (entry, error) {
	vals, err := c.rdb.HMGet(ctx, k, "v", "at", "f").Result()
	if err != nil {
		return entry{}, err
	}
	var e entry
	if v, ok := vals[0].(string); ok {
		e.ok, e.val = true, []byte(v)
	}
	e.at, _ = strconv.ParseInt(str(vals[1]), 10, 64)
	e.failed, _ = strconv.ParseInt(str(vals[2]), 10, 64)
	return e, nil
}

// Get returns the cached bytes for key, calling fetch when they are missing
// or older than opt.TTL. A fresh value costs one Redis round trip.
//
// Only one fetch per key runs at a time across all processes; the other
// callers wait for its value. When the refresh fails, or takes longer than
// opt.WaitFetch, and a stale copy exists, the stale copy is returned with
// stale = true and a nil error (show "prices may be out of date"). When
// nothing is cached the fetch's error is returned as is.
//
// A caller whose ctx ends gets its error while the fetch goes on for the
// others. Concurrent callers of one key share the options of the first. The
// returned slice may be shared with other callers and must not be modified.
func (c *Cache) Get(ctx context.Context, key string, opt CacheOptions, fetch func(ctx context.Context) ([]byte, error)) (val []byte, stale bool, err error) {
	if key == "" || strings.HasSuffix(key, ":lock") {
		return nil, false, fmt.Errorf("cache key %q is empty or ends in :lock", key)
	}
	if opt.TTL <= 0 {
		return nil, false, fmt.Errorf("cache %q: TTL must be positive", key)
	}
	opt = opt.withDefaults()
	if v, ok := c.localGet(key, c.Now().UnixMilli()); ok {
		c.hits.Add(1)
		return v, false, nil
	}
	e, err := c.read(ctx, c.p+key)
	if err != nil {
		return nil, false, fmt.Errorf("read cache %q: %w", key, err)
	}
	now := c.Now().UnixMilli()
	if e.fresh(now, opt.TTL) {
		c.hits.Add(1)
		c.localPut(key, e.val, now, e.at+opt.TTL.Milliseconds())
		return e.val, false, nil
	}
	c.misses.Add(1)
	if e.backingOff(now, c.ErrorBackoff) {
		c.staleServes.Add(1)
		return e.val, true, nil
	}

	f := c.join(ctx, key, func(ctx context.Context) ([]byte, bool, error) {
		return c.refresh(ctx, key, opt, e, fetch)
	})
	var slow <-chan time.Time
	if e.ok { // a stale copy beats a long wait
		t := time.NewTimer(opt.WaitFetch)
		defer t.Stop()
		slow = t.C
	}
	select {
	case <-f.done:
	case <-slow:
		c.staleServes.Add(1)
		return e.val, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	if f.stale {
		c.staleServes.Add(1)
	}
	return f.val, f.stale, f.err
}

// join returns the flight refreshing key in this process, starting one with
// run when there is none. The flight runs under a context that callers
// cannot cancel.
func (c *Cache) join(ctx context.Context, key string, run func(context.Context) ([]byte, bool, error)) *flight {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flights[key]; ok {
		return f
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	go func() {
		defer close(f.done)
		f.val, f.stale, f.err = run(context.WithoutCancel(ctx))
		c.mu.Lock()
		delete(c.flights, key)
		c.mu.Unlock()
	}()
	return f
}

// refresh brings key up to date for this process's flight. It takes the
// cross-process lock and fetches, or waits up to opt.WaitFetch for the
// holder's value; when the wait runs out it serves the stale copy, or
// fetches without the lock when there is none. seen is what Get read.
func (c *Cache) refresh(ctx context.Context, key string, opt CacheOptions, seen entry, fetch func(ctx context.Context) ([]byte, error)) ([]byte, bool, error) {
	k := c.p + key
	lock := k + ":lock"
	token := newToken()
	last := seen // the newest stale copy known
	deadline := time.Now().Add(opt.WaitFetch)
	pause := 10 * time.Millisecond
	for {
		// Lock first, then read: a holder stores its value before it
		// releases the lock, so whoever gets the lock next sees that value.
		got, err := c.rdb.SetNX(ctx, lock, token, 2*opt.WaitFetch).Result()
		if err != nil {
			return c.failed(key, last, fmt.Errorf("lock cache %q: %w", key, err))
		}
		e, err := c.read(ctx, k)
		if err != nil {
			c.release(ctx, lock, token, got)
			return c.failed(key, last, fmt.Errorf("read cache %q: %w", key, err))
		}
		now := c.Now().UnixMilli()
		if e.fresh(now, opt.TTL) || (e.ok && e.at > seen.at) {
			c.release(ctx, lock, token, got)
			return e.val, false, nil
		}
		if e.ok {
			last = e
		}
		if e.backingOff(now, c.ErrorBackoff) { // the holder's fetch failed
			c.release(ctx, lock, token, got)
			return e.val, true, nil
		}
		if got {
			return c.fetch(ctx, key, opt, lock, token, last, fetch)
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		time.Sleep(min(pause, left))
		pause = min(pause*3/2, 100*time.Millisecond)
	}
	if last.ok {
		return last.val, true, nil
	}
	return c.fetch(ctx, key, opt, lock, "", last, fetch)
}

// failed is the outcome of a refresh that could not finish: the stale copy
// when there is one, otherwise err.
func (c *Cache) failed(key string, last entry, err error) ([]byte, bool, error) {
	if last.ok {
		return last.val, true, nil
	}
	return nil, false, err
}

var storeScript = redis.NewScript(`
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0') or 0
if at > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'at', ARGV[2])
redis.call('HDEL', KEYS[1], 'f')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`)

var failScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'f', ARGV[1])
return 1`)

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// fetch calls the upstream and stores the value, then releases the lock
// (token is "" when it is not held). A failure is recorded on the stale copy
// so that every process serves it for ErrorBackoff.
func (c *Cache) fetch(ctx context.Context, key string, opt CacheOptions, lock, token string, last entry, fetch func(ctx context.Context) ([]byte, error)) ([]byte, bool, error) {
	k := c.p + key
	defer c.release(ctx, lock, token, token != "")
	c.fetches.Add(1)
	val, err := c.call(ctx, key, fetch)
	if err != nil {
		if !last.ok {
			return nil, false, err
		}
		// Best effort: without the mark, the next caller just tries again.
		_ = failScript.Run(ctx, c.rdb, []string{k}, c.Now().UnixMilli()).Err()
		return last.val, true, nil
	}
	if val == nil {
		val = []byte{}
	}
	// The value is the caller's even when storing it fails; the next Get
	// then fetches again.
	_ = storeScript.Run(ctx, c.rdb, []string{k}, val, c.Now().UnixMilli(),
		(opt.TTL + opt.KeepStale).Milliseconds()).Err()
	return val, false, nil
}

// call runs fetch with its own timeout and turns a panic into an error, so a
// bad upstream answer cannot take the process down.
func (c *Cache) call(ctx context.Context, key string, fetch func(ctx context.Context) ([]byte, error)) (val []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.FetchTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			val, err = nil, fmt.Errorf("fetch cache %q: panic: %v", key, r)
		}
	}()
	return fetch(ctx)
}

// release deletes the lock when held is true and it still carries token. A
// failure is harmless: the lock expires by itself.
func (c *Cache) release(ctx context.Context, lock, token string, held bool) {
	if held {
		_ = unlockScript.Run(ctx, c.rdb, []string{lock}, token).Err()
	}
}

// Invalidate drops the cached value of key, so the next Get fetches it. A
// fetch already in flight may still store what it got.
func (c *Cache) Invalidate(ctx context.Context, key string) error {
	if err := c.rdb.Del(ctx, c.p+key).Err(); err != nil {
		return fmt.Errorf("invalidate cache %q: %w", key, err)
	}
	return nil
}

// GetJSON is Get for a value stored as JSON: fetch's result is encoded with
// encoding/json when it is cached and decoded from the cache for every
// caller.
func GetJSON[T any](ctx context.Context, c *Cache, key string, opt CacheOptions, fetch func(ctx context.Context) (T, error)) (T, bool, error) {
	var zero T
	b, stale, err := c.Get(ctx, key, opt, func(ctx context.Context) ([]byte, error) {
		v, err := fetch(ctx)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode cache %q: %w", key, err)
		}
		return b, nil
	})
	if err != nil {
		return zero, false, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return zero, false, fmt.Errorf("decode cache %q: %w", key, err)
	}
	return v, stale, nil
}
