package records

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Users records who started the bot and who blocked it, the users'
// Telegram @usernames, and each buyer's profile (profiles.go), under
// prefix + "{users}:" (one cluster slot: Started changes both records at
// once, broadcasts page through buyers, with their profiles, in the order
// they started, and a username moves between users in one script).
//
//	started      ZSET buyer -> when they first started the bot
//	blocked      HASH buyer -> when they blocked it
//	nomkt        HASH buyer -> when they turned marketing messages off
//	uname        HASH user -> their @username as they spell it (no "@")
//	uname:index  HASH lower-cased username -> user
//	p:<id>       HASH the buyer's profile (profiles.go)
type Users struct {
	rdb     redis.UniversalClient
	p       string // prefix + "{users}:"
	buyers  string
	blocked string
	nomkt   string // buyers who turned marketing messages off: id -> when
	uname   string
	uindex  string
}

// NewUsers returns the buyer registry stored under prefix.
func NewUsers(rdb redis.UniversalClient, prefix string) *Users {
	p := prefix + "{users}:"
	return &Users{rdb: rdb, p: p, buyers: p + "started", blocked: p + "blocked", nomkt: p + "nomkt", uname: p + "uname", uindex: p + "uname:index"}
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

// SetMarketingOff records whether buyer id turned marketing messages
// (broadcasts) off with /settings.
func (u *Users) SetMarketingOff(ctx context.Context, id int64, off bool, at time.Time) error {
	var err error
	if off {
		err = u.rdb.HSet(ctx, u.nomkt, itoa(id), at.Unix()).Err()
	} else {
		err = u.rdb.HDel(ctx, u.nomkt, itoa(id)).Err()
	}
	if err != nil {
		return fmt.Errorf("record buyer %d marketing off=%v: %w", id, off, err)
	}
	return nil
}

// MarketingOff reports whether buyer id turned marketing messages off.
func (u *Users) MarketingOff(ctx context.Context, id int64) (bool, error) {
	off, err := u.rdb.HExists(ctx, u.nomkt, itoa(id)).Result()
	if err != nil {
		return false, fmt.Errorf("read buyer %d: %w", id, err)
	}
	return off, nil
}

// CountMarketingOff returns how many buyers turned marketing messages off.
func (u *Users) CountMarketingOff(ctx context.Context) (int64, error) {
	return u.rdb.HLen(ctx, u.nomkt).Result()
}

// Reachable reports, in one round trip, whether buyer id turned marketing
// messages off and whether they blocked the bot (a broadcast's check
// before each message).
func (u *Users) Reachable(ctx context.Context, id int64) (off, blocked bool, err error) {
	var o, b *redis.BoolCmd
	_, err = u.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		o = p.HExists(ctx, u.nomkt, itoa(id))
		b = p.HExists(ctx, u.blocked, itoa(id))
		return nil
	})
	if err != nil {
		return false, false, fmt.Errorf("read buyer %d: %w", id, err)
	}
	return o.Val(), b.Val(), nil
}

// ValidUsername reports whether name is a Telegram username as the Bot
// API gives it (without "@"): letters, digits and underscores, at most 64
// (Telegram's own are 4 to 32; collectible ones are longer).
func ValidUsername(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// setUsernameScript: KEYS uname, uname:index. ARGV: user, username ("":
// none), its lower-cased form. The user's old name leaves the index (if it
// still names them); a name another user held in the index moves to this
// user, and that user's record of it is dropped (they gave it up). Returns
// 1 when anything changed.
var setUsernameScript = redis.NewScript(`
local id, name, lo = ARGV[1], ARGV[2], ARGV[3]
local old = redis.call('HGET', KEYS[1], id) or ''
local changed = 0
if old ~= name then
  if old ~= '' then
    local olo = string.lower(old)
    if redis.call('HGET', KEYS[2], olo) == id then redis.call('HDEL', KEYS[2], olo) end
  end
  if name == '' then redis.call('HDEL', KEYS[1], id) else redis.call('HSET', KEYS[1], id, name) end
  changed = 1
end
if name ~= '' then
  local prev = redis.call('HGET', KEYS[2], lo)
  if prev ~= id then
    if prev then
      local theirs = redis.call('HGET', KEYS[1], prev)
      if theirs and string.lower(theirs) == lo then redis.call('HDEL', KEYS[1], prev) end
    end
    redis.call('HSET', KEYS[2], lo, id)
    changed = 1
  end
end
return changed`)

// SetUsername records user id's current Telegram username ("" when they
// have none), in one script: the lower-cased index follows it, and a name
// that moved from another user to this one maps to this one from now on.
// It reports whether anything changed. A name that is not a Telegram
// username is recorded as none.
func (u *Users) SetUsername(ctx context.Context, id int64, name string) (bool, error) {
	name = strings.TrimPrefix(name, "@")
	if !ValidUsername(name) {
		name = ""
	}
	n, err := setUsernameScript.Run(ctx, u.rdb, []string{u.uname, u.uindex}, id, name, strings.ToLower(name)).Int()
	if err != nil {
		return false, fmt.Errorf("record username of %d: %w", id, err)
	}
	return n == 1, nil
}

// Username returns user id's last known Telegram username ("" if none).
func (u *Users) Username(ctx context.Context, id int64) (string, error) {
	v, err := u.rdb.HGet(ctx, u.uname, itoa(id)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read username of %d: %w", id, err)
	}
	return v, nil
}

// Usernames returns the last known usernames of ids (those with one).
func (u *Users) Usernames(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	fields := make([]string, len(ids))
	for i, id := range ids {
		fields[i] = itoa(id)
	}
	vals, err := u.rdb.HMGet(ctx, u.uname, fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("read usernames: %w", err)
	}
	for i, v := range vals {
		if s, ok := v.(string); ok && s != "" {
			out[ids[i]] = s
		}
	}
	return out, nil
}

// ByUsername returns the user whose username is name ("@name" or "name",
// any case), as last seen.
func (u *Users) ByUsername(ctx context.Context, name string) (int64, bool, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "@")
	if !ValidUsername(name) {
		return 0, false, nil
	}
	v, err := u.rdb.HGet(ctx, u.uindex, strings.ToLower(name)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("look up @%s: %w", name, err)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil, err
}
