package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// FloodAll is the chat id under which a flood wait of the whole bot is
// shared (Telegram refused every chat, or a call bound to no chat).
const FloodAll int64 = 0

// Floods shares Telegram's flood waits (a 429's retry_after) between the
// shop's replicas, so that a second replica does not hammer Telegram while
// the first one waits. A wait is a key that expires with it, for replicas
// that start during the wait, and a message on a channel, for the ones
// running, which keep the waits in memory: sending costs no Redis round
// trip.
type Floods struct {
	rdb     redis.UniversalClient
	prefix  string
	channel string
}

// NewFloods returns the flood waits under prefix.
func NewFloods(rdb redis.UniversalClient, prefix string) *Floods {
	return &Floods{rdb: rdb, prefix: prefix + "tg:flood:", channel: prefix + "tg:flood"}
}

func (f *Floods) key(chat int64) string { return f.prefix + "{f" + itoa(chat) + "}" }

// Publish records that calls to chat (FloodAll: every call) must wait
// until until, and tells the running replicas.
func (f *Floods) Publish(ctx context.Context, chat int64, until time.Time, now time.Time) error {
	ttl := until.Sub(now)
	if ttl < time.Millisecond {
		return nil
	}
	ms := strconv.FormatInt(until.UnixMilli(), 10)
	if err := f.rdb.Set(ctx, f.key(chat), ms, ttl).Err(); err != nil {
		return fmt.Errorf("record flood wait: %w", err)
	}
	if err := f.rdb.Publish(ctx, f.channel, itoa(chat)+":"+ms).Err(); err != nil {
		return fmt.Errorf("share flood wait: %w", err)
	}
	return nil
}

// Listen calls fn with every flood wait published from now on, and first
// with the ones still running, until ctx ends. ready is closed once the
// subscription is live (waits published after it are never missed).
func (f *Floods) Listen(ctx context.Context, ready chan<- struct{}, fn func(chat int64, until time.Time)) error {
	sub := f.rdb.Subscribe(ctx, f.channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return fmt.Errorf("subscribe to flood waits: %w", err)
	}
	if ready != nil {
		close(ready)
	}
	if err := f.running(ctx, fn); err != nil {
		return err
	}
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return errors.New("flood wait subscription closed")
			}
			if chat, until, ok := parseFlood(m.Payload); ok {
				fn(chat, until)
			}
		}
	}
}

// running reports the waits recorded before the subscription (on every
// master of a Redis Cluster).
func (f *Floods) running(ctx context.Context, fn func(chat int64, until time.Time)) error {
	if cc, ok := f.rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return f.scan(ctx, node, fn)
		})
	}
	return f.scan(ctx, f.rdb, fn)
}

func (f *Floods) scan(ctx context.Context, rdb redis.Cmdable, fn func(chat int64, until time.Time)) error {
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, f.prefix+"*", 500).Result()
		if err != nil {
			return fmt.Errorf("read flood waits: %w", err)
		}
		for _, k := range keys {
			v, err := rdb.Get(ctx, k).Result()
			if errors.Is(err, redis.Nil) {
				continue
			}
			if err != nil {
				return fmt.Errorf("read flood wait: %w", err)
			}
			id := strings.TrimSuffix(strings.TrimPrefix(k, f.prefix+"{f"), "}")
			if chat, until, ok := parseFlood(id + ":" + v); ok {
				fn(chat, until)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

func parseFlood(s string) (int64, time.Time, bool) {
	c, ms, ok := strings.Cut(s, ":")
	if !ok {
		return 0, time.Time{}, false
	}
	chat, err1 := strconv.ParseInt(c, 10, 64)
	until, err2 := strconv.ParseInt(ms, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, time.Time{}, false
	}
	return chat, time.UnixMilli(until), true
}
