package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxHistory bounds an order's history; the oldest steps after the first are
// dropped beyond it.
const maxHistory = 64

// orderTag is the hash tag of every order key, so the multi-key scripts run
// in one Redis Cluster slot.
const orderTag = "{orders}:"

// Orders is the order store. Keys, all under prefix + "{orders}:":
//
//	seq               INCR counter of order ids
//	o:<id>            HASH rev, status, line, doc (the Order as JSON)
//	charge, quote     HASH charge id / quote id -> order id (uniqueness)
//	upstream          HASH upstream number -> order id
//	all, u:<user>     ZSET order ids (score = id) for listings
//	st:<status>       ZSET order ids by current status
//	unfinished        ZSET ids not in a terminal status (score = id)
//	done              ZSET terminal ids not yet shrunk (score = finish ms)
//
// What grows: one summary hash plus one entry in each index per order,
// forever. An order is an accounting record worth keeping; a shrunk summary
// is well under 1 KB, so a million orders fit in about 1 GB. Codes and
// upstream requests, the bulky part, are dropped by ExpireDelivered.
type Orders struct {
	rdb  redis.UniversalClient
	p    string
	root string // the prefix, for keys outside the order tag
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Retention is how long finished orders keep codes and requests before
	// ExpireDelivered shrinks them (default 90 days).
	Retention time.Duration
	// Observe, when set, is called after an order is created (from "") or
	// changes status, with the order as stored; metrics use it.
	Observe func(o *state.Order, from string)
	// Floor, when set, returns the newest order number the shop is known
	// to have issued (state.Journal.NewestOrder): a new order takes a
	// number above it even when seq went back.
	Floor func() int64
}

// NewOrders returns the order store under prefix.
func NewOrders(rdb redis.UniversalClient, prefix string) *Orders {
	return &Orders{rdb: rdb, p: prefix + orderTag, root: prefix, Now: time.Now, Retention: 90 * 24 * time.Hour}
}

func (s *Orders) key(id int64) string { return s.p + "o:" + itoa(id) }

// Client returns the store's Redis client.
func (s *Orders) Client() redis.UniversalClient { return s.rdb }

// Prefix returns the key prefix the store was built with.
func (s *Orders) Prefix() string { return s.root }

// KeyOf is the Redis key of order id (for Durability.Sync).
func (s *Orders) KeyOf(id int64) string { return s.key(id) }

// orderStoreScript: KEYS charge, quote, o:<id>, all, u:<user>,
// st:<status>, its list (unfinished, or done when finished), upstream,
// seq. ARGV: charge, quote, id, line, doc, status, list score, upstream
// number ("" for none). The id was taken before (a script may only touch
// the keys it declares, and the new order's key names its id). Returns
// {0, id} created, {1, id} the charge's order exists, {2, id} the quote's
// order exists, {3, id} the id is taken (seq went back, or a kept number
// is another order's), {4, owner} another order claims the upstream
// number. seq is raised to the id (a kept number: no later order takes
// it).
var orderStoreScript = redis.NewScript(`
local ex = redis.call('HGET', KEYS[1], ARGV[1])
if ex then return {1, ex} end
if ARGV[2] ~= '' then
  ex = redis.call('HGET', KEYS[2], ARGV[2])
  if ex then return {2, ex} end
end
if redis.call('EXISTS', KEYS[3]) == 1 then return {3, ARGV[3]} end
if ARGV[8] ~= '' then
  local owner = redis.call('HGET', KEYS[8], ARGV[8])
  if owner then return {4, owner} end
  redis.call('HSET', KEYS[8], ARGV[8], ARGV[3])
end
local id = ARGV[3]
redis.call('HSET', KEYS[3], 'rev', '1', 'status', ARGV[6], 'line', ARGV[4], 'doc', ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], id)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[2], ARGV[2], id) end
redis.call('ZADD', KEYS[4], id, id)
redis.call('ZADD', KEYS[5], id, id)
redis.call('ZADD', KEYS[6], id, id)
redis.call('ZADD', KEYS[7], ARGV[7], id)
if tonumber(redis.call('GET', KEYS[9]) or '0') < tonumber(id) then redis.call('SET', KEYS[9], id) end
return {0, id}`)

// nextIDScript: KEYS seq. ARGV floor. The next order number, above floor.
var nextIDScript = redis.NewScript(`
local id = redis.call('INCR', KEYS[1])
local floor = tonumber(ARGV[1])
if id <= floor then
  id = floor + 1
  redis.call('SET', KEYS[1], id)
end
return id`)

// nextID takes the next order number: past seq and past the numbers the
// shop is known to have told buyers (Floor), which a seq that went back
// (Redis restored from a backup, a failover that lost writes) would hand
// out again.
func (s *Orders) nextID(ctx context.Context) (int64, error) {
	var floor int64
	if s.Floor != nil {
		floor = s.Floor()
	}
	return nextIDScript.Run(ctx, s.rdb, []string{s.p + "seq"}, floor).Int64()
}

// storeNew stores n (its status, line and charge set) in one atomic step
// under the number want (0: the next), then under the next numbers while
// its number is taken, in list with score(id), its upstream number claimed
// when claim says so and it has one. It returns the script's code with the stored order (0)
// or the id of the order that has the charge (1) or the quote (2), or the
// claiming order (4).
func (s *Orders) storeNew(ctx context.Context, n state.Order, want int64, list string, score func(id int64) int64, claim bool) (int64, *state.Order, string, error) {
	up := ""
	if claim && n.UpstreamNumber != 0 {
		up = itoa(n.UpstreamNumber)
	}
	for i := range transitionAttempts {
		id := want
		if i > 0 || id <= 0 {
			var err error
			if id, err = s.nextID(ctx); err != nil {
				return 0, nil, "", err
			}
		}
		n.ID = id
		doc, err := json.Marshal(&n)
		if err != nil {
			return 0, nil, "", err
		}
		res, err := orderStoreScript.Run(ctx, s.rdb,
			[]string{s.p + "charge", s.p + "quote", s.key(id), s.p + "all", s.p + "u:" + itoa(n.UserID), s.p + "st:" + n.Status, s.p + list, s.p + "upstream", s.p + "seq"},
			n.ChargeID, n.QuoteID, id, n.Line, doc, n.Status, score(id), up).Slice()
		if err != nil {
			return 0, nil, "", err
		}
		code, _ := res[0].(int64)
		switch code {
		case 0:
			got, err := decodeOrder(itoa(id), string(doc))
			return 0, got, "", err
		case 3:
			continue
		}
		return code, nil, str(res[1]), nil
	}
	return 0, nil, "", state.ErrOrderConflict
}

// CreatePaid stores a newly paid order in one atomic step. The charge id is
// unique: when an order already has it, that order is returned with dup =
// true and nothing changes (a repeated successful_payment). When the quote
// already has an order paid by a different charge, that order is returned
// with ErrQuoteAlreadyPaid, and the caller refunds the new charge. Otherwise
// the order gets status paid, revision 1 and its number: o.ID when no order
// has that number (a paid order Redis lost, rebuilt from the journal, keeps
// the number its buyer was told), else the next (nextID). o is not
// modified.
// An order of a newer version (one a newer build journaled) is refused with
// state.ErrRecordTooNew: this build would drop what it does not know of it.
func (s *Orders) CreatePaid(ctx context.Context, o *state.Order) (created *state.Order, dup bool, err error) {
	if o.ChargeID == "" {
		return nil, false, errors.New("create order: empty charge id")
	}
	if err := state.TooNew("order of charge "+o.ChargeID, o.V, state.OrderVersion); err != nil {
		return nil, false, err
	}
	if o.UserID == 0 {
		return nil, false, errors.New("create order: no user id")
	}
	if o.PayMethod != state.PayStars && o.PayMethod != state.PayWallet {
		return nil, false, fmt.Errorf("create order: unknown pay method %q", o.PayMethod)
	}
	now := s.Now().UTC()
	n := *o
	if n.Watermark == 0 {
		wm, err := s.UpstreamHint(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("create order for charge %s: %w", o.ChargeID, err)
		}
		n.Watermark = wm
	}
	n.V, n.Status, n.Rev = state.OrderVersion, state.OrderPaid, 1
	n.CreatedAt, n.UpdatedAt = now, now
	n.History = []state.Transition{{From: "quoted", To: state.OrderPaid, At: now, Note: "charge " + o.ChargeID}}
	// A repeated payment is answered without taking an id.
	if got, code, err := s.existing(ctx, o.ChargeID, o.QuoteID); err != nil || got != nil {
		return s.createResult(got, code, err, o.ChargeID)
	}
	code, got, ex, err := s.storeNew(ctx, n, o.ID, "unfinished", func(id int64) int64 { return id }, false)
	if err != nil {
		return nil, false, fmt.Errorf("create order for charge %s: %w", o.ChargeID, err)
	}
	if code == 0 {
		return s.createResult(got, 0, nil, o.ChargeID)
	}
	got, err = s.existingByID(ctx, ex)
	return s.createResult(got, code, err, o.ChargeID)
}

// existingByID reads the order a create script named (it has the charge or
// the quote).
func (s *Orders) existingByID(ctx context.Context, id string) (*state.Order, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("corrupt index entry %q", id)
	}
	return s.Get(ctx, n)
}

// existing returns the order the charge (code 1) or else the quote (code 2)
// already has, or nil.
func (s *Orders) existing(ctx context.Context, charge, quote string) (*state.Order, int64, error) {
	var c, q *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		c = p.HGet(ctx, s.p+"charge", charge)
		if quote != "" {
			q = p.HGet(ctx, s.p+"quote", quote)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, err
	}
	for code, cmd := range []*redis.StringCmd{c, q} {
		if cmd == nil || cmd.Err() != nil {
			continue
		}
		id, err := strconv.ParseInt(cmd.Val(), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("corrupt index entry %q", cmd.Val())
		}
		o, err := s.Get(ctx, id)
		return o, int64(code + 1), err
	}
	return nil, 0, nil
}

// createResult is CreatePaid's answer for a script code: 0 created, 1 the
// charge's order, 2 the quote's order.
func (s *Orders) createResult(got *state.Order, code int64, err error, charge string) (*state.Order, bool, error) {
	if err != nil {
		return nil, false, fmt.Errorf("create order for charge %s: %w", charge, err)
	}
	switch code {
	case 1:
		return got, true, nil
	case 2:
		return got, false, state.ErrQuoteAlreadyPaid
	}
	if s.Observe != nil {
		s.Observe(got, "")
	}
	return got, false, nil
}

func decodeOrder(id, doc string) (*state.Order, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || doc == "" {
		return nil, fmt.Errorf("corrupt order %q", id)
	}
	var o state.Order
	if err := json.Unmarshal([]byte(doc), &o); err != nil {
		return nil, fmt.Errorf("decode order %d: %w", n, err)
	}
	o.ID = n
	return &o, nil
}

// Get returns the order with id, or ErrOrderNotFound.
func (s *Orders) Get(ctx context.Context, id int64) (*state.Order, error) {
	doc, err := s.rdb.HGet(ctx, s.key(id), "doc").Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("order %d: %w", id, state.ErrOrderNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read order %d: %w", id, err)
	}
	return decodeOrder(itoa(id), doc)
}

func (s *Orders) byIndex(ctx context.Context, index, field string) (*state.Order, error) {
	v, err := s.rdb.HGet(ctx, s.p+index, field).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("order by %s %s: %w", index, field, state.ErrOrderNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("find order by %s %s: %w", index, field, err)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("corrupt %s index for %s", index, field)
	}
	return s.Get(ctx, id)
}

// ByCharge returns the order paid by the Telegram charge id (or wallet
// ledger ref), or ErrOrderNotFound.
func (s *Orders) ByCharge(ctx context.Context, chargeID string) (*state.Order, error) {
	return s.byIndex(ctx, "charge", chargeID)
}

// ByQuote returns the order paid for the quote, or ErrOrderNotFound.
func (s *Orders) ByQuote(ctx context.Context, quoteID string) (*state.Order, error) {
	return s.byIndex(ctx, "quote", quoteID)
}

// ByUpstream returns the order whose upstream order has that number, or
// ErrOrderNotFound. Reconciliation uses it to skip upstream orders that are
// already claimed.
func (s *Orders) ByUpstream(ctx context.Context, number int64) (*state.Order, error) {
	return s.byIndex(ctx, "upstream", itoa(number))
}

// orderSaveScript: KEYS order, upstream index, st:<old>, st:<new>,
// unfinished, done. ARGV: id, expected rev, old status, new status, doc,
// upstream number (empty for none), terminal flag, finished ms, shrink flag.
var orderSaveScript = redis.NewScript(`
local id = ARGV[1]
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return -1 end
if rev ~= ARGV[2] then return -2 end
if ARGV[6] ~= '' then
  local owner = redis.call('HGET', KEYS[2], ARGV[6])
  if owner and owner ~= id then return -3 end
  redis.call('HSET', KEYS[2], ARGV[6], id)
end
redis.call('HSET', KEYS[1], 'rev', tonumber(rev) + 1, 'status', ARGV[4], 'doc', ARGV[5])
if ARGV[3] ~= ARGV[4] then
  redis.call('ZREM', KEYS[3], id)
  redis.call('ZADD', KEYS[4], id, id)
end
if ARGV[7] == '1' then
  redis.call('ZREM', KEYS[5], id)
  if ARGV[3] ~= ARGV[4] then redis.call('ZADD', KEYS[6], ARGV[8], id) end
end
if ARGV[9] == '1' then redis.call('ZREM', KEYS[6], id) end
return 1`)

// transitionAttempts bounds the re-reads on revision races.
const transitionAttempts = 8

// Transition moves order id to status to with a compare-and-set on its
// revision. The order must currently be in one of the from statuses (else
// ErrBadTransition, usually because another worker moved it first) and every
// from -> to must be in the lifecycle table (else ErrIllegalTransition,
// before anything is read). mutate, when not nil, changes the order's fields
// on a fresh copy; it may run more than once, as a revision race re-reads the
// order and tries again. It must not change the status or the order's
// identity (id, charge, quote, user). A step is added to History when the
// status changes or note is not empty, so routine tracking updates pass an
// empty note. Storing an UpstreamNumber indexes it; an upstream number
// already owned by another order is refused with ErrUpstreamClaimed. An
// order a newer build wrote (Order.Readable) is refused with
// ErrRecordTooNew, before mutate runs.
func (s *Orders) Transition(ctx context.Context, id int64, from []string, to string, mutate func(*state.Order) error, note string) (*state.Order, error) {
	if len(from) == 0 {
		return nil, &state.TransitionError{ID: id, To: to, Err: state.ErrIllegalTransition}
	}
	for _, f := range from {
		if !state.CanMove(f, to) {
			return nil, &state.TransitionError{ID: id, Status: f, To: to, Err: state.ErrIllegalTransition}
		}
	}
	return s.save(ctx, id, func(o *state.Order) error {
		if !slices.Contains(from, o.Status) {
			return &state.TransitionError{ID: id, Status: o.Status, To: to, Err: state.ErrBadTransition}
		}
		if mutate != nil {
			if err := mutate(o); err != nil {
				return err
			}
		}
		return nil
	}, to, note, false)
}

// save is the compare-and-set loop behind Transition and Shrink.
func (s *Orders) save(ctx context.Context, id int64, change func(*state.Order) error, to, note string, shrink bool) (*state.Order, error) {
	for range transitionAttempts {
		cur, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		// This build would drop the fields and undo the status a newer
		// one wrote.
		if err := cur.Readable(); err != nil {
			return nil, err
		}
		o, err := cloneOrder(cur)
		if err != nil {
			return nil, err
		}
		if err := change(o); err != nil {
			if errors.Is(err, errUnchanged) {
				return o, err
			}
			return nil, err
		}
		if o.ID != cur.ID || o.ChargeID != cur.ChargeID || o.QuoteID != cur.QuoteID ||
			o.UserID != cur.UserID || o.Status != cur.Status || o.Rev != cur.Rev {
			return nil, fmt.Errorf("order %d: mutate changed the status or identity", id)
		}
		if cur.UpstreamNumber != 0 && o.UpstreamNumber != cur.UpstreamNumber {
			return nil, fmt.Errorf("order %d: upstream number %d cannot change to %d", id, cur.UpstreamNumber, o.UpstreamNumber)
		}
		if to == "" {
			to = cur.Status
		}
		now := s.Now().UTC()
		o.V, o.Status, o.UpdatedAt, o.Rev = state.OrderVersion, to, now, cur.Rev+1
		if to != cur.Status || note != "" {
			o.History = append(o.History, state.Transition{From: cur.Status, To: to, At: now, Note: note})
			if len(o.History) > maxHistory {
				o.History = append(o.History[:1], o.History[len(o.History)-maxHistory+1:]...)
			}
		}
		doc, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode order %d: %w", id, err)
		}
		up := ""
		if o.UpstreamNumber != 0 && cur.UpstreamNumber == 0 {
			up = itoa(o.UpstreamNumber)
		}
		code, err := orderSaveScript.Run(ctx, s.rdb,
			[]string{s.key(id), s.p + "upstream", s.p + "st:" + cur.Status, s.p + "st:" + to, s.p + "unfinished", s.p + "done"},
			id, cur.Rev, cur.Status, to, doc, up, flag(state.Terminal(to)), now.UnixMilli(), flag(shrink)).Int()
		if err != nil {
			return nil, fmt.Errorf("save order %d: %w", id, err)
		}
		switch code {
		case 1:
			if s.Observe != nil && to != cur.Status {
				s.Observe(o, cur.Status)
			}
			return o, nil
		case -1:
			return nil, fmt.Errorf("order %d: %w", id, state.ErrOrderNotFound)
		case -3:
			return nil, fmt.Errorf("order %d, upstream %d: %w", id, o.UpstreamNumber, state.ErrUpstreamClaimed)
		}
		// -2: the revision moved; read again.
	}
	return nil, fmt.Errorf("order %d: %w", id, state.ErrOrderConflict)
}

func cloneOrder(o *state.Order) (*state.Order, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("copy order %d: %w", o.ID, err)
	}
	var c state.Order
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("copy order %d: %w", o.ID, err)
	}
	c.ID = o.ID
	return &c, nil
}

// Unfinished returns the ids of every order not in a terminal status, oldest
// first, so a restart resumes each of them (needs_review included: those wait
// for an admin).
func (s *Orders) Unfinished(ctx context.Context) ([]int64, error) {
	vals, err := s.rdb.ZRange(ctx, s.p+"unfinished", 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("list unfinished orders: %w", err)
	}
	return parseIDs(vals), nil
}

func parseIDs(vals []string) []int64 {
	ids := make([]int64, 0, len(vals))
	for _, v := range vals {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func (s *Orders) getMany(ctx context.Context, ids []int64) ([]*state.Order, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.StringCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, s.key(id), "doc")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read orders: %w", err)
	}
	out := make([]*state.Order, 0, len(ids))
	for i, c := range cmds {
		doc, err := c.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read order %d: %w", ids[i], err)
		}
		o, err := decodeOrder(itoa(ids[i]), doc)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// ListByUser returns up to count of the user's orders, newest first, after
// skipping offset of them.
func (s *Orders) ListByUser(ctx context.Context, userID int64, offset, count int) ([]*state.Order, error) {
	if count <= 0 || offset < 0 {
		return nil, nil
	}
	vals, err := s.rdb.ZRevRange(ctx, s.p+"u:"+itoa(userID), int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("list orders of user %d: %w", userID, err)
	}
	return s.getMany(ctx, parseIDs(vals))
}

// CountByUser returns how many orders the user has, for pagination.
func (s *Orders) CountByUser(ctx context.Context, userID int64) (int64, error) {
	n, err := s.rdb.ZCard(ctx, s.p+"u:"+itoa(userID)).Result()
	if err != nil {
		return 0, fmt.Errorf("count orders of user %d: %w", userID, err)
	}
	return n, nil
}

// List returns up to count orders matching filter, newest first, after
// skipping offset matches. A status filter reads that status's index; a line
// filter is applied while scanning, so it costs a scan of the (status)
// index in batches: fine for admin views.
func (s *Orders) List(ctx context.Context, offset, count int, filter state.OrderFilter) ([]*state.Order, error) {
	if count <= 0 || offset < 0 {
		return nil, nil
	}
	index := s.p + "all"
	if filter.Status != "" {
		index = s.p + "st:" + filter.Status
	}
	if filter.Line == "" {
		vals, err := s.rdb.ZRevRange(ctx, index, int64(offset), int64(offset+count-1)).Result()
		if err != nil {
			return nil, fmt.Errorf("list orders: %w", err)
		}
		return s.getMany(ctx, parseIDs(vals))
	}
	const batch = 200
	var out []*state.Order
	skip := offset
	for start := int64(0); ; start += batch {
		vals, err := s.rdb.ZRevRange(ctx, index, start, start+batch-1).Result()
		if err != nil {
			return nil, fmt.Errorf("list orders: %w", err)
		}
		ids := parseIDs(vals)
		lines := make([]*redis.StringCmd, len(ids))
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range ids {
				lines[i] = p.HGet(ctx, s.key(id), "line")
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("list orders: %w", err)
		}
		var want []int64
		for i, c := range lines {
			if c.Val() != filter.Line {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			want = append(want, ids[i])
			if len(out)+len(want) == count {
				break
			}
		}
		got, err := s.getMany(ctx, want)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if len(out) >= count || len(vals) < batch {
			return out, nil
		}
	}
}

// errUnchanged tells save that there is nothing to write.
var errUnchanged = errors.New("unchanged")

// Shrink drops the bulky parts of a finished order (its codes and the
// upstream request) and keeps the summary: ids, item, prices, statuses, times
// and history. It refuses orders that are not terminal with ErrBadTransition
// and returns an order already shrunk as it is.
func (s *Orders) Shrink(ctx context.Context, id int64) (*state.Order, error) {
	var same *state.Order
	o, err := s.save(ctx, id, func(o *state.Order) error {
		if !state.Terminal(o.Status) {
			return &state.TransitionError{ID: id, Status: o.Status, To: o.Status, Err: state.ErrBadTransition}
		}
		if o.Shrunk {
			same = o
			return errUnchanged
		}
		o.Codes, o.Request, o.Shrunk = nil, nil, true
		return nil
	}, "", "retention", true)
	if errors.Is(err, errUnchanged) {
		if err := s.rdb.ZRem(ctx, s.p+"done", id).Err(); err != nil {
			return nil, fmt.Errorf("shrink order %d: %w", id, err)
		}
		return same, nil
	}
	return o, err
}

// ExpireDelivered shrinks every order that reached a terminal status (delivered
// or refunded) more than olderThan ago and returns how many it shrank. Run it
// periodically (daily is plenty) with Orders.Retention. An order a newer
// build wrote is left for that build's retention.
func (s *Orders) ExpireDelivered(ctx context.Context, olderThan time.Duration) (int, error) {
	cutoff := s.Now().Add(-olderThan).UnixMilli()
	n, skipped := 0, 0
	for {
		vals, err := s.rdb.ZRangeByScore(ctx, s.p+"done", &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Offset: int64(skipped), Count: 100,
		}).Result()
		if err != nil {
			return n, fmt.Errorf("list finished orders: %w", err)
		}
		if len(vals) == 0 {
			return n, nil
		}
		for _, id := range parseIDs(vals) {
			if _, err := s.Shrink(ctx, id); err != nil {
				if errors.Is(err, state.ErrOrderNotFound) {
					s.rdb.ZRem(ctx, s.p+"done", id)
					continue
				}
				if errors.Is(err, state.ErrRecordTooNew) {
					skipped++
					continue
				}
				return n, fmt.Errorf("shrink order %d: %w", id, err)
			}
			n++
		}
	}
}

// undeliveredKey is the set of users with a finished order that could not
// reach them (they blocked the bot); /start hands those over.
func (s *Orders) undeliveredKey() string { return s.root + "orders:undelivered" }

// MarkUndelivered remembers that the user has a delivery waiting for /start.
func (s *Orders) MarkUndelivered(ctx context.Context, userID int64) error {
	if err := s.rdb.SAdd(ctx, s.undeliveredKey(), userID).Err(); err != nil {
		return fmt.Errorf("remember undelivered order of %d: %w", userID, err)
	}
	return nil
}

// TakeUndelivered reports whether the user had a delivery waiting and
// forgets it.
func (s *Orders) TakeUndelivered(ctx context.Context, userID int64) (bool, error) {
	n, err := s.rdb.SRem(ctx, s.undeliveredKey(), userID).Result()
	if err != nil {
		return false, fmt.Errorf("take undelivered orders of %d: %w", userID, err)
	}
	return n > 0, nil
}

// CreateFinished stores an order that reached its end elsewhere (a
// delivered order of a store this one continues, from its archive) in one
// atomic step, in its final status, with its upstream number claimed: it
// is never resumed, scheduled or told to its buyer again, and no other
// order can take its upstream order. It keeps its number (o.ID) when this
// store has no order of that number (the buyer's messages and the books
// name it), else takes the next. It is idempotent by charge (dup:
// the charge's order exists, returned as it is). An upstream number
// another order claims already is state.ErrUpstreamClaimed, and nothing is
// stored.
func (s *Orders) CreateFinished(ctx context.Context, o *state.Order, note string) (created *state.Order, dup bool, err error) {
	if o.ChargeID == "" || o.UserID == 0 || !state.Terminal(o.Status) || o.Status == state.OrderNeedsReview {
		return nil, false, fmt.Errorf("store a finished order: charge %q, user %d, status %q", o.ChargeID, o.UserID, o.Status)
	}
	if got, code, err := s.existing(ctx, o.ChargeID, o.QuoteID); err != nil || got != nil {
		return s.createResult(got, code, err, o.ChargeID)
	}
	now := s.Now().UTC()
	n := *o
	n.V, n.Rev, n.CreatedAt, n.UpdatedAt = state.OrderVersion, 1, now, now
	n.History = []state.Transition{{From: "quoted", To: o.Status, At: now, Note: note}}
	done := now.UnixMilli()
	code, got, ex, err := s.storeNew(ctx, n, o.ID, "done", func(int64) int64 { return done }, true)
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("store finished order of charge %s: %w", o.ChargeID, err)
	case code == 0:
		return got, false, nil
	case code == 4:
		return nil, false, fmt.Errorf("store finished order of charge %s, upstream %d (order %s has it): %w", o.ChargeID, o.UpstreamNumber, ex, state.ErrUpstreamClaimed)
	}
	got, err = s.existingByID(ctx, ex)
	return s.createResult(got, code, err, o.ChargeID)
}
