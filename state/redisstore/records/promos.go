package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Promos stores promo codes. Each code's keys share the hash tag
// "{promo:<code>}", so every use of it is one script in one slot:
//
//	d  HASH doc (the Promo as JSON), disabled, expires (ms, 0: never),
//	   max (0: no limit), per_buyer, used (consumed uses)
//	h  ZSET quote id -> hold deadline (ms)
//	b  HASH buyer id -> the quote of their hold or use (one use per buyer)
//	q  HASH quote id -> held | used | returned
//
// and `<prefix>promos` (ZSET code -> created ms) lists the codes.
type Promos struct {
	rdb redis.UniversalClient
	p   string
	// Now is the clock; time.Now by default.
	Now func() time.Time
}

// NewPromos returns the promo store under prefix.
func NewPromos(rdb redis.UniversalClient, prefix string) *Promos {
	return &Promos{rdb: rdb, p: prefix, Now: time.Now}
}

func (s *Promos) keys(code string) []string {
	t := s.p + "{promo:" + code + "}:"
	return []string{t + "d", t + "h", t + "b", t + "q"}
}

func (s *Promos) index() string { return s.p + "promos" }

// promoAddScript creates a code unless it exists. KEYS: d. ARGV: doc,
// expires ms, max, per_buyer.
var promoAddScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'disabled', '0', 'expires', ARGV[2], 'max', ARGV[3], 'per_buyer', ARGV[4], 'used', '0')
return 1`)

// Add creates p (its code normalized); ErrPromoExists when the code is
// taken.
func (s *Promos) Add(ctx context.Context, p *state.Promo) error {
	code, ok := state.NormalizePromoCode(p.Code)
	if !ok {
		return fmt.Errorf("promo code %q: not a valid code", p.Code)
	}
	p.Code = code
	if p.Created.IsZero() {
		p.Created = s.Now().UTC()
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode promo %s: %w", code, err)
	}
	var exp int64
	if !p.Expires.IsZero() {
		exp = p.Expires.UnixMilli()
	}
	n, err := promoAddScript.Run(ctx, s.rdb, s.keys(code)[:1], doc, exp, p.MaxUses, flag(p.PerBuyer)).Int()
	if err != nil {
		return fmt.Errorf("add promo %s: %w", code, err)
	}
	if n == 0 {
		return fmt.Errorf("promo %s: %w", code, state.ErrPromoExists)
	}
	if err := s.rdb.ZAdd(ctx, s.index(), redis.Z{Score: float64(p.Created.UnixMilli()), Member: code}).Err(); err != nil {
		return fmt.Errorf("list promo %s: %w", code, err)
	}
	return nil
}

// Get returns the code with its counters, or ErrPromoUnknown.
func (s *Promos) Get(ctx context.Context, code string) (*state.Promo, error) {
	code, ok := state.NormalizePromoCode(code)
	if !ok {
		return nil, state.ErrPromoUnknown
	}
	k := s.keys(code)
	var d *redis.SliceCmd
	var held *redis.IntCmd
	now := strconv.FormatInt(s.Now().UnixMilli(), 10)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		d = p.HMGet(ctx, k[0], "doc", "disabled", "used")
		held = p.ZCount(ctx, k[1], "("+now, "+inf")
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read promo %s: %w", code, err)
	}
	v := d.Val()
	doc, _ := v[0].(string)
	if doc == "" {
		return nil, state.ErrPromoUnknown
	}
	var p state.Promo
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return nil, fmt.Errorf("decode promo %s: %w", code, err)
	}
	p.Disabled = v[1] == "1"
	used, _ := v[2].(string)
	p.Used, _ = strconv.Atoi(used)
	p.Held = int(held.Val())
	return &p, nil
}

// List returns up to count codes, newest first, and how many there are.
func (s *Promos) List(ctx context.Context, count int) ([]*state.Promo, int64, error) {
	total, err := s.rdb.ZCard(ctx, s.index()).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("list promos: %w", err)
	}
	codes, err := s.rdb.ZRevRange(ctx, s.index(), 0, int64(count-1)).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("list promos: %w", err)
	}
	out := make([]*state.Promo, 0, len(codes))
	for _, c := range codes {
		p, err := s.Get(ctx, c)
		if errors.Is(err, state.ErrPromoUnknown) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, p)
	}
	return out, total, nil
}

// Disable stops a code from being applied or reserved from now on; uses
// already held may still be paid. It reports false when it was disabled
// before.
func (s *Promos) Disable(ctx context.Context, code string) (bool, error) {
	p, err := s.Get(ctx, code)
	if err != nil {
		return false, err
	}
	old, err := s.rdb.HGet(ctx, s.keys(p.Code)[0], "disabled").Result()
	if err != nil {
		return false, fmt.Errorf("disable promo %s: %w", p.Code, err)
	}
	if err := s.rdb.HSet(ctx, s.keys(p.Code)[0], "disabled", "1").Err(); err != nil {
		return false, fmt.Errorf("disable promo %s: %w", p.Code, err)
	}
	return old != "1", nil
}

// promoUseScript is every step of a use. KEYS: d, h, b, q. ARGV: mode
// (check, reserve, commit, release, return), quote, user, now ms, hold
// deadline ms. Returns "ok" or the reason: unknown, disabled, expired,
// used_up, yours (the buyer's one use is taken), none (nothing to undo).
//
//   - check: may the buyer use the code now (nothing written);
//   - reserve: hold one use for the quote until the deadline (again for
//     the same quote: the hold is renewed);
//   - commit: consume the quote's use; idempotent. A live hold is always
//     honoured; a lapsed or missing one is taken again only if a use is
//     still free (else the payment is given back by the caller);
//   - release: drop the quote's hold that was not paid;
//   - return: give a consumed use back once (its order was refunded).
var promoUseScript = redis.NewScript(`
local mode, quote, user, now, deadline = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local st = false
if quote ~= '' then st = redis.call('HGET', KEYS[4], quote) end
if mode == 'release' then
  if st ~= 'held' then return 'none' end
  redis.call('ZREM', KEYS[2], quote)
  redis.call('HDEL', KEYS[4], quote)
  if redis.call('HGET', KEYS[3], user) == quote then redis.call('HDEL', KEYS[3], user) end
  return 'ok'
end
if mode == 'return' then
  if st ~= 'used' then return 'none' end
  redis.call('HSET', KEYS[4], quote, 'returned')
  redis.call('HINCRBY', KEYS[1], 'used', -1)
  if redis.call('HGET', KEYS[3], user) == quote then redis.call('HDEL', KEYS[3], user) end
  return 'ok'
end
if st == 'used' or st == 'returned' then
  if mode == 'commit' then return 'ok' end
  return 'used_up'
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 'unknown' end
local d = redis.call('HMGET', KEYS[1], 'disabled', 'expires', 'max', 'per_buyer', 'used')
local max, used, exp = tonumber(d[3]) or 0, tonumber(d[5]) or 0, tonumber(d[2]) or 0
local function live(q)
  local s = redis.call('ZSCORE', KEYS[2], q)
  return s and tonumber(s) > now
end
local mine = st == 'held' and live(quote)
-- A commit of a hold made while the code was valid is not refused for
-- what changed since (disabled, expired): the buyer paid under it.
if not (mode == 'commit' and st == 'held') then
  if d[1] == '1' then return 'disabled' end
  if exp > 0 and now >= exp then return 'expired' end
end
if not mine then
  if d[4] == '1' then
    local b = redis.call('HGET', KEYS[3], user)
    if b and b ~= quote then
      local bs = redis.call('HGET', KEYS[4], b)
      if bs == 'used' or (bs == 'held' and live(b)) then return 'yours' end
    end
  end
  if max > 0 and used + redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') >= max then return 'used_up' end
end
if mode == 'check' then return 'ok' end
if mode == 'reserve' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 86400000)
  redis.call('ZADD', KEYS[2], deadline, quote)
  redis.call('HSET', KEYS[4], quote, 'held')
  if d[4] == '1' then redis.call('HSET', KEYS[3], user, quote) end
  return 'ok'
end
redis.call('ZREM', KEYS[2], quote)
redis.call('HSET', KEYS[4], quote, 'used')
redis.call('HINCRBY', KEYS[1], 'used', 1)
if d[4] == '1' then redis.call('HSET', KEYS[3], user, quote) end
return 'ok'`)

var promoReasons = map[string]error{
	"unknown": state.ErrPromoUnknown, "disabled": state.ErrPromoDisabled, "expired": state.ErrPromoExpired,
	"used_up": state.ErrPromoUsedUp, "yours": state.ErrPromoUsedByBuyer,
}

func (s *Promos) use(ctx context.Context, mode, code, quote string, user int64, deadline time.Time) (string, error) {
	code, ok := state.NormalizePromoCode(code)
	if !ok {
		return "", state.ErrPromoUnknown
	}
	var dl int64
	if !deadline.IsZero() {
		dl = deadline.UnixMilli()
	}
	res, err := promoUseScript.Run(ctx, s.rdb, s.keys(code), mode, quote, user, s.Now().UnixMilli(), dl).Text()
	if err != nil {
		return "", fmt.Errorf("promo %s %s for quote %s: %w", code, mode, quote, err)
	}
	if e, ok := promoReasons[res]; ok {
		return res, e
	}
	return res, nil
}

// Check returns the code when the buyer may use it now, else an error
// wrapping ErrPromoUnavailable. Nothing is reserved.
func (s *Promos) Check(ctx context.Context, code string, user int64) (*state.Promo, error) {
	if _, err := s.use(ctx, "check", code, "", user, time.Time{}); err != nil {
		return nil, err
	}
	return s.Get(ctx, code)
}

// Reserve holds one use of the code for the quote until deadline, or says
// why it cannot (an error wrapping ErrPromoUnavailable).
func (s *Promos) Reserve(ctx context.Context, code, quote string, user int64, deadline time.Time) error {
	_, err := s.use(ctx, "reserve", code, quote, user, deadline)
	return err
}

// Commit consumes the quote's use, exactly once however often it is
// called. It fails (wrapping ErrPromoUnavailable) only when the quote's
// hold lapsed and no use is free any more: the caller gives the payment
// back.
func (s *Promos) Commit(ctx context.Context, code, quote string, user int64) error {
	_, err := s.use(ctx, "commit", code, quote, user, time.Time{})
	return err
}

// Release drops the quote's hold when it was not paid.
func (s *Promos) Release(ctx context.Context, code, quote string, user int64) error {
	_, err := s.use(ctx, "release", code, quote, user, time.Time{})
	return err
}

// Return gives the quote's consumed use back (its order was refunded); it
// reports whether this call did (false: not consumed, or given back
// before).
func (s *Promos) Return(ctx context.Context, code, quote string, user int64) (bool, error) {
	res, err := s.use(ctx, "return", code, quote, user, time.Time{})
	return res == "ok", err
}
