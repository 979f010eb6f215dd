package records

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/state"
)

// Reviews keeps the buyers' reviews, one per order, under
// prefix + "{reviews}:" (one slot: a review and its product's figures
// change together):
//
//	r:<ref>        HASH the review of order <ref>: user, product, stars, text, at (unix ms), hidden
//	p:<product>    ZSET the product's reviews (order refs), scored by unix ms
//	all            ZSET every review, scored by unix ms (the staff's list)
//	sum:<product>  HASH count, stars: the product's visible reviews
//	asked:<ref>    STRING set once the buyer was asked to rate order <ref>
type Reviews struct {
	rdb redis.UniversalClient
	p   string
	// AskedKeep is how long the mark that a buyer was asked is kept;
	// default 180 days (longer than an order is looked at again).
	AskedKeep time.Duration
}

// NewReviews returns the review store under prefix.
func NewReviews(rdb redis.UniversalClient, prefix string) *Reviews {
	return &Reviews{rdb: rdb, p: prefix + "{reviews}:", AskedKeep: 180 * 24 * time.Hour}
}

func (r *Reviews) review(ref string) string   { return r.p + "r:" + ref }
func (r *Reviews) product(link string) string { return r.p + "p:" + link }
func (r *Reviews) sum(link string) string     { return r.p + "sum:" + link }
func (r *Reviews) all() string                { return r.p + "all" }
func (r *Reviews) askedKey(ref string) string { return r.p + "asked:" + ref }

// Ask marks order ref's buyer as asked to rate it and reports whether
// this call did (false: asked before, by this or another replica).
func (r *Reviews) Ask(ctx context.Context, ref string) (bool, error) {
	ok, err := r.rdb.SetNX(ctx, r.askedKey(ref), 1, r.AskedKeep).Result()
	if err != nil {
		return false, fmt.Errorf("mark review asked: %w", err)
	}
	return ok, nil
}

// Unask takes the mark back (the question could not be sent: it is tried
// again).
func (r *Reviews) Unask(ctx context.Context, ref string) error {
	if err := r.rdb.Del(ctx, r.askedKey(ref)).Err(); err != nil {
		return fmt.Errorf("unmark review asked: %w", err)
	}
	return nil
}

// reviewAddScript: KEYS review, product's list, all, product's sum.
// ARGV: ref, user, product, stars, text, unix ms. Returns 1 when added, 0
// when the order has a review already.
var reviewAddScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'user', ARGV[2], 'product', ARGV[3], 'stars', ARGV[4], 'text', ARGV[5], 'at', ARGV[6], 'hidden', '0')
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
redis.call('HINCRBY', KEYS[4], 'count', 1)
redis.call('HINCRBY', KEYS[4], 'stars', tonumber(ARGV[4]))
return 1`)

// Add records rv, the review of order rv.Order, and reports whether it
// did: an order is rated once, whatever presses or replicas race (false:
// it has a review already, which is left as it was).
func (r *Reviews) Add(ctx context.Context, rv state.Review) (bool, error) {
	if !state.ValidStars(rv.Stars) || rv.Order == "" || rv.Product == "" {
		return false, fmt.Errorf("add review: invalid review %+v", rv)
	}
	n, err := reviewAddScript.Run(ctx, r.rdb,
		[]string{r.review(rv.Order), r.product(rv.Product), r.all(), r.sum(rv.Product)},
		rv.Order, rv.User, rv.Product, rv.Stars, rv.Text, rv.At.UnixMilli()).Int()
	if err != nil {
		return false, fmt.Errorf("add review: %w", err)
	}
	return n == 1, nil
}

// reviewTextScript: KEYS review. ARGV: user, text. Returns 1 when set, 0
// when the review has a text already, -1 when there is no review, -2 when
// it is another user's.
var reviewTextScript = redis.NewScript(`
local user = redis.call('HGET', KEYS[1], 'user')
if not user then return -1 end
if user ~= ARGV[1] then return -2 end
local have = redis.call('HGET', KEYS[1], 'text')
if have and have ~= '' then return 0 end
redis.call('HSET', KEYS[1], 'text', ARGV[2])
return 1`)

// SetText adds the buyer's text to their review of order ref, once: false
// when it has one already. Errors wrap state.ErrReviewNotFound or
// state.ErrReviewNotYours.
func (r *Reviews) SetText(ctx context.Context, ref string, user int64, text string) (bool, error) {
	n, err := reviewTextScript.Run(ctx, r.rdb, []string{r.review(ref)}, user, text).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("set review text: %w", err)
	case n == -1:
		return false, fmt.Errorf("review of %s: %w", ref, state.ErrReviewNotFound)
	case n == -2:
		return false, fmt.Errorf("review of %s: %w", ref, state.ErrReviewNotYours)
	}
	return n == 1, nil
}

// reviewHideScript: KEYS review, product's sum. ARGV: product, hidden
// ("1" or "0"). Returns 1 when changed, 0 when it was so already, -1 when
// there is no review of that product.
var reviewHideScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'product') ~= ARGV[1] then return -1 end
if redis.call('HGET', KEYS[1], 'hidden') == ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'hidden', ARGV[2])
local n = 1
if ARGV[2] == '1' then n = -1 end
redis.call('HINCRBY', KEYS[2], 'count', n)
redis.call('HINCRBY', KEYS[2], 'stars', n * tonumber(redis.call('HGET', KEYS[1], 'stars')))
return 1`)

// SetHidden hides the review of order ref from the buyers (or shows it
// again) and reports whether that changed it; a hidden review leaves its
// product's figures. Errors wrap state.ErrReviewNotFound.
func (r *Reviews) SetHidden(ctx context.Context, ref string, hidden bool) (bool, error) {
	rv, err := r.Get(ctx, ref)
	if err != nil {
		return false, err
	}
	flag := "0"
	if hidden {
		flag = "1"
	}
	n, err := reviewHideScript.Run(ctx, r.rdb, []string{r.review(ref), r.sum(rv.Product)}, rv.Product, flag).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("hide review: %w", err)
	case n == -1:
		return false, fmt.Errorf("review of %s: %w", ref, state.ErrReviewNotFound)
	}
	return n == 1, nil
}

// Get returns the review of order ref; the error wraps
// state.ErrReviewNotFound when it has none.
func (r *Reviews) Get(ctx context.Context, ref string) (state.Review, error) {
	m, err := r.rdb.HGetAll(ctx, r.review(ref)).Result()
	if err != nil {
		return state.Review{}, fmt.Errorf("read review: %w", err)
	}
	if len(m) == 0 {
		return state.Review{}, fmt.Errorf("review of %s: %w", ref, state.ErrReviewNotFound)
	}
	return parseReview(ref, m), nil
}

func parseReview(ref string, m map[string]string) state.Review {
	user, _ := strconv.ParseInt(m["user"], 10, 64)
	stars, _ := strconv.Atoi(m["stars"])
	at, _ := strconv.ParseInt(m["at"], 10, 64)
	return state.Review{
		Order: ref, User: user, Product: m["product"], Stars: stars, Text: m["text"],
		At: time.UnixMilli(at).UTC(), Hidden: m["hidden"] == "1",
	}
}

// scanReviews is how many of a product's latest reviews Summary reads to
// find its latest ones with a text.
const scanReviews = 30

// Summary returns the product's figures and up to n of its latest visible
// reviews with a text.
func (r *Reviews) Summary(ctx context.Context, product string, n int) (state.ReviewSummary, error) {
	var sum state.ReviewSummary
	m, err := r.rdb.HGetAll(ctx, r.sum(product)).Result()
	if err != nil {
		return sum, fmt.Errorf("read review figures: %w", err)
	}
	sum.Count, _ = strconv.Atoi(m["count"])
	sum.Stars, _ = strconv.Atoi(m["stars"])
	if sum.Count <= 0 || n <= 0 {
		return sum, nil
	}
	refs, err := r.rdb.ZRevRange(ctx, r.product(product), 0, scanReviews-1).Result()
	if err != nil {
		return sum, fmt.Errorf("list reviews: %w", err)
	}
	list, err := r.load(ctx, refs)
	for _, rv := range list {
		if !rv.Hidden && rv.Text != "" && len(sum.Recent) < n {
			sum.Recent = append(sum.Recent, rv)
		}
	}
	return sum, err
}

// Latest returns up to n of the shop's reviews, hidden ones too, newest
// first, skipping the first offset.
func (r *Reviews) Latest(ctx context.Context, offset, n int) ([]state.Review, error) {
	refs, err := r.rdb.ZRevRange(ctx, r.all(), int64(offset), int64(offset+n-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	return r.load(ctx, refs)
}

// load reads the reviews of refs in order (one round trip).
func (r *Reviews) load(ctx context.Context, refs []string) ([]state.Review, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(refs))
	for i, ref := range refs {
		cmds[i] = pipe.HGetAll(ctx, r.review(ref))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read reviews: %w", err)
	}
	out := make([]state.Review, 0, len(refs))
	for i, c := range cmds {
		if m := c.Val(); len(m) > 0 {
			out = append(out, parseReview(refs[i], m))
		}
	}
	return out, nil
}
