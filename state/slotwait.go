package state

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Waiters of a placement slot, first come first woken: when the holder
// releases the slot it wakes the longest waiting order at once, instead of
// every waiter finding out at its next poll. Under a queue of creates of
// one kind that poll gap, not the create itself, set the pace.
//
//	slotwait:<kind>   ZSET order ids by when they first waited (unix ms)

func (s *Orders) slotWaitKey(kind string) string { return s.p + "slotwait:" + kind }

// WaitSlot records that order id waits for the slot of kind (keeping its
// place when it waited before).
func (s *Orders) WaitSlot(ctx context.Context, kind string, id int64, now time.Time) error {
	err := s.rdb.ZAddNX(ctx, s.slotWaitKey(kind), redis.Z{Score: float64(now.UnixMilli()), Member: itoa(id)}).Err()
	if err != nil {
		return fmt.Errorf("wait for slot %s: %w", kind, err)
	}
	return nil
}

// StopWaitingSlot removes order id from the slot's waiters.
func (s *Orders) StopWaitingSlot(ctx context.Context, kind string, id int64) error {
	if err := s.rdb.ZRem(ctx, s.slotWaitKey(kind), itoa(id)).Err(); err != nil {
		return fmt.Errorf("stop waiting for slot %s: %w", kind, err)
	}
	return nil
}

// NextSlotWaiter takes the longest waiting order off the slot's waiters;
// ok is false when none waits.
func (s *Orders) NextSlotWaiter(ctx context.Context, kind string) (id int64, ok bool, err error) {
	zs, err := s.rdb.ZPopMin(ctx, s.slotWaitKey(kind), 1).Result()
	if errors.Is(err, redis.Nil) || err == nil && len(zs) == 0 {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("next waiter of slot %s: %w", kind, err)
	}
	m, _ := zs[0].Member.(string)
	id, err = strconv.ParseInt(m, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("slot %s waiter %q", kind, m)
	}
	return id, true, nil
}
