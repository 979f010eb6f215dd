package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Mode is how the shop reaches Redis.
type Mode string

// The deployment modes (docs/operator.md, "Redis modes").
const (
	// ModeEmbedded is an in-process store: nothing survives a restart.
	ModeEmbedded Mode = "embedded"
	// ModeSingle is one Redis server (REDIS_URL).
	ModeSingle Mode = "single"
	// ModeSentinel is a master found through Redis Sentinel
	// (REDIS_SENTINEL_URL); the client follows failovers.
	ModeSentinel Mode = "sentinel"
	// ModeCluster is a Redis Cluster (REDIS_CLUSTER_URL); the client
	// follows slot moves and failovers.
	ModeCluster Mode = "cluster"
)

// Endpoint names a Redis deployment: its mode and URL. The zero Endpoint
// is the embedded store.
type Endpoint struct {
	Mode Mode
	URL  string
}

// Client is a connection to the shop's Redis in any of its modes
// (go-redis's UniversalClient). The shop's stores (records, work) are
// built over it; nothing outside the store packages calls it, so the rest
// of the shop names it by this alias and never imports the Redis client.
type Client = redis.UniversalClient

// Conn is an open Redis connection and, when no URL was given, the embedded
// in-process server behind it.
type Conn struct {
	Client   redis.UniversalClient
	Mode     Mode
	Embedded bool
	mini     *miniredis.Miniredis
	stop     func() // stops the embedded store's clock
}

// ClockTick is how often the embedded store's clock is moved to the wall
// clock: keys with a TTL expire at most this late.
const ClockTick = time.Second

// Open connects to the single Redis server at url (redis:// or rediss://).
// An empty url starts an embedded in-process store instead; it is not
// durable, and callers should warn about that loudly.
func Open(ctx context.Context, url string) (*Conn, error) {
	if url == "" {
		return OpenEndpoint(ctx, Endpoint{})
	}
	return OpenEndpoint(ctx, Endpoint{Mode: ModeSingle, URL: url})
}

// OpenEndpoint connects to the deployment e names and pings it (on a
// cluster, every master). The zero Endpoint starts the embedded store.
func OpenEndpoint(ctx context.Context, e Endpoint) (*Conn, error) {
	if e.Mode == "" || e.Mode == ModeEmbedded {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		t := time.NewTicker(ClockTick)
		c := newEmbeddedClock(m, time.Now)
		stop := c.run(t.C, nil)
		return &Conn{Client: redis.NewClient(&redis.Options{Addr: m.Addr()}), Mode: ModeEmbedded, Embedded: true, mini: m,
			stop: func() { stop(); t.Stop() }}, nil
	}
	c, where, err := NewClient(e)
	if err != nil {
		return nil, err
	}
	if err := Ping(ctx, c); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ping redis %s at %s: %w", e.Mode, where, err)
	}
	return &Conn{Client: c, Mode: e.Mode}, nil
}

// Ping checks that c answers: every master of a cluster, the master of a
// Sentinel setup, the server otherwise.
func Ping(ctx context.Context, c redis.UniversalClient) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		if err := cc.Ping(ctx).Err(); err != nil {
			return err
		}
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			return m.Ping(ctx).Err()
		})
	}
	return c.Ping(ctx).Err()
}

// NewClient builds the go-redis client for e without connecting: a Client
// for ModeSingle, a failover Client for ModeSentinel, a ClusterClient for
// ModeCluster. where names the addresses, without credentials.
func NewClient(e Endpoint) (c redis.UniversalClient, where string, err error) {
	switch e.Mode {
	case ModeSingle:
		o, err := ParseURL(e.URL)
		if err != nil {
			return nil, "", err
		}
		return redis.NewClient(o), o.Addr, nil
	case ModeSentinel:
		o, err := ParseSentinelURL(e.URL)
		if err != nil {
			return nil, "", err
		}
		return redis.NewFailoverClient(o), "master " + o.MasterName + " via sentinels " + strings.Join(o.SentinelAddrs, ","), nil
	case ModeCluster:
		o, err := ParseClusterURL(e.URL)
		if err != nil {
			return nil, "", err
		}
		return redis.NewClusterClient(o), "seeds " + strings.Join(o.Addrs, ","), nil
	}
	return nil, "", fmt.Errorf("unknown redis mode %q", e.Mode)
}

// ParseURL validates a redis:// or rediss:// URL and returns client options.
// Its errors never repeat the URL, which may carry a password.
func ParseURL(url string) (*redis.Options, error) {
	if err := scheme(url); err != nil {
		return nil, err
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("is not a valid redis URL")
	}
	return opts, nil
}

func scheme(url string) error {
	if !strings.HasPrefix(url, "redis://") && !strings.HasPrefix(url, "rediss://") {
		return errors.New("must start with redis:// or rediss://")
	}
	return nil
}

// parseHostURL checks the scheme of a Sentinel or Cluster URL and parses
// it; it must name a host. Its errors never repeat the URL.
func parseHostURL(raw string) (*url.URL, error) {
	if err := scheme(raw); err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errors.New("is not a valid redis URL")
	}
	return u, nil
}

// ParseSentinelURL validates a Sentinel URL,
// redis://[:password@]host:port[/db]?master_name=NAME[&addr=host:port...]:
// host:port and every addr are sentinels, master_name the monitored
// master, and the password is the master's (and its replicas'). Its errors
// never repeat the URL.
func ParseSentinelURL(raw string) (*redis.FailoverOptions, error) {
	u, err := parseHostURL(raw)
	if err != nil {
		return nil, err
	}
	if u.Query().Get("master_name") == "" {
		return nil, errors.New("needs ?master_name=NAME, the master the sentinels monitor")
	}
	o, err := redis.ParseFailoverURL(raw)
	if err != nil {
		return nil, fmt.Errorf("is not a valid sentinel URL (%s)", scrubURLError(err, u))
	}
	// The URL's credentials are the data nodes'; sentinels usually run
	// without a password.
	if o.Username == "" && o.Password == "" {
		o.Username, o.Password = o.SentinelUsername, o.SentinelPassword
	}
	o.SentinelUsername, o.SentinelPassword = "", ""
	return o, nil
}

// ParseClusterURL validates a Cluster URL,
// redis://[user:password@]host:port[?addr=host:port...]: host:port and every
// addr are seed nodes. Its errors never repeat the URL.
func ParseClusterURL(raw string) (*redis.ClusterOptions, error) {
	u, err := parseHostURL(raw)
	if err != nil {
		return nil, err
	}
	if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
		return nil, errors.New("must not name a database: a Redis Cluster has only database 0")
	}
	o, err := redis.ParseClusterURL(raw)
	if err != nil {
		return nil, fmt.Errorf("is not a valid cluster URL (%s)", scrubURLError(err, u))
	}
	return o, nil
}

// scrubURLError is err's text without the URL's password.
func scrubURLError(err error, u *url.URL) string {
	s := err.Error()
	if p, ok := u.User.Password(); ok && p != "" {
		s = strings.ReplaceAll(s, p, "<password>")
	}
	return s
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
