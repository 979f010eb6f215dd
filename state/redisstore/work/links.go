package work

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Links remembers which one-time links were used (the admin console's CSV
// downloads), shared by every process, so a link works once whichever
// replica serves it. Keys, under prefix + "link:":
//
//	<id>    STRING unix seconds of the use (expires when the link does)
//
// The ids are the callers' (a link's signature).
type Links struct {
	rdb redis.UniversalClient
	p   string
}

// NewLinks returns the used-links store under prefix.
func NewLinks(rdb redis.UniversalClient, prefix string) *Links {
	return &Links{rdb: rdb, p: prefix + "link:"}
}

// Use marks the link id used at now, remembered until it expires at
// until, and reports whether this was its first use (false: used before).
func (l *Links) Use(ctx context.Context, id string, now, until time.Time) (bool, error) {
	ttl := until.Sub(now)
	if ttl < time.Second {
		ttl = time.Second // an expiring link is refused by its own check anyway
	}
	ok, err := l.rdb.SetArgs(ctx, l.p+id, now.Unix(), redis.SetArgs{Mode: "NX", TTL: ttl}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil || ok != "OK" {
		return false, fmt.Errorf("use link: %w", err)
	}
	return true, nil
}

// Release forgets a use, so the link works again (its use failed before
// anything was handed out).
func (l *Links) Release(ctx context.Context, id string) error {
	if err := l.rdb.Del(ctx, l.p+id).Err(); err != nil {
		return fmt.Errorf("release link: %w", err)
	}
	return nil
}
