package records

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"shopbot/state"
	"time"

	"github.com/redis/go-redis/v9"
)

// Quotes stores quotes as JSON under `<prefix>quote:<id>`.
type Quotes struct {
	rdb redis.UniversalClient
	p   string
}

// NewQuotes returns the quote store under prefix.
func NewQuotes(rdb redis.UniversalClient, prefix string) *Quotes {
	return &Quotes{rdb: rdb, p: prefix + "quote:"}
}

// Save stores q, giving it an id when it has none. Redis drops it
// QuoteKeep after it expires.
func (s *Quotes) Save(ctx context.Context, q *state.Quote) error {
	if q.ID == "" {
		q.ID = newQuoteID()
	}
	b, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("encode quote: %w", err)
	}
	ttl := time.Until(q.Expires) + state.QuoteKeep
	if ttl < state.QuoteKeep {
		ttl = state.QuoteKeep
	}
	if err := s.rdb.Set(ctx, s.p+q.ID, b, ttl).Err(); err != nil {
		return fmt.Errorf("save quote %s: %w", q.ID, err)
	}
	return nil
}

// Load returns the quote id, or ErrNoQuote.
func (s *Quotes) Load(ctx context.Context, id string) (*state.Quote, error) {
	if id == "" {
		return nil, state.ErrNoQuote
	}
	b, err := s.rdb.Get(ctx, s.p+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, state.ErrNoQuote
	}
	if err != nil {
		return nil, fmt.Errorf("load quote %s: %w", id, err)
	}
	var q state.Quote
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("decode quote %s: %w", id, err)
	}
	return &q, nil
}

func newQuoteID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var b [12]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b[:])
}
