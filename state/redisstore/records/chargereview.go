package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"time"

	"github.com/redis/go-redis/v9"
)

// ChargeReviews is the admin review list of Star charges. Keys, under
// prefix + "{chargereview}:" (one cluster slot):
//
//	doc      HASH charge id -> ChargeReview JSON (written once)
//	at       ZSET charge ids by ListedAt ms, for listing
//	alerted  HASH charge id -> ms the admins were alerted
//
// A charge is listed at most once: adding it again changes nothing. Entries
// are kept: each is a payment an admin must account for, and there is one
// per unprovable charge, not per sweep.
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

// Get returns the listed charge, or ErrNoChargeReview.
func (r *ChargeReviews) Get(ctx context.Context, chargeID string) (*state.ChargeReview, error) {
	v, err := r.rdb.HGet(ctx, r.p+"doc", chargeID).Result()
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
	return &c, nil
}

// Len returns how many charges are listed.
func (r *ChargeReviews) Len(ctx context.Context) (int64, error) {
	n, err := r.rdb.ZCard(ctx, r.p+"at").Result()
	if err != nil {
		return 0, fmt.Errorf("count charges for review: %w", err)
	}
	return n, nil
}

// List returns up to count listed charges, oldest listing first, after
// skipping offset of them.
func (r *ChargeReviews) List(ctx context.Context, offset, count int) ([]state.ChargeReview, error) {
	if count <= 0 || offset < 0 {
		return nil, nil
	}
	ids, err := r.rdb.ZRange(ctx, r.p+"at", int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("list charges for review: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	docs, err := r.rdb.HMGet(ctx, r.p+"doc", ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("list charges for review: %w", err)
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
		out = append(out, c)
	}
	return out, nil
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
