package work_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"shopbot/state/redisstore/work"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/state/statetest"
)

// fakeClock is the injected clock that dates cached values.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// upstream is a fake catalog endpoint: every call answers "catalog v<n>",
// after delay, unless fail is set.
type upstream struct {
	calls atomic.Int64
	delay time.Duration
	mu    sync.Mutex
	fail  error
}

func (u *upstream) setFail(err error) {
	u.mu.Lock()
	u.fail = err
	u.mu.Unlock()
}

func (u *upstream) fetch(ctx context.Context) ([]byte, error) {
	n := u.calls.Add(1)
	if u.delay > 0 {
		select {
		case <-time.After(u.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	u.mu.Lock()
	err := u.fail
	u.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return []byte("catalog v" + strconv.FormatInt(n, 10)), nil
}

var errUpstream = errors.New("upstream: 503 service unavailable")

var minute = work.CacheOptions{TTL: time.Minute}

func newCache(t *testing.T) (*statetest.Redis, *work.Cache, *fakeClock) {
	r := statetest.New(t)
	clk := &fakeClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	c := work.NewCache(r.Client, r.Prefix)
	c.Now = clk.Now
	return r, c, clk
}

// otherProcess is a second Cache over the same Redis and clock, standing
// for another bot replica.
func otherProcess(r *statetest.Redis, clk *fakeClock) *work.Cache {
	c := work.NewCache(r.Client, r.Prefix)
	c.Now = clk.Now
	return c
}

func mustGet(t *testing.T, c *work.Cache, key string, opt work.CacheOptions, u *upstream) (string, bool) {
	t.Helper()
	v, stale, err := c.Get(t.Context(), key, opt, u.fetch)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return string(v), stale
}

func TestCacheMissFetchesAndStores(t *testing.T) {
	r, c, clk := newCache(t)
	u := &upstream{}
	opt := work.CacheOptions{TTL: time.Minute, KeepStale: time.Hour}
	if v, stale := mustGet(t, c, "giftcards:categories", opt, u); v != "catalog v1" || stale {
		t.Fatalf("Get = %q stale=%v", v, stale)
	}
	k := r.Prefix + "cache:giftcards:categories"
	h, err := r.Client.HGetAll(t.Context(), k).Result()
	if err != nil {
		t.Fatal(err)
	}
	if h["v"] != "catalog v1" || h["at"] != strconv.FormatInt(clk.Now().UnixMilli(), 10) || len(h) != 2 {
		t.Fatalf("stored hash = %v", h)
	}
	if ttl := r.Client.PTTL(t.Context(), k).Val(); ttl <= time.Hour || ttl > time.Hour+time.Minute {
		t.Fatalf("redis TTL = %v, want TTL+KeepStale = 1h1m", ttl)
	}
	if n := r.Client.Exists(t.Context(), k+":lock").Val(); n != 0 {
		t.Fatal("the fetch lock was not released")
	}
	if s := c.Stats(); s != (work.CacheStats{Misses: 1, Fetches: 1}) {
		t.Fatalf("stats = %+v", s)
	}
}

func TestCacheHitDoesNotFetch(t *testing.T) {
	_, c, clk := newCache(t)
	u := &upstream{}
	mustGet(t, c, "stars:price", minute, u)
	clk.Advance(59 * time.Second)
	if v, stale := mustGet(t, c, "stars:price", minute, u); v != "catalog v1" || stale {
		t.Fatalf("second Get = %q stale=%v", v, stale)
	}
	if n := u.calls.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	if s := c.Stats(); s != (work.CacheStats{Hits: 1, Misses: 1, Fetches: 1}) {
		t.Fatalf("stats = %+v", s)
	}
}

// commandCounter counts what a client sends to Redis.
type commandCounter struct {
	cmds, pipelines atomic.Int64
}

func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}
func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.pipelines.Add(1)
		return next(ctx, cmds)
	}
}

func TestCacheHitIsOneRoundTrip(t *testing.T) {
	r, c, _ := newCache(t)
	u := &upstream{}
	mustGet(t, c, "premium:plans", minute, u)
	h := &commandCounter{}
	r.Client.AddHook(h)
	mustGet(t, c, "premium:plans", minute, u)
	if h.cmds.Load() != 1 || h.pipelines.Load() != 0 {
		t.Fatalf("a hit sent %d commands and %d pipelines, want 1 command", h.cmds.Load(), h.pipelines.Load())
	}
}

func TestCacheExpiryRefetches(t *testing.T) {
	_, c, clk := newCache(t)
	u := &upstream{}
	mustGet(t, c, "topup:rates", minute, u)
	clk.Advance(time.Minute)
	if v, stale := mustGet(t, c, "topup:rates", minute, u); v != "catalog v2" || stale {
		t.Fatalf("Get after TTL = %q stale=%v, want a refetched catalog v2", v, stale)
	}
	if v, _ := mustGet(t, c, "topup:rates", minute, u); v != "catalog v2" {
		t.Fatalf("Get after refetch = %q", v)
	}
	if n := u.calls.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
}

// stampede runs n Gets of one key at once, spread over caches, and returns
// their values.
func stampede(t *testing.T, caches []*work.Cache, n int, key string, u *upstream) []string {
	t.Helper()
	vals := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			v, _, err := caches[i%len(caches)].Get(t.Context(), key, minute, u.fetch)
			vals[i], errs[i] = string(v), err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	return vals
}

func TestCacheStampedeFetchesOnce(t *testing.T) {
	r, c, _ := newCache(t)
	h := &commandCounter{}
	r.Client.AddHook(h)
	u := &upstream{delay: 200 * time.Millisecond}
	vals := stampede(t, []*work.Cache{c}, 200, "giftcards:brands", u)
	// One read each, the flight's lock, re-read, store and release, and
	// three commands for each caller that joins just after the flight
	// landed: callers in one process share the flight rather than each
	// polling Redis (which costs thousands of commands).
	if n := h.cmds.Load(); n > 2*200 {
		t.Fatalf("200 callers sent %d Redis commands, want at most 400", n)
	}
	if n := u.calls.Load(); n != 1 {
		t.Fatalf("200 concurrent callers caused %d fetches, want 1", n)
	}
	for i, v := range vals {
		if v != "catalog v1" {
			t.Fatalf("caller %d got %q", i, v)
		}
	}
	if s := c.Stats(); s.Hits+s.Misses != 200 || s.Fetches != 1 || s.StaleServes != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestCacheStampedeAcrossTwoProcessesFetchesOnce(t *testing.T) {
	r, a, clk := newCache(t)
	b := otherProcess(r, clk)
	u := &upstream{delay: 200 * time.Millisecond}
	vals := stampede(t, []*work.Cache{a, b}, 200, "keys:search:elden", u)
	if n := u.calls.Load(); n != 1 {
		t.Fatalf("two processes caused %d fetches, want 1 in all", n)
	}
	for i, v := range vals {
		if v != "catalog v1" {
			t.Fatalf("caller %d got %q", i, v)
		}
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Fetches+sb.Fetches != 1 {
		t.Fatalf("stats = %+v / %+v", sa, sb)
	}
}

func TestCacheStaleOnError(t *testing.T) {
	r, c, clk := newCache(t)
	u := &upstream{}
	mustGet(t, c, "services:offers", minute, u)
	clk.Advance(2 * time.Minute)
	u.setFail(errUpstream)

	if v, stale := mustGet(t, c, "services:offers", minute, u); v != "catalog v1" || !stale {
		t.Fatalf("Get with upstream down = %q stale=%v, want the old value, stale", v, stale)
	}
	if n := u.calls.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
	// Within ErrorBackoff nobody, in this process or another, asks the
	// failing upstream again.
	clk.Advance(c.ErrorBackoff - time.Second)
	for _, p := range []*work.Cache{c, otherProcess(r, clk)} {
		if v, stale := mustGet(t, p, "services:offers", minute, u); v != "catalog v1" || !stale {
			t.Fatalf("Get during backoff = %q stale=%v", v, stale)
		}
	}
	if n := u.calls.Load(); n != 2 {
		t.Fatalf("fetches during backoff = %d, want still 2", n)
	}
	if s := c.Stats(); s.StaleServes != 2 {
		t.Fatalf("stats = %+v, want 2 stale serves", s)
	}
	// After it the upstream is tried again, and its recovery is served fresh.
	clk.Advance(2 * time.Second)
	u.setFail(nil)
	if v, stale := mustGet(t, c, "services:offers", minute, u); v != "catalog v3" || stale {
		t.Fatalf("Get after recovery = %q stale=%v", v, stale)
	}
}

func TestCacheErrorWithNothingCached(t *testing.T) {
	r, c, _ := newCache(t)
	u := &upstream{}
	u.setFail(errUpstream)
	for range 2 {
		v, stale, err := c.Get(t.Context(), "gifts:top", minute, u.fetch)
		if !errors.Is(err, errUpstream) || v != nil || stale {
			t.Fatalf("Get = %q, %v, %v; want the fetch error", v, stale, err)
		}
	}
	if n := u.calls.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2 (errors are not cached)", n)
	}
	if n := r.Client.Exists(t.Context(), r.Prefix+"cache:gifts:top", r.Prefix+"cache:gifts:top:lock").Val(); n != 0 {
		t.Fatalf("%d keys left behind by a failed fetch", n)
	}
}

func TestCacheStaleCopyIsDroppedAfterKeepStale(t *testing.T) {
	r, c, clk := newCache(t)
	u := &upstream{}
	opt := work.CacheOptions{TTL: 50 * time.Millisecond, KeepStale: 100 * time.Millisecond}
	mustGet(t, c, "games:categories", opt, u)
	r.FastForward(200 * time.Millisecond)
	clk.Advance(200 * time.Millisecond)
	u.setFail(errUpstream)
	if _, _, err := c.Get(t.Context(), "games:categories", opt, u.fetch); !errors.Is(err, errUpstream) {
		t.Fatalf("Get after KeepStale = %v, want the fetch error", err)
	}
}

func TestCacheSlowUpstreamServesStaleAfterWaitFetch(t *testing.T) {
	_, c, clk := newCache(t)
	u := &upstream{}
	opt := work.CacheOptions{TTL: time.Minute, WaitFetch: 100 * time.Millisecond}
	mustGet(t, c, "keys:regions", opt, u)
	clk.Advance(2 * time.Minute)
	u.delay = time.Second // only the refresh below reads it

	start := time.Now()
	if v, stale := mustGet(t, c, "keys:regions", opt, u); v != "catalog v1" || !stale {
		t.Fatalf("Get during a slow refresh = %q stale=%v", v, stale)
	}
	if took := time.Since(start); took >= u.delay {
		t.Fatalf("stale copy served after %v, not after WaitFetch", took)
	}
	// The refresh goes on without the caller and lands for the next one.
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, stale := mustGet(t, c, "keys:regions", opt, u)
		if !stale {
			if v != "catalog v2" || u.calls.Load() != 2 {
				t.Fatalf("refreshed value = %q after %d fetches", v, u.calls.Load())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background refresh never landed")
		}
	}
}

func TestCacheLockHolderCrashed(t *testing.T) {
	r, c, _ := newCache(t)
	u := &upstream{}
	lock := r.Prefix + "cache:topup:rates:lock"
	// A process took the lock and died before fetching.
	if err := r.Client.Set(t.Context(), lock, "dead-process", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	opt := work.CacheOptions{TTL: time.Minute, WaitFetch: 3 * time.Second}
	type result struct {
		v     string
		stale bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		v, stale, err := c.Get(t.Context(), "topup:rates", opt, u.fetch)
		done <- result{string(v), stale, err}
	}()
	for c.Stats().Misses == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the caller is waiting on the lock
	if n := u.calls.Load(); n != 0 {
		t.Fatalf("fetched %d times while the lock was held", n)
	}
	r.FastForward(300 * time.Millisecond) // the dead holder's lock expires
	res := <-done
	if res.err != nil || res.v != "catalog v1" || res.stale {
		t.Fatalf("Get after the holder died = %+v", res)
	}
	if n := u.calls.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	if n := r.Client.Exists(t.Context(), lock).Val(); n != 0 {
		t.Fatal("the new holder did not release the lock")
	}
}

func TestCacheLockHeldPastWaitFetch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cached    bool
		want      string
		stale     bool
		wantCalls int64
	}{
		{"stale copy is served", true, "catalog v1", true, 1},
		{"nothing cached fetches without the lock", false, "catalog v1", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, c, clk := newCache(t)
			u := &upstream{}
			opt := work.CacheOptions{TTL: time.Minute, WaitFetch: 100 * time.Millisecond}
			if tc.cached {
				mustGet(t, c, "stars:price", opt, u)
				clk.Advance(2 * time.Minute)
			}
			lock := r.Prefix + "cache:stars:price:lock"
			if err := r.Client.Set(t.Context(), lock, "stuck-process", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if v, stale := mustGet(t, c, "stars:price", opt, u); v != tc.want || stale != tc.stale {
				t.Fatalf("Get = %q stale=%v, want %q stale=%v", v, stale, tc.want, tc.stale)
			}
			if n := u.calls.Load(); n != tc.wantCalls {
				t.Fatalf("fetches = %d, want %d", n, tc.wantCalls)
			}
			if tok := r.Client.Get(t.Context(), lock).Val(); tok != "stuck-process" {
				t.Fatalf("someone else's lock was touched: %q", tok)
			}
		})
	}
}

func TestCacheFirstCallerCancelledOthersStillGetTheValue(t *testing.T) {
	_, c, _ := newCache(t)
	var fetchCtxErr atomic.Value
	u := &upstream{delay: 200 * time.Millisecond}
	fetch := func(ctx context.Context) ([]byte, error) {
		v, err := u.fetch(ctx)
		if ctx.Err() != nil {
			fetchCtxErr.Store(ctx.Err())
		}
		return v, err
	}
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "manual:services", minute, fetch)
		first <- err
	}()
	for u.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan string, 1)
	go func() {
		v, _, err := c.Get(t.Context(), "manual:services", minute, fetch)
		if err != nil {
			second <- err.Error()
			return
		}
		second <- string(v)
	}()
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v", err)
	}
	if v := <-second; v != "catalog v1" {
		t.Fatalf("the other caller got %q", v)
	}
	if err := fetchCtxErr.Load(); err != nil {
		t.Fatalf("the fetch saw its context end: %v", err)
	}
	if n := u.calls.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
}

func TestCacheFetchPanicIsAnError(t *testing.T) {
	_, c, _ := newCache(t)
	_, _, err := c.Get(t.Context(), "giftcards:cards", minute, func(context.Context) ([]byte, error) {
		panic("nil map in decoder")
	})
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("Get with a panicking fetch = %v", err)
	}
	u := &upstream{}
	if v, _ := mustGet(t, c, "giftcards:cards", minute, u); v != "catalog v1" {
		t.Fatalf("Get after the panic = %q", v)
	}
}

type card struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Price string   `json:"price"`
	Tags  []string `json:"tags"`
}

func TestGetJSONRoundTrip(t *testing.T) {
	r, c, _ := newCache(t)
	want := []card{{1, "Steam 10 USD", "10.5000", []string{"us"}}, {2, "Steam 20 EUR", "23.1000", nil}}
	var calls int
	fetch := func(context.Context) ([]card, error) {
		calls++
		return want, nil
	}
	for i := range 2 {
		got, stale, err := work.GetJSON(t.Context(), c, "giftcards:steam", minute, fetch)
		if err != nil || stale || !reflect.DeepEqual(got, want) {
			t.Fatalf("GetJSON #%d = %+v, %v, %v", i+1, got, stale, err)
		}
	}
	if calls != 1 {
		t.Fatalf("fetches = %d, want 1", calls)
	}
	raw := r.Client.HGet(t.Context(), r.Prefix+"cache:giftcards:steam", "v").Val()
	if !json.Valid([]byte(raw)) || !strings.Contains(raw, `"price":"10.5000"`) {
		t.Fatalf("stored value is not the JSON: %s", raw)
	}
	failing := func(context.Context) ([]card, error) { return nil, errUpstream }
	if _, _, err := work.GetJSON(t.Context(), c, "giftcards:none", minute, failing); !errors.Is(err, errUpstream) {
		t.Fatalf("GetJSON with a failing fetch = %v", err)
	}
}

func TestCacheInvalidate(t *testing.T) {
	r, c, _ := newCache(t)
	u := &upstream{}
	mustGet(t, c, "topups:brands", minute, u)
	if err := c.Invalidate(t.Context(), "topups:brands"); err != nil {
		t.Fatal(err)
	}
	if n := r.Client.Exists(t.Context(), r.Prefix+"cache:topups:brands").Val(); n != 0 {
		t.Fatal("the value is still stored")
	}
	if v, stale := mustGet(t, c, "topups:brands", minute, u); v != "catalog v2" || stale {
		t.Fatalf("Get after Invalidate = %q stale=%v", v, stale)
	}
}

func TestCacheRejectsBadArguments(t *testing.T) {
	_, c, _ := newCache(t)
	u := &upstream{}
	for _, tc := range []struct {
		key string
		opt work.CacheOptions
	}{
		{"stars:price", work.CacheOptions{}},
		{"", minute},
		{"stars:price:lock", minute},
	} {
		if _, _, err := c.Get(t.Context(), tc.key, tc.opt, u.fetch); err == nil {
			t.Errorf("Get(%q, %+v) = nil error", tc.key, tc.opt)
		}
	}
	if n := u.calls.Load(); n != 0 {
		t.Fatalf("fetches = %d, want 0", n)
	}
}

func BenchmarkCacheHit(b *testing.B) {
	r := statetest.New(b)
	c := work.NewCache(r.Client, r.Prefix)
	u := &upstream{}
	ctx := context.Background()
	if _, _, err := c.Get(ctx, "bench", minute, u.fetch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Get(ctx, "bench", minute, u.fetch); err != nil {
			b.Fatal(err)
		}
	}
}

// A fresh value read once is reused in the process for Local without a
// Redis round trip, and never past its TTL; another replica's refresh is
// seen once the local copy lapses.
func TestCacheLocalCopySavesRoundTripsWithinItsWindow(t *testing.T) {
	r, c, clk := newCache(t)
	u := &upstream{}
	short := work.CacheOptions{TTL: 3 * time.Second}
	mustGet(t, c, "stars", short, u) // fetched and stored
	clk.Advance(1500 * time.Millisecond)
	mustGet(t, c, "stars", short, u) // read from Redis: the local copy starts
	h := &commandCounter{}
	r.Client.AddHook(h)
	if v, _ := mustGet(t, c, "stars", short, u); v != "catalog v1" || h.cmds.Load() != 0 {
		t.Fatalf("got %q with %d Redis commands, want the local copy", v, h.cmds.Load())
	}
	clk.Advance(1600 * time.Millisecond) // past the TTL, though within Local of the read
	if v, _ := mustGet(t, c, "stars", short, u); v != "catalog v2" || u.calls.Load() != 2 {
		t.Fatalf("after the TTL got %q, %d fetches", v, u.calls.Load())
	}
	c.Local = 0
	before := h.cmds.Load()
	mustGet(t, c, "stars", short, u)
	if h.cmds.Load() == before {
		t.Fatal("with Local off a hit did not read Redis")
	}
}
