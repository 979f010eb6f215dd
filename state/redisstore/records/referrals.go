package records

import (
	"context"
	"errors"
	"fmt"
	"shopbot/state"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// Referrals keeps the referral program: each buyer's invite code, who
// brought whom, and the reward decided for each order of a referred buyer.
// Its keys live in the buyer registry's slot, prefix + "{users}:ref:...",
// so attribution reads whether a buyer is new ({users}:started) and
// records them in one script:
//
//	ref:code    HASH user -> their invite code
//	ref:owner   HASH code -> user
//	ref:by      HASH referred buyer -> referrer
//	ref:joined  ZSET referred buyer, scored by the attribution's unix time
//	ref:count   HASH referrer -> buyers brought
//	ref:reward  HASH order -> "<referrer> <cents> <unix time>", the reward decided for it (0 cents: none)
//	ref:paid    ZSET order (rewards above 0 only), scored by the decision's unix time
//	ref:earned  HASH referrer -> cents of every reward decided for them
//	ref:told    HASH order -> 1 once the referrer was told of its reward
//	ref:lang    HASH user -> the language they last asked for their link in
type Referrals struct {
	rdb                                                                          redis.UniversalClient
	started, code, owner, by, joined, count, reward, paid, earned, toldKey, lang string
}

// NewReferrals returns the referral store under prefix.
func NewReferrals(rdb redis.UniversalClient, prefix string) *Referrals {
	p := prefix + "{users}:"
	return &Referrals{
		rdb: rdb, started: p + "started", code: p + "ref:code", owner: p + "ref:owner", by: p + "ref:by",
		joined: p + "ref:joined", count: p + "ref:count", reward: p + "ref:reward", paid: p + "ref:paid",
		earned: p + "ref:earned", toldKey: p + "ref:told", lang: p + "ref:lang",
	}
}

// refCodeScript: KEYS code, owner. ARGV: user, candidate code. Returns
// the user's code: the one they have, else the candidate when it is free
// (then it is theirs), else "" (taken: try another).
var refCodeScript = redis.NewScript(`
local have = redis.call('HGET', KEYS[1], ARGV[1])
if have then return have end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[1]) == 0 then return '' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]`)

// Code returns the user's invite code, making one the first time: a short
// random code (not the user id), stable from then on.
func (r *Referrals) Code(ctx context.Context, user int64) (string, error) {
	for range 8 {
		code, err := refCodeScript.Run(ctx, r.rdb, []string{r.code, r.owner}, user, state.NewReferralCode()).Text()
		if err != nil {
			return "", fmt.Errorf("invite code of %d: %w", user, err)
		}
		if code != "" {
			return code, nil
		}
	}
	return "", fmt.Errorf("invite code of %d: no free code after 8 tries", user)
}

// attributeScript: KEYS started, owner, by, joined, count. ARGV: user,
// code, unix time. Returns {outcome, referrer}. A buyer is new when the
// registry has not seen them start the bot; attribution records them as
// started too, so nothing can make them new again.
var attributeScript = redis.NewScript(`
local ref = redis.call('HGET', KEYS[2], ARGV[2])
if not ref then return {1, 0} end
if ref == ARGV[1] then return {2, ref} end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return {3, redis.call('HGET', KEYS[3], ARGV[1])} end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {4, ref} end
redis.call('HSET', KEYS[3], ARGV[1], ref)
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
redis.call('HINCRBY', KEYS[5], ref, 1)
redis.call('ZADD', KEYS[1], 'NX', ARGV[3], ARGV[1])
return {0, ref}`)

// Attribute makes user the referred buyer of the owner of code, once and
// atomically: only when the code is someone else's, the user was never
// attributed, and the user had not started the bot before (they are not
// in the buyer registry). It returns the outcome and, when there is one,
// the referrer (for AlreadyReferred: the one they already have).
func (r *Referrals) Attribute(ctx context.Context, user int64, code string, at time.Time) (state.Attribution, int64, error) {
	if !state.ValidReferralCode(code) {
		return state.UnknownCode, 0, nil
	}
	res, err := attributeScript.Run(ctx, r.rdb, []string{r.started, r.owner, r.by, r.joined, r.count},
		user, code, at.Unix()).Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("attribute %d: %w", user, err)
	}
	outcome, _ := res[0].(int64)
	ref, _ := strconv.ParseInt(str(res[1]), 10, 64)
	return state.Attribution(outcome), ref, nil
}

// Referrer returns who brought user, if anyone.
func (r *Referrals) Referrer(ctx context.Context, user int64) (int64, bool, error) {
	v, err := r.rdb.HGet(ctx, r.by, itoa(user)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("referrer of %d: %w", user, err)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil, err
}

func parseReward(order int64, v string) (state.Reward, error) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return state.Reward{}, fmt.Errorf("corrupt referral reward of order %d", order)
	}
	ref, err1 := strconv.ParseInt(f[0], 10, 64)
	cents, err2 := strconv.ParseInt(f[1], 10, 64)
	at, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return state.Reward{}, fmt.Errorf("corrupt referral reward of order %d: %w", order, err)
	}
	return state.Reward{Order: order, Referrer: ref, USD: decimal.New(cents, -2), At: time.Unix(at, 0).UTC()}, nil
}

// decideScript: KEYS reward, paid, earned. ARGV: order, referrer, cents,
// unix time. Returns the reward stored for the order: the one decided
// before, else this one (then counted in paid and earned).
var decideScript = redis.NewScript(`
local have = redis.call('HGET', KEYS[1], ARGV[1])
if have then return have end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. ARGV[4])
if tonumber(ARGV[3]) > 0 then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
  redis.call('HINCRBY', KEYS[3], ARGV[2], ARGV[3])
end
return ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. ARGV[4]`)

// Decide records the reward of an order once: the first decision stands
// (a later call with another amount, say after REFERRAL_PERCENT changed,
// returns the first). usd is rounded down to the cent; zero records that
// the order earns nothing. The reward counts in the referrer's earnings
// and the /stats totals from the moment it is decided; the caller then
// credits the wallet with it (idempotently by the order).
func (r *Referrals) Decide(ctx context.Context, rw state.Reward) (state.Reward, error) {
	cents := rw.USD.Shift(2).Floor().IntPart()
	if cents < 0 {
		cents = 0
	}
	v, err := decideScript.Run(ctx, r.rdb, []string{r.reward, r.paid, r.earned},
		rw.Order, rw.Referrer, cents, rw.At.Unix()).Text()
	if err != nil {
		return state.Reward{}, fmt.Errorf("decide referral reward of order %d: %w", rw.Order, err)
	}
	return parseReward(rw.Order, v)
}

// RewardOf returns the reward decided for order, if any.
func (r *Referrals) RewardOf(ctx context.Context, order int64) (state.Reward, bool, error) {
	v, err := r.rdb.HGet(ctx, r.reward, itoa(order)).Result()
	if errors.Is(err, redis.Nil) {
		return state.Reward{}, false, nil
	}
	if err != nil {
		return state.Reward{}, false, fmt.Errorf("read referral reward of order %d: %w", order, err)
	}
	rw, err := parseReward(order, v)
	return rw, err == nil, err
}

// ClaimTold reports whether this caller is the one to tell the referrer
// about order's reward (the first to ask): the notice goes at most once.
func (r *Referrals) ClaimTold(ctx context.Context, order int64) (bool, error) {
	ok, err := r.rdb.HSetNX(ctx, r.toldKey, itoa(order), 1).Result()
	if err != nil {
		return false, fmt.Errorf("claim the reward notice of order %d: %w", order, err)
	}
	return ok, nil
}

// SetLang remembers the language user reads their referral texts in.
func (r *Referrals) SetLang(ctx context.Context, user int64, lang string) error {
	if err := r.rdb.HSet(ctx, r.lang, itoa(user), lang).Err(); err != nil {
		return fmt.Errorf("remember the language of %d: %w", user, err)
	}
	return nil
}

// Lang returns the language SetLang remembered for user ("" for none).
func (r *Referrals) Lang(ctx context.Context, user int64) (string, error) {
	v, err := r.rdb.HGet(ctx, r.lang, itoa(user)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the language of %d: %w", user, err)
	}
	return v, nil
}

// SummaryOf returns user's referral figures.
func (r *Referrals) SummaryOf(ctx context.Context, user int64) (state.Summary, error) {
	var n, c *redis.StringCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.HGet(ctx, r.count, itoa(user))
		c = p.HGet(ctx, r.earned, itoa(user))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return state.Summary{}, fmt.Errorf("read referral figures of %d: %w", user, err)
	}
	buyers, _ := strconv.ParseInt(n.Val(), 10, 64)
	cents, _ := strconv.ParseInt(c.Val(), 10, 64)
	return state.Summary{Buyers: buyers, Earned: decimal.New(cents, -2)}, nil
}

// ActivitySince returns the attributions and rewards (above zero) since
// from, for the admins' totals.
func (r *Referrals) ActivitySince(ctx context.Context, from time.Time) (*state.Activity, error) {
	rng := &redis.ZRangeBy{Min: strconv.FormatInt(from.Unix(), 10), Max: "+inf"}
	joined, err := r.rdb.ZRangeByScoreWithScores(ctx, r.joined, rng).Result()
	if err != nil {
		return nil, fmt.Errorf("read referred buyers: %w", err)
	}
	paid, err := r.rdb.ZRangeByScore(ctx, r.paid, rng).Result()
	if err != nil {
		return nil, fmt.Errorf("read referral rewards: %w", err)
	}
	a := &state.Activity{Joined: make([]time.Time, len(joined))}
	for i, z := range joined {
		a.Joined[i] = time.Unix(int64(z.Score), 0).UTC()
	}
	for start := 0; start < len(paid); start += 500 {
		batch := paid[start:min(start+500, len(paid))]
		vals, err := r.rdb.HMGet(ctx, r.reward, batch...).Result()
		if err != nil {
			return nil, fmt.Errorf("read referral rewards: %w", err)
		}
		for i, v := range vals {
			s, ok := v.(string)
			id, err := strconv.ParseInt(batch[i], 10, 64)
			if !ok || err != nil {
				continue
			}
			if rw, err := parseReward(id, s); err == nil {
				a.Rewards = append(a.Rewards, rw)
			}
		}
	}
	return a, nil
}
