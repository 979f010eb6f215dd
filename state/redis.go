package state

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Conn is an open Redis connection and, when no URL was given, the embedded
// in-process server behind it.
type Conn struct {
	Client   redis.UniversalClient
	Embedded bool
	mini     *miniredis.Miniredis
}

// Open connects to the Redis server at url (redis:// or rediss://). An empty
// url starts an embedded in-process store instead; it is not durable, and
// callers should warn about that loudly.
func Open(ctx context.Context, url string) (*Conn, error) {
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("start embedded redis: %w", err)
		}
		return &Conn{Client: redis.NewClient(&redis.Options{Addr: m.Addr()}), Embedded: true, mini: m}, nil
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
	if c.mini != nil {
		c.mini.Close()
	}
	return err
}
