package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Conn is an open Redis connection and, when no URL was given, the embedded
// in-process server behind it.
type Conn struct {
	Client   redis.UniversalClient
	Embedded bool
	mini     *miniredis.Miniredis
	stop     func() // stops the embedded store's clock
}

// ClockTick is how often the embedded store's clock is moved to the wall
// clock: keys with a TTL expire at most this late.
const ClockTick = time.Second

// Open connects to the Redis server at url (redis:// or rediss://). An empty
// url starts an embedded in-process store instead; it is not durable, and
// callers should warn about that loudly.
func Open(ctx context.Context, url string) (*Conn, error) {
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		t := time.NewTicker(ClockTick)
		c := newEmbeddedClock(m, time.Now)
		stop := c.run(t.C, nil)
		return &Conn{Client: redis.NewClient(&redis.Options{Addr: m.Addr()}), Embedded: true, mini: m,
			stop: func() { stop(); t.Stop() }}, nil
	}
	opts, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opts)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ping redis at %s: %w", opts.Addr, err)
	}
	return &Conn{Client: c}, nil
}

// ParseURL validates a redis:// or rediss:// URL and returns client options.
// Its errors never repeat the URL, which may carry a password.
func ParseURL(url string) (*redis.Options, error) {
	if !strings.HasPrefix(url, "redis://") && !strings.HasPrefix(url, "rediss://") {
		return nil, errors.New("must start with redis:// or rediss://")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("is not a valid redis URL")
	}
	return opts, nil
}

// Close closes the client and stops the embedded server, if any.
func (c *Conn) Close() error {
	err := c.Client.Close()
	if c.stop != nil {
		c.stop()
	}
	if c.mini != nil {
		c.mini.Close()
	}
	return err
}

// embeddedClock moves the embedded store's clock with the wall clock.
// miniredis never moves time by itself: without this, keys with a TTL (rate
// limits, quotes, locks) would never expire and the demo's rate limit would
// refuse a buyer forever.
type embeddedClock struct {
	m    *miniredis.Miniredis
	now  func() time.Time
	last time.Time
}

func newEmbeddedClock(m *miniredis.Miniredis, now func() time.Time) *embeddedClock {
	c := &embeddedClock{m: m, now: now, last: now()}
	m.SetTime(c.last)
	return c
}

// tick fast-forwards the store by the time elapsed since the last tick
// (expiring what is due) and sets its clock (TIME, EXPIREAT) to now.
func (c *embeddedClock) tick() {
	now := c.now()
	if d := now.Sub(c.last); d > 0 {
		c.m.FastForward(d)
	}
	c.m.SetTime(now)
	c.last = now
}

// run ticks on every value of ticks until stopped; after each tick it
// signals ticked, when not nil (for tests). The returned stop waits for the
// loop to end.
func (c *embeddedClock) run(ticks <-chan time.Time, ticked chan<- struct{}) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-ticks:
				c.tick()
				if ticked != nil {
					ticked <- struct{}{}
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}
