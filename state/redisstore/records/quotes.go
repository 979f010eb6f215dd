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

// Quotes stores quotes as JSON under `<prefix>quote:<id>`, with the
// version of the record ("v", state.QuoteVersion) beside the quote's
// fields.
type Quotes struct {
	rdb  redis.UniversalClient
	p    string
	hint string // the orders' newest upstream number seen (Orders.UpstreamHint)
}

// NewQuotes returns the quote store under prefix.
func NewQuotes(rdb redis.UniversalClient, prefix string) *Quotes {
	return &Quotes{rdb: rdb, p: prefix + "quote:", hint: prefix + orderTag + "upstream:newest"}
}

// Save stores q, giving it an id when it has none, and its watermark (the
// newest upstream number seen now) when it has none. Redis drops it
// QuoteKeep after it expires.
func (s *Quotes) Save(ctx context.Context, q *state.Quote) error {
	if q.ID == "" {
		q.ID = newQuoteID()
	}
	if q.Watermark == 0 {
		n, err := s.rdb.Get(ctx, s.hint).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("save quote %s: read the upstream watermark: %w", q.ID, err)
		}
		q.Watermark = n
	}
	b, err := json.Marshal(storedQuote{V: state.QuoteVersion, Quote: q})
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

// storedQuote is a quote as stored: its version, then its fields.
type storedQuote struct {
	V int `json:"v,omitempty"`
	*state.Quote
}

// Load returns the quote id, or ErrNoQuote; a quote a newer build stored,
// in a version this one does not read, is state.ErrRecordTooNew (a payment
// for it is left to that build: this one would drop what it does not know
// of the quote when making its order).
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
	q := storedQuote{Quote: &state.Quote{}}
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("decode quote %s: %w", id, err)
	}
	if err := state.TooNew("quote "+id, q.V, state.QuoteVersion); err != nil {
		return nil, err
	}
	return q.Quote, nil
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
