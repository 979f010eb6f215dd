package records

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Placement slots and the upstream watermark: the two records behind the
// placement protocol (docs/design.md, "The placement protocol").
//
// The upstream has no idempotency key and its order object does not echo
// every field that tells two buyers apart (an in-game top-up's player id,
// a manual service's answers). So at most one create of a kind (the
// upstream type and the request fields the order object echoes) may be in
// flight or uncertain at a time across all replicas: the order holding
// that kind's slot. Then an unclaimed upstream order of that kind above the
// holder's watermark can only be the holder's.
//
// Keys, under prefix + "{orders}:":
//
//	slot:<kind>       STRING the id of the order holding the slot
//	upstream:newest   STRING the newest upstream order number seen
//	loss              HASH the last loss of writes Redis was caught in
//	                  (mark: the newest upstream number then, at: unix ms)

// The slot's waiters are served in line: a busy slot queues the caller by
// the place it gives (the fulfiller gives when the order was paid, so an
// order placing again after an uncertain create goes first), and the
// holder hands the slot straight to the first in line when it is done, so
// a later order never takes the slot from one that waits (with random
// polling instead, some orders of a busy kind waited for minutes).
//
//	slotwait:<kind>   ZSET order ids by their place in line (unix ms)

// slotAcquireScript: KEYS[1] slot, KEYS[2] waiters. ARGV[1] order id,
// ARGV[2] its place in line (unix ms). Returns {holder's id, handed}: the
// holder is ARGV[1] when the slot is now (or already was) the caller's;
// the caller waits in line otherwise. handed is 1 when this call gave a
// free slot to the first waiter (who must be woken).
var slotAcquireScript = redis.NewScript(`
local h = redis.call('GET', KEYS[1])
local handed = 0
if not h then
  h = ARGV[1]
  local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if first and first ~= ARGV[1] then
    -- a free slot with waiters: a hand-over failed. The first waiter
    -- keeps its turn.
    h = first
    handed = 1
    redis.call('ZREM', KEYS[2], first)
  end
  redis.call('SET', KEYS[1], h)
end
if h == ARGV[1] then
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1])
end
return {h, handed}`)

// slotSwapScript: KEYS[1] slot, KEYS[2] waiters. ARGV[1] expected holder,
// ARGV[2] new holder. Returns 1 when swapped.
var slotSwapScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1`)

// slotReleaseScript: KEYS[1] slot, KEYS[2] waiters. ARGV[1] holder. Hands
// the slot to the longest waiting order, or frees it. Returns the new
// holder ("" when free or when ARGV[1] did not hold it).
var slotReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return '' end
redis.call('ZREM', KEYS[2], ARGV[1])
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
if first then
  redis.call('ZREM', KEYS[2], first)
  redis.call('SET', KEYS[1], first)
  return first
end
redis.call('DEL', KEYS[1])
return ''`)

func (s *Orders) slotKey(kind string) string     { return s.p + "slot:" + kind }
func (s *Orders) slotWaitKey(kind string) string { return s.p + "slotwait:" + kind }
func (s *Orders) slotKeys(kind string) []string {
	return []string{s.slotKey(kind), s.slotWaitKey(kind)}
}

// AcquireSlot takes the placement slot of kind for order id and returns the
// holder: id when the slot is id's (now, handed over, or already), another
// order's id when that order holds it; id then waits in line for it (and
// Orders.ReleaseSlot of the holder hands it over in turn). Waiters are
// served by place, the earliest first (the fulfiller uses when the order
// was paid); a waiter keeps the place it first had. handed reports that
// this call found the slot free with orders waiting (a hand-over was lost)
// and gave it to the first of them, another order the caller must wake.
func (s *Orders) AcquireSlot(ctx context.Context, kind string, id int64, place time.Time) (holder int64, handed bool, err error) {
	v, err := slotAcquireScript.Run(ctx, s.rdb, s.slotKeys(kind), id, place.UnixMilli()).Slice()
	if err != nil {
		return 0, false, fmt.Errorf("acquire slot %s for order %d: %w", kind, id, err)
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("acquire slot %s: unexpected reply %v", kind, v)
	}
	h, _ := v[0].(string)
	holder, err = strconv.ParseInt(h, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("slot %s holds %q", kind, h)
	}
	n, _ := v[1].(int64)
	return holder, n == 1, nil
}

// TakeSlot moves the slot of kind from holder (an order that no longer
// needs it) to id; it reports whether it did (false: the holder changed).
func (s *Orders) TakeSlot(ctx context.Context, kind string, holder, id int64) (bool, error) {
	n, err := slotSwapScript.Run(ctx, s.rdb, s.slotKeys(kind), holder, id).Int()
	if err != nil {
		return false, fmt.Errorf("take slot %s from order %d: %w", kind, holder, err)
	}
	return n == 1, nil
}

// ReleaseSlot gives up the slot of kind if order id holds it: it goes to
// the longest waiting order, whose id is returned (next is 0 when the slot
// is free now or id did not hold it). The caller wakes next's job.
func (s *Orders) ReleaseSlot(ctx context.Context, kind string, id int64) (next int64, err error) {
	if kind == "" {
		return 0, nil
	}
	v, err := slotReleaseScript.Run(ctx, s.rdb, s.slotKeys(kind), id).Text()
	if err != nil {
		return 0, fmt.Errorf("release slot %s of order %d: %w", kind, id, err)
	}
	if v == "" {
		return 0, nil
	}
	next, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("slot %s waiter %q", kind, v)
	}
	return next, nil
}

// LeaveSlotQueue removes order id from the slot's waiters (it no longer
// needs the slot).
func (s *Orders) LeaveSlotQueue(ctx context.Context, kind string, id int64) error {
	if err := s.rdb.ZRem(ctx, s.slotWaitKey(kind), itoa(id)).Err(); err != nil {
		return fmt.Errorf("leave the queue of slot %s: %w", kind, err)
	}
	return nil
}

// hintScript: KEYS[1] hint. ARGV[1] number. Keeps the larger.
var hintScript = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`)

// NoteUpstream records that upstream order number n exists: the newest
// number seen only grows. Orders paid afterwards take it as their
// Watermark.
func (s *Orders) NoteUpstream(ctx context.Context, n int64) error {
	if err := s.raise(ctx, "upstream:newest", n); err != nil {
		return fmt.Errorf("note upstream order %d: %w", n, err)
	}
	return nil
}

// raise sets the counter under key (in the order tag) to n when it is
// lower: it only grows (n <= 0 changes nothing).
func (s *Orders) raise(ctx context.Context, key string, n int64) error {
	if n <= 0 {
		return nil
	}
	return hintScript.Run(ctx, s.rdb, []string{s.p + key}, n).Err()
}

// KeepNumbers makes every order number up to n one no new order takes
// (seq only grows): numbers told to buyers in the store as it was before
// Redis lost writes, or in a store this one continues.
func (s *Orders) KeepNumbers(ctx context.Context, n int64) error {
	if err := s.raise(ctx, "seq", n); err != nil {
		return fmt.Errorf("keep order numbers up to %d: %w", n, err)
	}
	return nil
}

// UpstreamHint returns the newest upstream order number seen (0: none).
func (s *Orders) UpstreamHint(ctx context.Context) (int64, error) {
	n, err := s.rdb.Get(ctx, s.p+"upstream:newest").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read upstream hint: %w", err)
	}
	return n, nil
}

// lossScript: KEYS[1] loss. ARGV[1] mark, ARGV[2] unix ms. Keeps the
// larger of each: a later loss covers the earlier ones.
var lossScript = redis.NewScript(`
local mark = tonumber(redis.call('HGET', KEYS[1], 'mark') or '0')
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0')
if tonumber(ARGV[1]) > mark then redis.call('HSET', KEYS[1], 'mark', ARGV[1]) end
if tonumber(ARGV[2]) > at then redis.call('HSET', KEYS[1], 'at', ARGV[2]) end
return 1`)

// NoteLoss records that Redis lost writes (a crash, a failover, a restore
// from a backup), noticed at when the newest upstream order number was
// mark. An upstream order at or below the mark that nobody claims may be
// one whose claim the loss took: whose it is, only the journal can tell
// (see the fulfiller's look).
func (s *Orders) NoteLoss(ctx context.Context, mark int64, at time.Time) error {
	if err := lossScript.Run(ctx, s.rdb, []string{s.p + "loss"}, mark, at.UnixMilli()).Err(); err != nil {
		return fmt.Errorf("note a loss of writes: %w", err)
	}
	return nil
}

// Loss returns the last loss of writes on record (mark 0: none).
func (s *Orders) Loss(ctx context.Context) (mark int64, at time.Time, err error) {
	v, err := s.rdb.HMGet(ctx, s.p+"loss", "mark", "at").Result()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read the last loss of writes: %w", err)
	}
	num := func(x any) int64 {
		str, _ := x.(string)
		n, _ := strconv.ParseInt(str, 10, 64)
		return n
	}
	mark = num(v[0])
	if ms := num(v[1]); ms > 0 {
		at = time.UnixMilli(ms).UTC()
	}
	return mark, at, nil
}

// The orphan scan's records, under prefix + "{orders}:orphans:":
//
//	mark      STRING every upstream order at or below it is claimed or reported
//	seen      HASH upstream number -> unix ms it was first seen unclaimed
//	reported  SET upstream numbers reported to admins as nobody's

// OrphanMark returns the scan's mark (0: the scan never ran).
func (s *Orders) OrphanMark(ctx context.Context) (int64, error) {
	n, err := s.rdb.Get(ctx, s.p+"orphans:mark").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read orphan mark: %w", err)
	}
	return n, nil
}

// SetOrphanMark moves the scan's mark up to n (never down).
func (s *Orders) SetOrphanMark(ctx context.Context, n int64) error {
	if err := hintScript.Run(ctx, s.rdb, []string{s.p + "orphans:mark"}, n).Err(); err != nil {
		return fmt.Errorf("set orphan mark: %w", err)
	}
	return nil
}

// UnclaimedSince records that upstream order number is unclaimed (now, if
// this is the first time) and returns since when.
func (s *Orders) UnclaimedSince(ctx context.Context, number int64, now time.Time) (time.Time, error) {
	key := s.p + "orphans:seen"
	if err := s.rdb.HSetNX(ctx, key, itoa(number), now.UnixMilli()).Err(); err != nil {
		return time.Time{}, fmt.Errorf("note unclaimed upstream order %d: %w", number, err)
	}
	ms, err := s.rdb.HGet(ctx, key, itoa(number)).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("read unclaimed upstream order %d: %w", number, err)
	}
	return time.UnixMilli(ms), nil
}

// UnclaimedSeen returns when the orphan scan first saw upstream order
// number unclaimed, without recording anything; ok is false when it has no
// such record.
func (s *Orders) UnclaimedSeen(ctx context.Context, number int64) (at time.Time, ok bool, err error) {
	ms, err := s.rdb.HGet(ctx, s.p+"orphans:seen", itoa(number)).Int64()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read unclaimed upstream order %d: %w", number, err)
	}
	return time.UnixMilli(ms), true, nil
}

// ForgetUnclaimed drops the record of upstream orders that are claimed or
// reported now.
func (s *Orders) ForgetUnclaimed(ctx context.Context, numbers ...int64) error {
	if len(numbers) == 0 {
		return nil
	}
	f := make([]string, len(numbers))
	for i, n := range numbers {
		f[i] = itoa(n)
	}
	return s.rdb.HDel(ctx, s.p+"orphans:seen", f...).Err()
}

// ReportOrphan records upstream order number as nobody's and reports
// whether it is new (so admins hear of it once).
func (s *Orders) ReportOrphan(ctx context.Context, number int64) (bool, error) {
	n, err := s.rdb.SAdd(ctx, s.p+"orphans:reported", number).Result()
	if err != nil {
		return false, fmt.Errorf("report orphan %d: %w", number, err)
	}
	return n == 1, nil
}

// Orphans returns the upstream order numbers reported as nobody's.
func (s *Orders) Orphans(ctx context.Context) ([]int64, error) {
	vals, err := s.rdb.SMembers(ctx, s.p+"orphans:reported").Result()
	if err != nil {
		return nil, fmt.Errorf("list orphans: %w", err)
	}
	ids := parseIDs(vals)
	slices.Sort(ids)
	return ids, nil
}

// IsOrphan reports whether upstream order number was reported as nobody's.
func (s *Orders) IsOrphan(ctx context.Context, number int64) (bool, error) {
	ok, err := s.rdb.SIsMember(ctx, s.p+"orphans:reported", number).Result()
	if err != nil {
		return false, fmt.Errorf("read orphan %d: %w", number, err)
	}
	return ok, nil
}

// Dispute records upstream order numbers an order sent to review names as
// possibly its own: the admin decides about them, so other orders' listings
// leave them alone (key "{orders}:disputed", a SET).
func (s *Orders) Dispute(ctx context.Context, numbers ...int64) error {
	if len(numbers) == 0 {
		return nil
	}
	m := make([]any, len(numbers))
	for i, n := range numbers {
		m[i] = n
	}
	if err := s.rdb.SAdd(ctx, s.p+"disputed", m...).Err(); err != nil {
		return fmt.Errorf("dispute upstream orders: %w", err)
	}
	return nil
}

// Accounted reports whether upstream order number is already in an
// admin's hands: disputed by an order in review, or reported as nobody's.
func (s *Orders) Accounted(ctx context.Context, number int64) (bool, error) {
	var d, o *redis.BoolCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		d = p.SIsMember(ctx, s.p+"disputed", number)
		o = p.SIsMember(ctx, s.p+"orphans:reported", number)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("read upstream order %d: %w", number, err)
	}
	return d.Val() || o.Val(), nil
}

// The journals in use (state.Journal), under prefix + "{orders}:":
//
//	journals   HASH journal id -> unix ms it was last seen in use
//
// The placement protocol trusts the journal to hold every attempt only
// while one journal served every replica over the journal's keep.

// NoteJournal records that journal id is in use now.
func (s *Orders) NoteJournal(ctx context.Context, id string, now time.Time) error {
	if err := s.rdb.HSet(ctx, s.p+"journals", id, now.UnixMilli()).Err(); err != nil {
		return fmt.Errorf("note journal: %w", err)
	}
	return nil
}

// JournalsSince returns the ids of the journals in use since t (and
// forgets those not seen for a day).
func (s *Orders) JournalsSince(ctx context.Context, t time.Time) ([]string, error) {
	all, err := s.rdb.HGetAll(ctx, s.p+"journals").Result()
	if err != nil {
		return nil, fmt.Errorf("read journals: %w", err)
	}
	var ids []string
	for id, v := range all {
		ms, _ := strconv.ParseInt(v, 10, 64)
		at := time.UnixMilli(ms)
		switch {
		case !at.Before(t):
			ids = append(ids, id)
		case at.Before(t.Add(-24 * time.Hour)):
			s.rdb.HDel(ctx, s.p+"journals", id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
