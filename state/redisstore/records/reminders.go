package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// Reminders keeps what the quote reminders need, under prefix +
// "{remind}:":
//
//	pending      HASH user -> their latest unpaid quote to remind of (JSON)
//	off          SET the users who turned reminders off
//	sent:<quote> STRING set once the reminder of that quote went out
type Reminders struct {
	rdb redis.UniversalClient
	p   string
	// SentKeep is how long a reminder's mark is kept; default a week.
	SentKeep time.Duration
}

// NewReminders returns the store under prefix.
func NewReminders(rdb redis.UniversalClient, prefix string) *Reminders {
	return &Reminders{rdb: rdb, p: prefix + "{remind}:", SentKeep: 7 * 24 * time.Hour}
}

// PendingQuote is a buyer's latest quote, as its reminder shows it.
type PendingQuote struct {
	Quote    string          `json:"quote"`
	Chat     int64           `json:"chat"`
	Line     string          `json:"line"`
	Category string          `json:"category,omitempty"`
	Item     string          `json:"item"` // its name as shown, unescaped
	Lang     string          `json:"lang,omitempty"`
	Stars    int64           `json:"stars,omitempty"`
	USD      decimal.Decimal `json:"usd"`
	Created  time.Time       `json:"created"`
}

// SetPending makes q user's quote to remind of (a newer quote replaces an
// older one: one reminder, of the latest).
func (r *Reminders) SetPending(ctx context.Context, user int64, q PendingQuote) error {
	doc, err := json.Marshal(q)
	if err != nil {
		return err
	}
	if err := r.rdb.HSet(ctx, r.p+"pending", strconv.FormatInt(user, 10), doc).Err(); err != nil {
		return fmt.Errorf("remember the quote to remind of: %w", err)
	}
	return nil
}

// Pending returns user's quote to remind of; ok is false when none.
func (r *Reminders) Pending(ctx context.Context, user int64) (q PendingQuote, ok bool, err error) {
	v, err := r.rdb.HGet(ctx, r.p+"pending", strconv.FormatInt(user, 10)).Result()
	if errors.Is(err, redis.Nil) {
		return q, false, nil
	}
	if err != nil {
		return q, false, fmt.Errorf("read the quote to remind of: %w", err)
	}
	if err := json.Unmarshal([]byte(v), &q); err != nil {
		return q, false, fmt.Errorf("read the quote to remind of: %w", err)
	}
	return q, true, nil
}

// reminderClearScript: KEYS pending. ARGV: user, quote id. Forgets the
// user's pending quote only when it is still that quote.
var reminderClearScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
if cjson.decode(v)['quote'] ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])`)

// ClearPending forgets user's pending quote if it is still quote (a newer
// one stays).
func (r *Reminders) ClearPending(ctx context.Context, user int64, quote string) error {
	if err := reminderClearScript.Run(ctx, r.rdb, []string{r.p + "pending"}, user, quote).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("forget the quote to remind of: %w", err)
	}
	return nil
}

// SetOff turns user's reminders off (or on again).
func (r *Reminders) SetOff(ctx context.Context, user int64, off bool) error {
	var err error
	if off {
		err = r.rdb.SAdd(ctx, r.p+"off", user).Err()
	} else {
		err = r.rdb.SRem(ctx, r.p+"off", user).Err()
	}
	if err != nil {
		return fmt.Errorf("turn reminders off: %w", err)
	}
	return nil
}

// Off reports whether user turned reminders off.
func (r *Reminders) Off(ctx context.Context, user int64) (bool, error) {
	off, err := r.rdb.SIsMember(ctx, r.p+"off", user).Result()
	if err != nil {
		return false, fmt.Errorf("read reminders off: %w", err)
	}
	return off, nil
}

// MarkSent records that the reminder of quote goes out and reports
// whether this call did (false: it went out before).
func (r *Reminders) MarkSent(ctx context.Context, quote string) (bool, error) {
	ok, err := r.rdb.SetNX(ctx, r.p+"sent:"+quote, 1, r.SentKeep).Result()
	if err != nil {
		return false, fmt.Errorf("mark the reminder sent: %w", err)
	}
	return ok, nil
}
