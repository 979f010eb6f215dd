package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// OrderChats keeps what the order chat relay needs per order, in one HASH
// under prefix + "ochat:<order id>":
//
//	who     the tag of the purchase the record is of (state.ChargeTag): a
//	        number Redis handed out again after a loss names another
//	        purchase, whose chat starts afresh (none: written before tags)
//	on      "1" the order has an upstream chat, "0" it has none (known)
//	act     last activity (a message either way, the buyer opening it), ms
//	stop    "1" once polling ended (finished and closed, or idle too long)
//	m:<key> one upstream message: "sent" (relayed to the buyer), "own" (the
//	        buyer's, sent by us) or "s:<token>:<ms>" (being relayed)
//
// The hash expires ChatKeep after its last change; by then the order is past
// retention and its chat is of no use to anyone.
type OrderChats struct {
	rdb redis.UniversalClient
	p   string
}

// ChatKeep is how long an order's chat record lives after its last change.
const ChatKeep = 120 * 24 * time.Hour

// Values of an upstream message in the relay record.
const (
	ChatRelayed = "sent" // relayed to the buyer
	ChatOwn     = "own"  // written by the buyer through the bot
)

// NewOrderChats returns the order chat store under prefix.
func NewOrderChats(rdb redis.UniversalClient, prefix string) *OrderChats {
	return &OrderChats{rdb: rdb, p: prefix + "ochat:"}
}

func (s *OrderChats) key(id int64) string { return s.p + itoa(id) }

// ChatInfo is what is known about an order's chat.
type ChatInfo struct {
	Known    bool      // whether the order was looked at (Enabled is meaningful)
	Enabled  bool      // the order has an upstream chat
	Activity time.Time // last activity; zero when none
	Stopped  bool      // polling has ended
	// Messages maps relay keys of upstream messages to ChatRelayed, ChatOwn
	// or an in-flight claim.
	Messages map[string]string
}

// Info reads the chat record of order id, the purchase tag names, in one
// round trip; a record of another purchase under the number reads as none.
func (s *OrderChats) Info(ctx context.Context, id int64, tag string) (*ChatInfo, error) {
	m, err := s.rdb.HGetAll(ctx, s.key(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("read chat of order %d: %w", id, err)
	}
	info := &ChatInfo{Messages: map[string]string{}}
	if who := m["who"]; who != "" && tag != "" && who != tag {
		return info, nil
	}
	for k, v := range m {
		switch {
		case k == "on":
			info.Known, info.Enabled = true, v == "1"
		case k == "act":
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
				info.Activity = time.UnixMilli(ms)
			}
		case k == "stop":
			info.Stopped = v == "1"
		case strings.HasPrefix(k, "m:"):
			info.Messages[k[2:]] = v
		}
	}
	return info, nil
}

// setEnabledScript: KEYS[1] record. ARGV[1] tag, ARGV[2] "1"/"0", ARGV[3]
// now (ms), ARGV[4] ttl (ms). A record of another purchase is dropped first.
var setEnabledScript = redis.NewScript(`
local who = redis.call('HGET', KEYS[1], 'who')
if who and who ~= ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'who', ARGV[1], 'on', ARGV[2])
if ARGV[2] == '1' then redis.call('HSETNX', KEYS[1], 'act', ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)

// SetEnabled records whether order id, the purchase tag names, has an
// upstream chat; a record of another purchase under the number is dropped.
// Enabling also sets the activity time when there is none yet, so polling
// starts fast.
func (s *OrderChats) SetEnabled(ctx context.Context, id int64, tag string, enabled bool, now time.Time) error {
	if tag != "" {
		on := "0"
		if enabled {
			on = "1"
		}
		if err := setEnabledScript.Run(ctx, s.rdb, []string{s.key(id)}, tag, on, now.UnixMilli(), ChatKeep.Milliseconds()).Err(); err != nil {
			return fmt.Errorf("record chat of order %d: %w", id, err)
		}
		return nil
	}
	k := s.key(id)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if enabled {
			p.HSet(ctx, k, "on", "1")
			p.HSetNX(ctx, k, "act", now.UnixMilli())
		} else {
			p.HSet(ctx, k, "on", "0")
		}
		p.Expire(ctx, k, ChatKeep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record chat of order %d: %w", id, err)
	}
	return nil
}

// Touch records activity at now and clears the stopped mark, so polling
// runs fast again.
func (s *OrderChats) Touch(ctx context.Context, id int64, now time.Time) error {
	k := s.key(id)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "act", now.UnixMilli())
		p.HDel(ctx, k, "stop")
		p.Expire(ctx, k, ChatKeep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record chat activity of order %d: %w", id, err)
	}
	return nil
}

// Stop marks the order's polling as ended.
func (s *OrderChats) Stop(ctx context.Context, id int64) error {
	k := s.key(id)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "stop", "1")
		p.Expire(ctx, k, ChatKeep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("stop chat of order %d: %w", id, err)
	}
	return nil
}

// MarkOwn records an upstream message the buyer wrote through the bot, so
// it is never relayed back to them.
func (s *OrderChats) MarkOwn(ctx context.Context, id int64, msgKey string) error {
	return s.mark(ctx, id, msgKey, ChatOwn)
}

// MarkRelayed records that the message reached the buyer.
func (s *OrderChats) MarkRelayed(ctx context.Context, id int64, msgKey string) error {
	return s.mark(ctx, id, msgKey, ChatRelayed)
}

func (s *OrderChats) mark(ctx context.Context, id int64, msgKey, v string) error {
	if msgKey == "" {
		return errors.New("chat message without a key")
	}
	k := s.key(id)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "m:"+msgKey, v)
		p.Expire(ctx, k, ChatKeep)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record chat message of order %d: %w", id, err)
	}
	return nil
}

// chatClaimScript: KEYS[1] the chat hash. ARGV: field, token, now ms, stale
// ms. A message is claimed when it has no entry, or when an earlier claim is
// older than stale (its holder died mid-send).
var chatClaimScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then
  local ms = tonumber(string.match(v, '^s:[^:]*:(%d+)$'))
  if not ms or ms > tonumber(ARGV[3]) - tonumber(ARGV[4]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], 's:' .. ARGV[2] .. ':' .. ARGV[3])
return 1`)

// ClaimRelay takes the right to relay one upstream message: true when this
// caller must send it and then MarkRelayed (or ReleaseRelay on failure).
// Concurrent pollers of one chat never both get it. A claim older than
// stale is taken over, so a message whose relayer died is sent again (at
// least once, rather than lost, when the crash fell between the send and
// MarkRelayed).
func (s *OrderChats) ClaimRelay(ctx context.Context, id int64, msgKey, token string, now time.Time, stale time.Duration) (bool, error) {
	if msgKey == "" {
		return false, errors.New("chat message without a key")
	}
	n, err := chatClaimScript.Run(ctx, s.rdb, []string{s.key(id)}, "m:"+msgKey, token,
		now.UnixMilli(), stale.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("claim chat message of order %d: %w", id, err)
	}
	return n == 1, nil
}

var chatReleaseScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and string.sub(v, 1, #ARGV[2]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) return 1 end
return 0`)

// ReleaseRelay gives back a claim whose send failed, so the next poll
// tries again; a claim taken over by someone else is left alone.
func (s *OrderChats) ReleaseRelay(ctx context.Context, id int64, msgKey, token string) error {
	err := chatReleaseScript.Run(ctx, s.rdb, []string{s.key(id)}, "m:"+msgKey, "s:"+token+":").Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("release chat message of order %d: %w", id, err)
	}
	return nil
}
