package state

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"
)

// Quote is a priced offer to one buyer: what they asked for and what it
// costs, valid until Expires. Checkout pays a quote; an expired one is
// priced again instead.
type Quote struct {
	ID          string            `json:"id"`
	Line        string            `json:"line"`               // product line (flows.Lines)
	Item        string            `json:"item"`               // the upstream item: card, key, offer, plan...
	Category    string            `json:"category,omitempty"` // the item's parent where the order needs it
	ItemName    string            `json:"item_name"`          // as shown to the buyer, unescaped
	Fields      map[string]string `json:"fields,omitempty"`   // buyer input the order endpoint needs
	For         string            `json:"for,omitempty"`      // the recipient as shown to the buyer (@name, login, field answers)
	Quantity    int               `json:"quantity"`
	UpstreamUSD decimal.Decimal   `json:"upstream_usd"` // what the upstream charges for the whole order
	ShopUSD     decimal.Decimal   `json:"shop_usd"`     // what the buyer pays in USD
	Stars       int64             `json:"stars"`        // what the buyer pays in Stars
	ChatID      int64             `json:"chat_id"`
	UserID      int64             `json:"user_id"`
	Created     time.Time         `json:"created"`
	Expires     time.Time         `json:"expires"`
	// A promo code applied to the quote: ShopUSD and Stars are the
	// discounted price, ListUSD and ListStars the price before it.
	PromoCode   string          `json:"promo,omitempty"`
	DiscountUSD decimal.Decimal `json:"discount_usd,omitzero"`
	ListUSD     decimal.Decimal `json:"list_usd,omitzero"`
	ListStars   int64           `json:"list_stars,omitempty"`
}

// Expired reports whether the quote may no longer be paid at now.
func (q *Quote) Expired(now time.Time) bool { return !now.Before(q.Expires) }

// ErrNoQuote is returned for a quote that does not exist (never made, or
// cleaned up long after it expired).
var ErrNoQuote = errors.New("no such quote")

// QuoteKeep is how long a quote stays in Redis after it expires, so that a
// late payment can still be matched to it.
const QuoteKeep = 24 * time.Hour

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
func (s *Quotes) Save(ctx context.Context, q *Quote) error {
	if q.ID == "" {
		q.ID = newQuoteID()
	}
	b, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("encode quote: %w", err)
	}
	ttl := time.Until(q.Expires) + QuoteKeep
	if ttl < QuoteKeep {
		ttl = QuoteKeep
	}
	if err := s.rdb.Set(ctx, s.p+q.ID, b, ttl).Err(); err != nil {
		return fmt.Errorf("save quote %s: %w", q.ID, err)
	}
	return nil
}

// Load returns the quote id, or ErrNoQuote.
func (s *Quotes) Load(ctx context.Context, id string) (*Quote, error) {
	if id == "" {
		return nil, ErrNoQuote
	}
	b, err := s.rdb.Get(ctx, s.p+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNoQuote
	}
	if err != nil {
		return nil, fmt.Errorf("load quote %s: %w", id, err)
	}
	var q Quote
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
