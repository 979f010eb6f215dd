package resellersim

import (
	"github.com/shopspring/decimal"

	"shopbot/reseller/resellersim/internal/wire"
	"shopbot/reseller/resellersim/simcatalog"
)

// SetPrice sets the USD price of an item: a card_id, key_id, top-up offer_id,
// manual product id, a store sub_id (every region; "subID:REGION" for one
// region), "stars" (the price per star) or "premium-N" (the N-month plan).
// It reports whether the item exists.
func (s *Sim) SetPrice(itemID string, price decimal.Decimal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.SetPrice(itemID, price)
}

// SetStock sets the stock of a gift card (card_id) or game key (key_id) and
// reports whether the item exists.
func (s *Sim) SetStock(itemID string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.SetStock(itemID, n)
}

// SetHidden hides or shows an item: a gift category or card, a game or key,
// a top-up category or offer, a manual service or offer, or a store game
// (app_id as a string). Hidden items are never listed, answer 404 where
// fetched by id and cannot be ordered. It reports whether the item exists.
func (s *Sim) SetHidden(itemID string, hidden bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.SetHidden(itemID, hidden)
}

// Catalog returns a copy of the catalog as currently served (with changes
// made by SetPrice, SetStock and SetHidden, and stock taken by orders).
func (s *Sim) Catalog() *simcatalog.Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.Cat.Clone()
}

// catalogRoute serves a read-only catalog endpoint of the Sim's catalog.
func catalogRoute(h func(*simcatalog.Store, *wire.Request) (any, error)) handler {
	return func(s *Sim, q *wire.Request) (any, error) { return h(s.cat, q) }
}
