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

// ChargeReviews is the admin review list of Star charges. Keys, under
// prefix + "{chargereview}:" (one cluster slot):
//
//	doc        HASH charge id -> ChargeReview JSON (written once)
//	at         ZSET charge ids waiting for review, by ListedAt ms
//	alerted    HASH charge id -> ms the admins were alerted
//	res        HASH charge id -> ChargeResolution JSON (an admin's decision)
//	refunding  ZSET charge ids decided for a refund not seen through yet, by ms decided
//	resolved   ZSET charge ids resolved for good, by ms resolved
//
// A charge is listed at most once: adding it again changes nothing, also
// once it is resolved. Entries are kept: each is a payment an admin must
// account for, and there is one per unprovable charge, not per sweep. A
// resolution takes the charge off "at" (the waiting list) and keeps its
// listing with the decision beside it.
type ChargeReviews struct {
	rdb redis.UniversalClient
	p   string
	// Now is the clock; time.Now by default.
	Now func() time.Time
}

// NewChargeReviews returns the review list under prefix.
func NewChargeReviews(rdb redis.UniversalClient, prefix string) *ChargeReviews {
	return &ChargeReviews{rdb: rdb, p: prefix + "{chargereview}:", Now: time.Now}
}

// chargeReviewAddScript: KEYS doc, at. ARGV charge id, JSON, listed ms.
// Returns 1 when listed now, 0 when it already was.
var chargeReviewAddScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1`)

// Add lists the charge for review unless it is listed already, and reports
// whether it listed it now. ListedAt is set from the clock.
func (r *ChargeReviews) Add(ctx context.Context, c state.ChargeReview) (bool, error) {
	if c.ChargeID == "" {
		return false, errors.New("list charge for review: empty charge id")
	}
	c.ListedAt = r.Now().UTC()
	doc, err := json.Marshal(&c)
	if err != nil {
		return false, err
	}
	n, err := chargeReviewAddScript.Run(ctx, r.rdb, []string{r.p + "doc", r.p + "at"}, c.ChargeID, doc, c.ListedAt.UnixMilli()).Int()
	if err != nil {
		return false, fmt.Errorf("list charge %s for review: %w", c.ChargeID, err)
	}
	return n == 1, nil
}

// Get returns the listed charge with its resolution, if any, or
// ErrNoChargeReview. A resolved charge is still listed: the sweep asks Get
// and leaves it alone.
func (r *ChargeReviews) Get(ctx context.Context, chargeID string) (*state.ChargeReview, error) {
	pipe := r.rdb.Pipeline()
	doc := pipe.HGet(ctx, r.p+"doc", chargeID)
	res := pipe.HGet(ctx, r.p+"res", chargeID)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read review of charge %s: %w", chargeID, err)
	}
	v, err := doc.Result()
	if errors.Is(err, redis.Nil) {
		return nil, state.ErrNoChargeReview
	}
	if err != nil {
		return nil, fmt.Errorf("read review of charge %s: %w", chargeID, err)
	}
	var c state.ChargeReview
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return nil, fmt.Errorf("decode review of charge %s: %w", chargeID, err)
	}
	if v, err := res.Result(); err == nil {
		if c.Resolution, err = decodeResolution(chargeID, v); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// decodeResolution decodes a stored resolution.
func decodeResolution(chargeID, v string) (*state.ChargeResolution, error) {
	var res state.ChargeResolution
	if err := json.Unmarshal([]byte(v), &res); err != nil {
		return nil, fmt.Errorf("decode resolution of charge %s: %w", chargeID, err)
	}
	return &res, nil
}

// Len returns how many charges are waiting for review (listed and not
// resolved).
func (r *ChargeReviews) Len(ctx context.Context) (int64, error) {
	n, err := r.rdb.ZCard(ctx, r.p+"at").Result()
	if err != nil {
		return 0, fmt.Errorf("count charges for review: %w", err)
	}
	return n, nil
}

// List returns up to count charges waiting for review, oldest listing
// first, after skipping offset of them.
func (r *ChargeReviews) List(ctx context.Context, offset, count int) ([]state.ChargeReview, error) {
	if count <= 0 || offset < 0 {
		return nil, nil
	}
	ids, err := r.rdb.ZRange(ctx, r.p+"at", int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("list charges for review: %w", err)
	}
	return r.docs(ctx, ids, false)
}

// docs reads the listings of ids (those still stored), in their order;
// with resolutions, each with its resolution.
func (r *ChargeReviews) docs(ctx context.Context, ids []string, resolutions bool) ([]state.ChargeReview, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	docs, err := r.rdb.HMGet(ctx, r.p+"doc", ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("list charges for review: %w", err)
	}
	var res []any
	if resolutions {
		if res, err = r.rdb.HMGet(ctx, r.p+"res", ids...).Result(); err != nil {
			return nil, fmt.Errorf("list resolutions of charges: %w", err)
		}
	}
	out := make([]state.ChargeReview, 0, len(docs))
	for i, d := range docs {
		s, ok := d.(string)
		if !ok {
			continue
		}
		var c state.ChargeReview
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			return nil, fmt.Errorf("decode review of charge %s: %w", ids[i], err)
		}
		if resolutions {
			if v, ok := res[i].(string); ok {
				if c.Resolution, err = decodeResolution(ids[i], v); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ChargeTotals are how many charges and their Stars.
type ChargeTotals struct{ N, Stars int64 }

// totalsBatch is how many listings Totals reads at a time.
const totalsBatch = 500

// Totals counts the charges waiting for review and those decided for a
// refund not seen through yet, with their Stars. It reads every listing
// of both (a few hundred after a store loss): meant for /balance.
func (r *ChargeReviews) Totals(ctx context.Context) (waiting, refunding ChargeTotals, err error) {
	sum := func(key string) (ChargeTotals, error) {
		var t ChargeTotals
		for off := int64(0); ; off += totalsBatch {
			ids, err := r.rdb.ZRange(ctx, r.p+key, off, off+totalsBatch-1).Result()
			if err != nil {
				return t, fmt.Errorf("count charges for review: %w", err)
			}
			list, err := r.docs(ctx, ids, false)
			if err != nil {
				return t, err
			}
			for _, c := range list {
				t.N++
				t.Stars += c.Stars
			}
			if len(ids) < totalsBatch {
				return t, nil
			}
		}
	}
	if waiting, err = sum("at"); err != nil {
		return waiting, refunding, err
	}
	refunding, err = sum("refunding")
	return waiting, refunding, err
}

// chargeResolveScript: KEYS doc, res, at, refunding, resolved, alerted.
// ARGV charge id, resolution JSON, ms, "1" for a refund decided (else a
// resolution for good). Returns {1} when this resolution won, {0, the
// resolution that won before}, or {-1} when the charge is not listed.
var chargeResolveScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {-1} end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur then return {0, cur} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
else
  redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
end
redis.call('HSETNX', KEYS[6], ARGV[1], ARGV[3])
return {1}`)

// Resolve records an admin's decision about a listed charge, once: of two
// decisions (two admins, two replicas, a double press) exactly one wins.
// res.Status is state.ChargeRefunding (a refund to be seen through, then
// FinishRefund) or state.ChargeSettled. It reports whether res won, and
// otherwise the resolution that did; state.ErrNoChargeReview when the
// charge is not listed. A resolved charge leaves the waiting list, and
// counts as alerted (the sweep does not alert admins of it).
func (r *ChargeReviews) Resolve(ctx context.Context, chargeID string, res state.ChargeResolution) (bool, *state.ChargeResolution, error) {
	if res.Status != state.ChargeRefunding && res.Status != state.ChargeSettled {
		return false, nil, fmt.Errorf("resolve charge %s: status %q is not a decision", chargeID, res.Status)
	}
	res.At = res.At.UTC()
	doc, err := json.Marshal(&res)
	if err != nil {
		return false, nil, err
	}
	refund := "0"
	if res.Status == state.ChargeRefunding {
		refund = "1"
	}
	keys := []string{r.p + "doc", r.p + "res", r.p + "at", r.p + "refunding", r.p + "resolved", r.p + "alerted"}
	v, err := chargeResolveScript.Run(ctx, r.rdb, keys, chargeID, doc, res.At.UnixMilli(), refund).Slice()
	if err != nil {
		return false, nil, fmt.Errorf("resolve charge %s: %w", chargeID, err)
	}
	switch code, _ := v[0].(int64); code {
	case 1:
		return true, &res, nil
	case -1:
		return false, nil, state.ErrNoChargeReview
	}
	if len(v) < 2 {
		return false, nil, fmt.Errorf("resolve charge %s: unexpected reply %v", chargeID, v)
	}
	s, _ := v[1].(string)
	cur, err := decodeResolution(chargeID, s)
	return false, cur, err
}

// chargeFinishScript: KEYS refunding, res, resolved. ARGV charge id,
// resolution JSON, ms. Returns 1 when this call finished the refund, 0
// when it was not (or no longer) under way.
var chargeFinishScript = redis.NewScript(`
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1`)

// FinishRefund records that the refund decided for a charge went through
// (res.Status state.ChargeRefunded, with DoneAt), or was closed as settled
// because the charge has an order by now (state.ChargeSettled with
// HasOrder), once: it reports whether
// this call is the one that finished it (false: it was finished before, or
// no refund was decided).
func (r *ChargeReviews) FinishRefund(ctx context.Context, chargeID string, res state.ChargeResolution) (bool, error) {
	if res.Status != state.ChargeRefunded && (res.Status != state.ChargeSettled || !res.HasOrder) {
		return false, fmt.Errorf("finish refund of charge %s: status %q", chargeID, res.Status)
	}
	res.At, res.DoneAt = res.At.UTC(), res.DoneAt.UTC()
	doc, err := json.Marshal(&res)
	if err != nil {
		return false, err
	}
	n, err := chargeFinishScript.Run(ctx, r.rdb, []string{r.p + "refunding", r.p + "res", r.p + "resolved"},
		chargeID, doc, res.DoneAt.UnixMilli()).Int()
	if err != nil {
		return false, fmt.Errorf("finish refund of charge %s: %w", chargeID, err)
	}
	return n == 1, nil
}

// Refunding returns up to count charges decided for a refund before
// before and not seen through yet, oldest decision first, each with its
// resolution: what a retry finishes.
func (r *ChargeReviews) Refunding(ctx context.Context, before time.Time, count int) ([]state.ChargeReview, error) {
	if count <= 0 {
		return nil, nil
	}
	ids, err := r.rdb.ZRangeByScore(ctx, r.p+"refunding", &redis.ZRangeBy{
		Min: "-inf", Max: "(" + strconv.FormatInt(before.UnixMilli(), 10), Count: int64(count),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("list refunds of charges under way: %w", err)
	}
	return r.docs(ctx, ids, true)
}

// Alerted reports whether admins were told about the listed charge.
func (r *ChargeReviews) Alerted(ctx context.Context, chargeID string) (bool, error) {
	ok, err := r.rdb.HExists(ctx, r.p+"alerted", chargeID).Result()
	if err != nil {
		return false, fmt.Errorf("read review alert of charge %s: %w", chargeID, err)
	}
	return ok, nil
}

// MarkAlerted records that admins were told about the charge.
func (r *ChargeReviews) MarkAlerted(ctx context.Context, chargeID string) error {
	if err := r.rdb.HSetNX(ctx, r.p+"alerted", chargeID, r.Now().UnixMilli()).Err(); err != nil {
		return fmt.Errorf("mark review alert of charge %s: %w", chargeID, err)
	}
	return nil
}
