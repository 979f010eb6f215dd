package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestEmbeddedClockLiftsTheRateLimit is the demo's lock-out: ten actions use
// up a one-minute window, the eleventh is refused, and once the clock has
// moved past the window (one tick of the embedded store's clock) the buyer
// may act again.
func TestEmbeddedClockLiftsTheRateLimit(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	clk := &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	ticks, ticked := make(chan time.Time), make(chan struct{})
	stop := newEmbeddedClock(m, clk.now).run(ticks, ticked)
	t.Cleanup(stop)
	tick := func() { ticks <- clk.now(); <-ticked }

	ctx := context.Background()
	l := NewLimiter(rdb, "t:", 10, time.Minute)
	for i := range 10 {
		if ok, _, err := l.Allow(ctx, "u:1"); !ok || err != nil {
			t.Fatalf("action %d refused: %v", i+1, err)
		}
	}
	if ok, wait, _ := l.Allow(ctx, "u:1"); ok || wait <= 0 || wait > time.Minute {
		t.Fatalf("the eleventh action: ok=%v wait=%v", ok, wait)
	}
	clk.add(30 * time.Second)
	tick()
	if ok, wait, _ := l.Allow(ctx, "u:1"); ok || wait > 30*time.Second {
		t.Fatalf("half-way through the window: ok=%v wait=%v", ok, wait)
	}
	clk.add(31 * time.Second)
	tick()
	if ok, _, err := l.Allow(ctx, "u:1"); !ok || err != nil {
		t.Fatalf("still refused after the window: %v", err)
	}
	// The store's own clock (TIME) follows too.
	if got, err := rdb.Time(ctx).Result(); err != nil || !got.Equal(clk.now()) {
		t.Fatalf("TIME = %v, %v; want %v", got, err, clk.now())
	}
}

// TestEmbeddedClockNeverGoesBack: a wall clock stepping back does not
// fast-forward by a negative amount.
func TestEmbeddedClockNeverGoesBack(t *testing.T) {
	m := miniredis.RunT(t)
	clk := &fakeClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	c := newEmbeddedClock(m, clk.now)
	m.Set("k", "v")
	m.SetTTL("k", 10*time.Second)
	clk.add(-time.Hour)
	c.tick()
	if !m.Exists("k") || m.TTL("k") != 10*time.Second {
		t.Fatalf("key after a step back: exists=%v ttl=%v", m.Exists("k"), m.TTL("k"))
	}
	clk.add(time.Hour + 11*time.Second)
	c.tick()
	if m.Exists("k") {
		t.Fatal("the key outlived its TTL")
	}
}

// TestOpenEmbeddedRunsItsClock: Open without a URL starts the clock and
// Close stops it.
func TestOpenEmbeddedRunsItsClock(t *testing.T) {
	conn, err := Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if conn.stop == nil || !conn.Embedded {
		t.Fatal("no clock on the embedded store")
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
}
