package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

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
}

// Queue is the durable update intake: a per-chat FIFO of updates, a set of
// chats with work ready, and a lease per chat so exactly one worker in any
// process handles a chat at a time. The chat's conversation document lives
// beside it and is loaded and saved in the same round trips.
type Queue struct {
	rdb     redis.UniversalClient
	p       string
	ready   string
	lease   string
	SeenTTL time.Duration // how long update ids are remembered for de-duplication
	Lease   time.Duration // how long a claim is held before another worker may take it
	ConvTTL time.Duration // cleanup TTL of idle conversation documents
}

// NewQueue returns the intake queue stored under prefix.
func NewQueue(rdb redis.UniversalClient, prefix string) *Queue {
	p := prefix + chatTag
	return &Queue{
		rdb: rdb, p: p, ready: p + "ready", lease: p + "lease",
		SeenTTL: 48 * time.Hour, Lease: 30 * time.Second, ConvTTL: 60 * 24 * time.Hour,
	}
}

var acceptScript = redis.NewScript(`
local n = 0
for i = 4, #ARGV, 3 do
  local id, chat = ARGV[i], ARGV[i+1]
  if redis.call('SET', ARGV[1] .. 'seen:' .. id, '1', 'NX', 'PX', ARGV[3]) then
    redis.call('RPUSH', ARGV[1] .. 'q:' .. chat, id .. '\n' .. ARGV[i+2])
    redis.call('ZADD', KEYS[1], 'NX', ARGV[2], chat)
    n = n + 1
  end
end
return n`)

// Accept durably stores updates, dropping those whose update_id was seen
// before. It returns how many were new. Once it returns nil the updates may be
// acknowledged to Telegram.
func (q *Queue) Accept(ctx context.Context, ups []Update, now time.Time) (int, error) {
	if len(ups) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 3+3*len(ups))
	args = append(args, q.p, now.UnixMilli(), q.SeenTTL.Milliseconds())
	for _, u := range ups {
		args = append(args, u.ID, u.Chat, u.Body)
	}
	n, err := acceptScript.Run(ctx, q.rdb, []string{q.ready}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("accept updates: %w", err)
	}
	return n, nil
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

var claimScript = redis.NewScript(`
local r = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, 1)
if #r == 0 then return false end
local chat, p = r[1], ARGV[1]
local head = redis.call('LINDEX', p .. 'q:' .. chat, 0)
if not head then
  redis.call('ZREM', KEYS[1], chat)
  redis.call('HDEL', KEYS[2], chat)
  return {chat}
end
redis.call('ZADD', KEYS[1], ARGV[3], chat)
redis.call('HSET', KEYS[2], chat, ARGV[4])
local att = redis.call('INCR', p .. 'att:' .. chat)
redis.call('PEXPIRE', p .. 'att:' .. chat, 86400000)
local c = redis.call('HMGET', p .. 'conv:' .. chat, 'rev', 'doc')
return {chat, head, att, c[1] or '0', c[2] or ''}`)

// Claim takes the lease of one chat with work ready and returns its next
// update, or nil when no chat is ready. A chat whose previous worker died is
// ready again once that worker's lease expires.
func (q *Queue) Claim(ctx context.Context, now time.Time) (*Claim, error) {
	for range 8 {
		token := newToken()
		res, err := claimScript.Run(ctx, q.rdb, []string{q.ready, q.lease},
			q.p, now.UnixMilli(), now.Add(q.Lease).UnixMilli(), token).Slice()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("claim chat: %w", err)
		}
		if len(res) == 1 { // an empty queue was cleaned up; look again
			continue
		}
		chat, _ := strconv.ParseInt(str(res[0]), 10, 64)
		c := &Claim{Chat: chat, Token: token}
		if err := c.fill(res[1:]); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, nil
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

var doneScript = redis.NewScript(`
local p, chat = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[2], chat) ~= ARGV[3] then return {-1} end
local conv = p .. 'conv:' .. chat
if ARGV[5] == '1' then
  local cur = redis.call('HGET', conv, 'rev') or '0'
  if cur ~= ARGV[6] then
    redis.call('HDEL', KEYS[2], chat)
    redis.call('ZADD', KEYS[1], ARGV[9], chat)
    return {-2}
  end
  redis.call('HSET', conv, 'rev', tonumber(cur) + 1, 'doc', ARGV[7])
  redis.call('PEXPIRE', conv, ARGV[8])
end
local q = p .. 'q:' .. chat
local head = redis.call('LINDEX', q, 0)
if head and string.sub(head, 1, #ARGV[4] + 1) == ARGV[4] .. '\n' then redis.call('LPOP', q) end
redis.call('DEL', p .. 'att:' .. chat)
local nxt = redis.call('LINDEX', q, 0)
if not nxt then
  redis.call('ZREM', KEYS[1], chat)
  redis.call('HDEL', KEYS[2], chat)
  return {0}
end
if ARGV[11] ~= '1' then
  redis.call('HDEL', KEYS[2], chat)
  redis.call('ZADD', KEYS[1], ARGV[9], chat)
  return {0}
end
redis.call('ZADD', KEYS[1], ARGV[10], chat)
local att = redis.call('INCR', p .. 'att:' .. chat)
redis.call('PEXPIRE', p .. 'att:' .. chat, 86400000)
local c = redis.call('HMGET', conv, 'rev', 'doc')
return {1, nxt, att, c[1] or '0', c[2] or ''}`)

// Done finishes the claimed update in one round trip: when save is true the
// conversation document is written with compare-and-set on the claimed
// revision, the update leaves the queue, and the lease is released. When
// keep is true and the chat has more updates queued, the lease is kept and
// the next update is returned in c (updated in place) with next = true.
func (q *Queue) Done(ctx context.Context, c *Claim, save bool, doc []byte, keep bool, now time.Time) (next bool, err error) {
	res, err := doneScript.Run(ctx, q.rdb, []string{q.ready, q.lease},
		q.p, c.Chat, c.Token, c.UpdateID, flag(save), c.Rev, doc, q.ConvTTL.Milliseconds(),
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
	ok, err := extendScript.Run(ctx, q.rdb, []string{q.ready, q.lease}, c.Chat, c.Token, now.Add(q.Lease).UnixMilli()).Int()
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
	_, err := releaseScript.Run(ctx, q.rdb, []string{q.ready, q.lease}, c.Chat, c.Token, now.UnixMilli()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("release chat %d: %w", c.Chat, err)
	}
	return nil
}

var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1`)

// Conversation reads a chat's conversation document outside any lease, for
// tests and admin views. It returns revision 0 and nil when there is none.
func (q *Queue) Conversation(ctx context.Context, chat int64) (int64, []byte, error) {
	vals, err := q.rdb.HMGet(ctx, q.p+"conv:"+itoa(chat), "rev", "doc").Result()
	if err != nil {
		return 0, nil, fmt.Errorf("read conversation of chat %d: %w", chat, err)
	}
	rev, _ := strconv.ParseInt(str(vals[0]), 10, 64)
	if d := str(vals[1]); d != "" {
		return rev, []byte(d), nil
	}
	return rev, nil, nil
}

// Pending returns how many chats have updates waiting or in progress.
func (q *Queue) Pending(ctx context.Context) (int64, error) {
	return q.rdb.ZCard(ctx, q.ready).Result()
}

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	case int64:
		return strconv.FormatInt(s, 10)
	}
	return ""
}
