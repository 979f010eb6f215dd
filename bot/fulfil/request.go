package fulfil

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"shopbot/state"
)

// QuoteOf decodes the quote an order was bought from.
func QuoteOf(o *state.Order) (*state.Quote, error) {
	var q state.Quote
	if err := json.Unmarshal(o.Item, &q); err != nil {
		return nil, fmt.Errorf("order %d: decode quote: %w", o.ID, err)
	}
	if q.Line == "" {
		q.Line = o.Line
	}
	return &q, nil
}

func newAttemptID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
