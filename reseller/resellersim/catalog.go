package resellersim

import (
	"github.com/shopspring/decimal"

	"shopbot/reseller/resellersim/catalog"
	"shopbot/reseller/resellersim/internal/wire"
)

// The catalog a Sim serves lives in package catalog; these aliases and
// constants keep its names here.
type (
	Catalog       = catalog.Catalog
	GiftCategory  = catalog.GiftCategory
	GiftCard      = catalog.GiftCard
	Country       = catalog.Country
	Game          = catalog.Game
	GameKey       = catalog.GameKey
	TopUpCategory = catalog.TopUpCategory
	TopUpField    = catalog.TopUpField
	TopUpOffer    = catalog.TopUpOffer
	ManualService = catalog.ManualService
	ManualField   = catalog.ManualField
	ManualOffer   = catalog.ManualOffer
	StoreGame     = catalog.StoreGame
	StoreEdition  = catalog.StoreEdition
	RegionPrice   = catalog.RegionPrice
	PremiumPlan   = catalog.PremiumPlan
)

// Well-known ids of the default catalog, for tests and the demo (see
// package catalog for what each one is).
const (
	DemoGiftCategory           = catalog.DemoGiftCategory
	DemoGiftCard               = catalog.DemoGiftCard
	DemoGiftCardLowStock       = catalog.DemoGiftCardLowStock
	DemoGiftCardOutOfStock     = catalog.DemoGiftCardOutOfStock
	DemoGiftCardHidden         = catalog.DemoGiftCardHidden
	DemoGiftCategoryHidden     = catalog.DemoGiftCategoryHidden
	DemoGiftCardMinQuantity    = catalog.DemoGiftCardMinQuantity
	DemoGame                   = catalog.DemoGame
	DemoGameKey                = catalog.DemoGameKey
	DemoGameKeyOutOfStock      = catalog.DemoGameKeyOutOfStock
	DemoGameKeyHidden          = catalog.DemoGameKeyHidden
	DemoGameRestricted         = catalog.DemoGameRestricted
	DemoGameRestrictedDeny     = catalog.DemoGameRestrictedDeny
	DemoGameHidden             = catalog.DemoGameHidden
	DemoTopUpCategory          = catalog.DemoTopUpCategory
	DemoTopUpOffer             = catalog.DemoTopUpOffer
	DemoTopUpCategorySelect    = catalog.DemoTopUpCategorySelect
	DemoTopUpCategoryTwoFields = catalog.DemoTopUpCategoryTwoFields
	DemoTopUpCategoryHidden    = catalog.DemoTopUpCategoryHidden
	DemoManualService          = catalog.DemoManualService
	DemoManualOffer            = catalog.DemoManualOffer
	DemoManualServiceNoChat    = catalog.DemoManualServiceNoChat
	DemoManualOfferNoChat      = catalog.DemoManualOfferNoChat
	DemoStoreApp               = catalog.DemoStoreApp
	DemoStoreSub               = catalog.DemoStoreSub
)

// DefaultCatalog returns the built-in catalog: deterministic, looking like the
// real service, with out-of-stock and hidden items (see the Demo* constants).
func DefaultCatalog() *Catalog { return catalog.Default() }

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
func (s *Sim) Catalog() *Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.Cat.Clone()
}

// catalogRoute serves a read-only catalog endpoint of the Sim's catalog.
func catalogRoute(h func(*catalog.Store, *wire.Request) (any, error)) handler {
	return func(s *Sim, q *wire.Request) (any, error) { return h(s.cat, q) }
}
