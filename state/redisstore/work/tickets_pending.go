package work

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A buyer's support messages wait in their ticket until the relay sends
// them to the admins, folded into one relay (bot/support). Keys, under
// prefix + "support:":
//
//	p:<buyer>   LIST the buyer's messages not relayed yet, oldest first
//	f:<buyer>   STRING set while a relay of them is scheduled (expires)
//
// A buyer's list fills no faster than support's rate limit and empties
// at each relay; while no admin is reachable it keeps the newest
// PendingMax messages, and it expires pendingKeep after its last one.
const (
	PendingMax  = 500
	pendingKeep = 30 * 24 * time.Hour
)

func (s *Tickets) pendingKey(buyer int64) string { return s.p + "p:" + itoa(buyer) }
func (s *Tickets) foldKey(buyer int64) string    { return s.p + "f:" + itoa(buyer) }

// Queue adds a message (doc) to the buyer's messages waiting for the
// relay. schedule is true when no relay of them was scheduled: the caller
// schedules one fold from now (and the mark lasts that long).
func (s *Tickets) Queue(ctx context.Context, buyer int64, doc string, fold time.Duration) (schedule bool, err error) {
	pipe := s.rdb.Pipeline()
	pipe.RPush(ctx, s.pendingKey(buyer), doc)
	pipe.LTrim(ctx, s.pendingKey(buyer), -PendingMax, -1)
	pipe.PExpire(ctx, s.pendingKey(buyer), pendingKeep)
	mark := pipe.SetNX(ctx, s.foldKey(buyer), "1", fold)
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("queue a support message of %d: %w", buyer, err)
	}
	return mark.Val(), nil
}

// Take takes the buyer's waiting messages, oldest first, and clears the
// relay's mark first: a message queued after it schedules a relay of its
// own.
func (s *Tickets) Take(ctx context.Context, buyer int64) ([]string, error) {
	if err := s.rdb.Del(ctx, s.foldKey(buyer)).Err(); err != nil {
		return nil, fmt.Errorf("take support messages of %d: %w", buyer, err)
	}
	var list *redis.StringSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		list = p.LRange(ctx, s.pendingKey(buyer), 0, -1)
		p.Del(ctx, s.pendingKey(buyer))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take support messages of %d: %w", buyer, err)
	}
	return list.Val(), nil
}

// PutBack returns messages Take took (oldest first) to the front of the
// buyer's waiting messages, for a relay that reached no admin.
func (s *Tickets) PutBack(ctx context.Context, buyer int64, docs []string) error {
	if len(docs) == 0 {
		return nil
	}
	rev := make([]any, len(docs))
	for i, d := range docs {
		rev[len(docs)-1-i] = d
	}
	pipe := s.rdb.Pipeline()
	pipe.LPush(ctx, s.pendingKey(buyer), rev...)
	pipe.LTrim(ctx, s.pendingKey(buyer), -PendingMax, -1)
	pipe.PExpire(ctx, s.pendingKey(buyer), pendingKeep)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("put back support messages of %d: %w", buyer, err)
	}
	return nil
}
