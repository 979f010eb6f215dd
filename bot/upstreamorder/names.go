package upstreamorder

import (
	"encoding/json"
	"fmt"

	"shopbot/locales"
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

// RequestOf is the upstream request of the quote order o was bought
// from.
func RequestOf(o *state.Order) (*Request, error) {
	q, err := QuoteOf(o)
	if err != nil {
		return nil, err
	}
	return Build(q)
}

// ItemName is what the buyer bought, as they saw it.
//
// Names the shop wrote itself (Stars, Premium, store top-ups) are written
// again in lang, so a buyer who switched language reads them in it; upstream
// names are shown as the upstream gave them.
func ItemName(lang locales.Lang, o *state.Order) string {
	q, err := QuoteOf(o)
	if err != nil {
		return o.Line
	}
	if l := byID[q.Line]; l != nil && l.name != nil {
		if n := l.name(lang, q); n != "" {
			return n
		}
	}
	if q.ItemName != "" {
		return q.ItemName
	}
	return o.Line
}

// Recipient is who received the order, as the buyer typed it, or "" (for
// lines whose answers are not repeated; see line.recipient).
func Recipient(o *state.Order) string {
	if l := byID[o.Line]; l == nil || !l.recipient {
		return ""
	}
	if q, err := QuoteOf(o); err == nil {
		return q.For
	}
	return ""
}
