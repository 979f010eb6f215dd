package records

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Users records who started the bot and who blocked it, under prefix +
// "{users}:" (one cluster slot: Started changes both records at once, and
// broadcasts page through buyers in the order they started).
type Users struct {
	rdb     redis.UniversalClient
	buyers  string
	blocked string
}

// NewUsers returns the buyer registry stored under prefix.
func NewUsers(rdb redis.UniversalClient, prefix string) *Users {
	return &Users{rdb: rdb, buyers: prefix + "{users}:started", blocked: prefix + "{users}:blocked"}
}

// Started records that id started the bot (and so is not blocking it).
func (u *Users) Started(ctx context.Context, id int64, at time.Time) error {
	_, err := u.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAddNX(ctx, u.buyers, redis.Z{Score: float64(at.Unix()), Member: id})
		p.HDel(ctx, u.blocked, itoa(id))
		return nil
	})
	if err != nil {
		return fmt.Errorf("record buyer %d: %w", id, err)
	}
	return nil
}

// SetBlocked records that id blocked (or unblocked) the bot.
func (u *Users) SetBlocked(ctx context.Context, id int64, blocked bool, at time.Time) error {
	var err error
	if blocked {
		err = u.rdb.HSet(ctx, u.blocked, itoa(id), at.Unix()).Err()
	} else {
		err = u.rdb.HDel(ctx, u.blocked, itoa(id)).Err()
	}
	if err != nil {
		return fmt.Errorf("record buyer %d blocked=%v: %w", id, blocked, err)
	}
	return nil
}

// Blocked reports whether id has blocked the bot.
func (u *Users) Blocked(ctx context.Context, id int64) (bool, error) {
	n, err := u.rdb.HExists(ctx, u.blocked, itoa(id)).Result()
	if err != nil {
		return false, fmt.Errorf("read buyer %d: %w", id, err)
	}
	return n, nil
}

// Buyers returns up to count buyer ids who started the bot, in the order
// they started, after the one at position from (0 for the first).
func (u *Users) Buyers(ctx context.Context, from, count int64) ([]int64, error) {
	vals, err := u.rdb.ZRange(ctx, u.buyers, from, from+count-1).Result()
	if err != nil {
		return nil, fmt.Errorf("list buyers: %w", err)
	}
	ids := make([]int64, 0, len(vals))
	for _, v := range vals {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// HasStarted reports whether id has ever sent /start to the bot.
func (u *Users) HasStarted(ctx context.Context, id int64) (bool, error) {
	_, err := u.rdb.ZScore(ctx, u.buyers, itoa(id)).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read buyer %d: %w", id, err)
	}
	return true, nil
}

// CountBuyers returns how many buyers started the bot.
func (u *Users) CountBuyers(ctx context.Context) (int64, error) {
	return u.rdb.ZCard(ctx, u.buyers).Result()
}
