package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"shopbot/state/redisstore"

	"github.com/redis/go-redis/v9"
)

// ErrLeaseLost means another worker took the chat over (our lease expired);
// the work is not saved and the update stays queued for that worker.
var ErrLeaseLost = errors.New("chat lease lost")

// ErrConflict means the conversation changed since it was loaded; nothing was
// saved and the update stays queued to be handled again on the new state.
var ErrConflict = errors.New("conversation revision conflict")

// Update is one incoming Telegram update as the intake stores it: its
// update_id, the chat whose queue it joins and the raw JSON.
type Update struct {
	ID   int64
	Chat int64
	Body []byte
	// Keep marks an update the queue's bound never drops: a payment.
	Keep bool
}

// DefaultMaxQueue is how many updates one chat's queue holds before new
// ones are dropped (Queue.MaxQueue). A person taps and types a few updates
// a second, and the shop answers about as fast: a queue this long is a
// client or a script flooding the chat, not a buyer waiting for answers.
const DefaultMaxQueue = 100

// Queue is the durable update intake: a per-chat FIFO of updates, a set of
// chats with work ready, and a lease per chat so exactly one worker in any
// process handles a chat at a time. The chat's conversation document lives
// beside it and is loaded and saved in the same round trips.
//
// Keys of chat c, in its shard n = chatShard(c), under prefix + "{c:<n>}:"
// (one cluster slot per shard, ChatShards shards):
//
//	ready       ZSET chats with work, scored by when they are due (ms)
//	lease       HASH chat -> the token of the worker holding it
//	seen:<id>   STRING update id seen (de-duplication, SeenTTL)
//	q:<c>       LIST the chat's queued updates, "<update id>\n<JSON>"
//	att:<c>     STRING claims of the head update
//	conv:<c>    HASH rev, doc: the conversation document
type Queue struct {
	rdb     redis.UniversalClient
	p       string
	next    atomic.Uint32 // the shard the next Claim looks at first
	SeenTTL time.Duration // how long update ids are remembered for de-duplication
	Lease   time.Duration // how long a claim is held before another worker may take it
	ConvTTL time.Duration // cleanup TTL of idle conversation documents
	// Durable, when set, makes Accept confirm its writes durable (see
	// Durability.Sync) before it returns nil: an update acknowledged to
	// Telegram then survives a failover to the replica Sync waited for.
	// Accept returns an error wrapping ErrNotDurable when it cannot
	// confirm; Telegram delivers the updates again and the seen ids drop
	// the copies.
	Durable *redisstore.Durability
	// Stored, when set, is called once Accept has stored new updates and
	// before it waits for durability, with the chats of the batches that
	// stored any, so workers start on them while the acknowledgement waits
	// (on Redis >= 7.2 with AOF, up to the next fsync). A failover that
	// loses them then makes Telegram deliver them again: the buyer may see
	// a reply twice, and nothing is paid twice.
	Stored func(chats []int64)
	// MaxQueue bounds each chat's queue: an update that finds it full is
	// dropped (its id is still remembered, so a redelivery is a duplicate),
	// unless it is marked Keep. DefaultMaxQueue unless set.
	MaxQueue int
	// Dropped, when set, is called with the chat of every update the bound
	// dropped, once per update.
	Dropped func(chat int64)
}

// DefaultLease is how long a chat's claim holds before another worker may
// take the chat: a killed replica's chats come back after it. Short, as
// Telegram waits only 10 s for the answer to a pre-checkout query (with
// 30 s, a pre-checkout whose replica was killed was answered too late and
// the buyer's payment failed); the dispatcher renews it every third of it
// while it works.
const DefaultLease = 6 * time.Second

// NewQueue returns the intake queue stored under prefix.
func NewQueue(rdb redis.UniversalClient, prefix string) *Queue {
	return &Queue{
		rdb: rdb, p: prefix,
		SeenTTL: 48 * time.Hour, Lease: DefaultLease, ConvTTL: 60 * 24 * time.Hour,
		MaxQueue: DefaultMaxQueue,
	}
}

func (q *Queue) maxQueue() int {
	if q.MaxQueue <= 0 {
		return DefaultMaxQueue
	}
	return q.MaxQueue
}

func (q *Queue) tag(shard int) string   { return q.p + "{c:" + strconv.Itoa(shard) + "}:" }
func (q *Queue) ready(shard int) string { return q.tag(shard) + "ready" }
func (q *Queue) lease(shard int) string { return q.tag(shard) + "lease" }

// ShardTag is the key prefix of chat's shard, prefix + "{c:<n>}:" (the
// layout above): the key layout's migration (work.MigrateLayout) moves the
// chat's legacy keys under it.
func (q *Queue) ShardTag(chat int64) string { return q.tag(chatShard(chat)) }

// chatKeys are the keys of chat's claim scripts: ready, lease, q, att, conv.
func (q *Queue) chatKeys(chat int64) []string {
	t, c := q.tag(chatShard(chat)), itoa(chat)
	return []string{t + "ready", t + "lease", t + "q:" + c, t + "att:" + c, t + "conv:" + c}
}

// acceptScript: KEYS ready, then seen and queue of each update. ARGV now ms,
// seen TTL ms, queue bound, then id, chat, keep flag, body of each update.
// Returns {stored, the chats of dropped updates...}.
var acceptScript = redis.NewScript(`
local n, dropped = 0, {}
for i = 0, (#ARGV - 3) / 4 - 1 do
  local id, chat = ARGV[4 + i * 4], ARGV[5 + i * 4]
  if redis.call('SET', KEYS[2 + i * 2], '1', 'NX', 'PX', ARGV[2]) then
    if ARGV[6 + i * 4] ~= '1' and redis.call('LLEN', KEYS[3 + i * 2]) >= tonumber(ARGV[3]) then
      dropped[#dropped + 1] = chat
    else
      redis.call('RPUSH', KEYS[3 + i * 2], id .. '\n' .. ARGV[7 + i * 4])
      redis.call('ZADD', KEYS[1], 'NX', ARGV[1], chat)
      n = n + 1
    end
  end
end
return {n, unpack(dropped)}`)

// Accept durably stores updates, dropping those whose update_id was seen
// before and those that find their chat's queue full (MaxQueue; not those
// marked Keep). It returns how many were stored. Once it returns nil the updates may be
// acknowledged to Telegram. Updates of one chat keep their order; each
// shard's updates are stored atomically, so after an error some may be
// stored: a redelivery stores the rest (the seen ids drop the others).
func (q *Queue) Accept(ctx context.Context, ups []Update, now time.Time) (int, error) {
	if len(ups) == 0 {
		return 0, nil
	}
	type batch struct {
		keys []string
		args []any
	}
	var order []int
	batches := map[int]*batch{}
	for _, u := range ups {
		sh := chatShard(u.Chat)
		b := batches[sh]
		if b == nil {
			b = &batch{keys: []string{q.ready(sh)}, args: []any{now.UnixMilli(), q.SeenTTL.Milliseconds(), q.maxQueue()}}
			batches[sh] = b
			order = append(order, sh)
		}
		t := q.tag(sh)
		b.keys = append(b.keys, t+"seen:"+itoa(u.ID), t+"q:"+itoa(u.Chat))
		b.args = append(b.args, u.ID, u.Chat, flag(u.Keep), u.Body)
	}
	total := 0
	ready := make([]string, 0, len(order))
	var stored []int64
	for _, sh := range order {
		b := batches[sh]
		res, err := acceptScript.Run(ctx, q.rdb, b.keys, b.args...).Slice()
		if err != nil {
			return total, fmt.Errorf("accept updates: %w", err)
		}
		n, _ := res[0].(int64)
		total += int(n)
		ready = append(ready, b.keys[0])
		if n > 0 {
			for i := 4; i < len(b.args); i += 4 {
				stored = append(stored, b.args[i].(int64))
			}
		}
		if q.Dropped != nil {
			for _, v := range res[1:] {
				if chat, err := strconv.ParseInt(str(v), 10, 64); err == nil {
					q.Dropped(chat)
				}
			}
		}
	}
	if len(stored) > 0 && q.Stored != nil {
		q.Stored(stored)
	}
	// Also after duplicates only: the first copy may not be durable yet.
	// One wait per master covers every shard written there.
	if q.Durable != nil {
		if err := q.Durable.SyncKeys(ctx, ready...); err != nil {
			return total, fmt.Errorf("accept updates: %w", err)
		}
	}
	return total, nil
}

// Claim is a chat taken by one worker: the update at the head of its queue
// and the conversation document as it was when the lease was taken.
type Claim struct {
	Chat     int64
	Token    string
	UpdateID int64
	Body     []byte
	Attempts int   // how many times this update has been claimed, this one included
	Rev      int64 // conversation revision; 0 when there is no document yet
	Doc      []byte
}

// claimScript: KEYS ready, lease, q, att, conv of one chat. ARGV chat, now
// ms, lease end ms, token. Returns 0 when the chat is not due (another
// worker took it), 1 when its queue was empty (cleaned up), else {head,
// attempts, rev, doc}.
var claimScript = redis.NewScript(`
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return 0 end
local head = redis.call('LINDEX', KEYS[3], 0)
if not head then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
local att = redis.call('INCR', KEYS[4])
redis.call('PEXPIRE', KEYS[4], 86400000)
local c = redis.call('HMGET', KEYS[5], 'rev', 'doc')
return {head, att, c[1] or '0', c[2] or ''}`)

// claimPeek is how many due chats Claim reads from each shard.
const claimPeek = 4

// Claim takes the lease of one chat with work ready and returns its next
// update, or nil when no chat is ready. A chat whose previous worker died is
// ready again once that worker's lease expires. It reads every shard's due
// chats in one pipeline (on a cluster, one round trip per node), then
// claims one, starting at a shard that turns with every call.
func (q *Queue) Claim(ctx context.Context, now time.Time) (*Claim, error) {
	cmds := make([]*redis.StringSliceCmd, ChatShards)
	_, _ = q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := range ChatShards {
			cmds[sh] = p.ZRangeByScore(ctx, q.ready(sh), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: claimPeek})
		}
		return nil
	})
	var firstErr error
	failed := 0
	start := int(q.next.Add(1))
	for i := range ChatShards {
		sh := (start + i) % ChatShards
		chats, err := cmds[sh].Result()
		if err != nil {
			// One node failing over does not stop the others' chats.
			if firstErr == nil {
				firstErr = err
			}
			failed++
			continue
		}
		for _, v := range chats {
			chat, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			c, err := q.claimChat(ctx, chat, now)
			if err != nil {
				return nil, err
			}
			if c != nil {
				return c, nil
			}
		}
	}
	if failed == ChatShards {
		return nil, fmt.Errorf("claim chat: %w", firstErr)
	}
	return nil, nil
}

// ClaimChat takes the lease of chat if it has an update due, and returns
// it; nil when the chat has nothing due or another worker holds it. It is
// one round trip, for a worker told which chat just got an update (Claim
// first looks through every shard).
func (q *Queue) ClaimChat(ctx context.Context, chat int64, now time.Time) (*Claim, error) {
	return q.claimChat(ctx, chat, now)
}

// claimChat takes chat's lease if it is still due.
func (q *Queue) claimChat(ctx context.Context, chat int64, now time.Time) (*Claim, error) {
	token := newToken()
	res, err := claimScript.Run(ctx, q.rdb, q.chatKeys(chat),
		chat, now.UnixMilli(), now.Add(q.Lease).UnixMilli(), token).Result()
	if err != nil {
		return nil, fmt.Errorf("claim chat %d: %w", chat, err)
	}
	vals, ok := res.([]any)
	if !ok { // not due any more, or an empty queue cleaned up
		return nil, nil
	}
	c := &Claim{Chat: chat, Token: token}
	if err := c.fill(vals); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Claim) fill(res []any) error {
	head := []byte(str(res[0]))
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return fmt.Errorf("corrupt queue entry for chat %d", c.Chat)
	}
	id, err := strconv.ParseInt(string(head[:i]), 10, 64)
	if err != nil {
		return fmt.Errorf("corrupt queue entry for chat %d: %w", c.Chat, err)
	}
	c.UpdateID, c.Body = id, head[i+1:]
	att, _ := res[1].(int64)
	c.Attempts = int(att)
	c.Rev, _ = strconv.ParseInt(str(res[2]), 10, 64)
	c.Doc = nil
	if d := str(res[3]); d != "" {
		c.Doc = []byte(d)
	}
	return nil
}

// doneScript: KEYS ready, lease, q, att, conv of one chat. ARGV chat, token,
// update id, save flag, claimed rev, doc, conversation TTL ms, now ms, lease
// end ms, keep flag.
var doneScript = redis.NewScript(`
local chat = ARGV[1]
if redis.call('HGET', KEYS[2], chat) ~= ARGV[2] then return {-1} end
if ARGV[4] == '1' then
  local cur = redis.call('HGET', KEYS[5], 'rev') or '0'
  if cur ~= ARGV[5] then
    redis.call('HDEL', KEYS[2], chat)
    redis.call('ZADD', KEYS[1], ARGV[8], chat)
    return {-2}
  end
  redis.call('HSET', KEYS[5], 'rev', tonumber(cur) + 1, 'doc', ARGV[6])
  redis.call('PEXPIRE', KEYS[5], ARGV[7])
end
local head = redis.call('LINDEX', KEYS[3], 0)
if head and string.sub(head, 1, #ARGV[3] + 1) == ARGV[3] .. '\n' then redis.call('LPOP', KEYS[3]) end
redis.call('DEL', KEYS[4])
local nxt = redis.call('LINDEX', KEYS[3], 0)
if not nxt then
  redis.call('ZREM', KEYS[1], chat)
  redis.call('HDEL', KEYS[2], chat)
  return {0}
end
if ARGV[10] ~= '1' then
  redis.call('HDEL', KEYS[2], chat)
  redis.call('ZADD', KEYS[1], ARGV[8], chat)
  return {0}
end
redis.call('ZADD', KEYS[1], ARGV[9], chat)
local att = redis.call('INCR', KEYS[4])
redis.call('PEXPIRE', KEYS[4], 86400000)
local c = redis.call('HMGET', KEYS[5], 'rev', 'doc')
return {1, nxt, att, c[1] or '0', c[2] or ''}`)

// Done finishes the claimed update in one round trip: when save is true the
// conversation document is written with compare-and-set on the claimed
// revision, the update leaves the queue, and the lease is released. When
// keep is true and the chat has more updates queued, the lease is kept and
// the next update is returned in c (updated in place) with next = true.
func (q *Queue) Done(ctx context.Context, c *Claim, save bool, doc []byte, keep bool, now time.Time) (next bool, err error) {
	res, err := doneScript.Run(ctx, q.rdb, q.chatKeys(c.Chat),
		c.Chat, c.Token, c.UpdateID, flag(save), c.Rev, doc, q.ConvTTL.Milliseconds(),
		now.UnixMilli(), now.Add(q.Lease).UnixMilli(), flag(keep)).Slice()
	if err != nil {
		return false, fmt.Errorf("finish update %d: %w", c.UpdateID, err)
	}
	switch code, _ := res[0].(int64); code {
	case -1:
		return false, ErrLeaseLost
	case -2:
		return false, ErrConflict
	case 0:
		return false, nil
	}
	if err := c.fill(res[1:]); err != nil {
		return false, err
	}
	return true, nil
}

var extendScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1`)

// Extend renews the claim's lease; it returns ErrLeaseLost when the chat has
// already been taken over.
func (q *Queue) Extend(ctx context.Context, c *Claim, now time.Time) error {
	sh := chatShard(c.Chat)
	ok, err := extendScript.Run(ctx, q.rdb, []string{q.ready(sh), q.lease(sh)}, c.Chat, c.Token, now.Add(q.Lease).UnixMilli()).Int()
	if err != nil {
		return fmt.Errorf("extend lease of chat %d: %w", c.Chat, err)
	}
	if ok == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Release gives the lease back without finishing the update, so it is handled
// again (by any worker) right away. It is used on shutdown.
func (q *Queue) Release(ctx context.Context, c *Claim, now time.Time) error {
	sh := chatShard(c.Chat)
	_, err := releaseScript.Run(ctx, q.rdb, []string{q.ready(sh), q.lease(sh)}, c.Chat, c.Token, now.UnixMilli()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("release chat %d: %w", c.Chat, err)
	}
	return nil
}

// Defer gives the lease back without finishing the update, and makes the
// chat due again only at due: its updates wait, in order, and hold no
// worker meanwhile (a chat Telegram refuses messages to until then). The
// claim does not count as an attempt, so waiting never makes an update
// look poisoned.
func (q *Queue) Defer(ctx context.Context, c *Claim, due time.Time) error {
	t, chat := q.tag(chatShard(c.Chat)), itoa(c.Chat)
	_, err := deferScript.Run(ctx, q.rdb, []string{t + "ready", t + "lease", t + "att:" + chat}, c.Chat, c.Token, due.UnixMilli()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("defer chat %d: %w", c.Chat, err)
	}
	return nil
}

var deferScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
return 1`)

var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1`)

// Conversation reads a chat's conversation document outside any lease, for
// tests and admin views. It returns revision 0 and nil when there is none.
func (q *Queue) Conversation(ctx context.Context, chat int64) (int64, []byte, error) {
	vals, err := q.rdb.HMGet(ctx, q.ConvKey(chat), "rev", "doc").Result()
	if err != nil {
		return 0, nil, fmt.Errorf("read conversation of chat %d: %w", chat, err)
	}
	rev, _ := strconv.ParseInt(str(vals[0]), 10, 64)
	if d := str(vals[1]); d != "" {
		return rev, []byte(d), nil
	}
	return rev, nil, nil
}

// ConvKey is the key of chat's conversation document (tests, admin tools).
func (q *Queue) ConvKey(chat int64) string { return q.chatKeys(chat)[4] }

// Pending returns how many chats have updates waiting or in progress, over
// every shard.
func (q *Queue) Pending(ctx context.Context) (int64, error) {
	n, err := redisstore.SumCard(ctx, q.rdb, ChatShards, q.ready)
	if err != nil {
		return 0, fmt.Errorf("count pending chats: %w", err)
	}
	return n, nil
}
