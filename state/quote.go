package state

import (
	"errors"
	"time"

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
	// Cancelled says the buyer cancelled the order on its summary (they
	// were told nothing was charged): an invoice for it is refused at
	// pre-checkout.
	Cancelled bool `json:"cancelled,omitempty"`
	// Lang is the language the buyer saw the quote in ("" before it was
	// kept), for what the shop tells them of it later.
	Lang string `json:"lang,omitempty"`
	// Watermark is the newest upstream order number the store had seen
	// when the quote was saved (0: none yet). Every create for a payment
	// of the quote comes later, so the order made from it looks for an
	// earlier create of itself above this number: a bound that holds
	// however late the order is made (a payment update delivered again
	// after the store was restored on a backup that held the quote but
	// not the order). A build that does not know the field makes the
	// order as before, above the newest number seen then.
	Watermark int64 `json:"wm,omitempty"`
}

// Expired reports whether the quote may no longer be paid at now.
func (q *Quote) Expired(now time.Time) bool { return !now.Before(q.Expires) }

// ErrNoQuote is returned for a quote that does not exist (never made, or
// cleaned up long after it expired).
var ErrNoQuote = errors.New("no such quote")

// QuoteKeep is how long a quote stays in Redis after it expires, so that a
// late payment can still be matched to it.
const QuoteKeep = 24 * time.Hour
