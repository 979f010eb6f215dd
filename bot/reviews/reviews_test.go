package reviews_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"shopbot/bot/reviews"
	"shopbot/flows"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

// sender records messages; err fails the next sends.
type sender struct {
	mu   sync.Mutex
	sent []string
	err  error
}

func (s *sender) Send(_ context.Context, _ int64, text string, _ [][]flows.Button) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	s.sent = append(s.sent, text)
	return len(s.sent), nil
}

func delivered(id int64) *state.Order {
	item, _ := json.Marshal(state.Quote{Line: "keys", Category: "elden", ItemName: "ELDEN RING"})
	return &state.Order{ID: id, ChargeID: fmt.Sprint("ch", id), ChatID: 9, UserID: 9, Lang: "ru", Line: "keys", Item: item, Status: state.OrderDelivered}
}

// The question goes once, whatever replicas look at the order; one that
// could not be sent is sent at the next look; a buyer who blocked the bot
// is not asked; an order not delivered is not asked about.
func TestAskedOnceAfterDelivery(t *testing.T) {
	r := statetest.New(t)
	tg := &sender{}
	rv := reviews.New(reviews.Deps{Telegram: tg, Store: records.NewReviews(r.Client, r.Prefix)})
	ctx := t.Context()
	o := delivered(1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = rv.OnDelivered(ctx, o) }()
	}
	wg.Wait()
	if len(tg.sent) != 1 {
		t.Fatalf("asked %d times", len(tg.sent))
	}
	if reviews.Product(o) != "key-elden" {
		t.Fatalf("product = %q", reviews.Product(o))
	}

	tg.err = errors.New("telegram down")
	if err := rv.OnDelivered(ctx, delivered(2)); err == nil {
		t.Fatal("a question not sent is not retried")
	}
	tg.err = nil
	if err := rv.OnDelivered(ctx, delivered(2)); err != nil || len(tg.sent) != 2 {
		t.Fatalf("retry: %v, %d sent", err, len(tg.sent))
	}

	tg.err = fmt.Errorf("send: %w", flows.ErrBlocked)
	if err := rv.OnDelivered(ctx, delivered(3)); err != nil {
		t.Fatalf("blocked: %v", err)
	}
	tg.err = nil
	if err := rv.OnDelivered(ctx, delivered(3)); err != nil || len(tg.sent) != 2 {
		t.Fatalf("a buyer who blocked the bot was asked later: %v, %d sent", err, len(tg.sent))
	}
	refunded := delivered(4)
	refunded.Status = state.OrderRefunded
	if err := rv.OnDelivered(ctx, refunded); err != nil || len(tg.sent) != 2 {
		t.Fatalf("a refunded order: %v, %d sent", err, len(tg.sent))
	}
}
