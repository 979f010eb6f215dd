package flows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// The flows reach the world only through the small interfaces of this
// file, in flows' own plain types: the catalog they browse, the store of
// the quotes they make, the per-buyer limit on costly actions and the
// upstream balance. Their implementations live outside flows (bot/catalog
// over the reseller client and the Redis store); tests use in-memory fakes.

// Catalog is the part of the upstream catalog the product lines browse.
// Every method also reports stale: the copy is old because the upstream
// failed, and the screen says prices may be out of date. An item the
// upstream does not know is an error wrapping ErrNotFound; a request it
// refuses as invalid, one wrapping ErrInvalid.
type Catalog interface {
	GiftCardBrands(ctx context.Context) ([]Brand, bool, error)
	GiftCardSearch(ctx context.Context, q string) ([]Category, bool, error)
	GiftCardOffers(ctx context.Context, categoryID string) (*Offers, bool, error)
	StarsPricing(ctx context.Context) (*StarsPricing, bool, error)
	PremiumPlans(ctx context.Context) ([]PremiumPlan, bool, error)
	// GameKeys lists the key catalog's games (Category: a game in a region
	// on a platform) matching q, region and platform ("" for any).
	GameKeys(ctx context.Context, q, region, platform string) ([]Category, bool, error)
	GameKeyOffers(ctx context.Context, gameID string) (*Offers, bool, error)
	GameKeyRestriction(ctx context.Context, gameID string) (*Restriction, bool, error)
	TopUpSearch(ctx context.Context, q string) ([]Category, bool, error)
	TopUpBrands(ctx context.Context) ([]Brand, bool, error)
	TopUpOffers(ctx context.Context, categoryID string) (*Offers, bool, error)
	ManualServices(ctx context.Context) ([]Category, bool, error)
	ManualServiceOffers(ctx context.Context, serviceID string) (*Offers, bool, error)
	// StoreGames is the store-gift top list (Category.ID: the app id).
	StoreGames(ctx context.Context) ([]Category, bool, error)
	StoreGiftEditions(ctx context.Context, appID int64) ([]Edition, bool, error)
	StoreRates(ctx context.Context) (*StoreRates, bool, error)
	// CheckStoreLogin reports whether a store login can be topped up. It
	// is never cached; callers count it against the rate limit.
	CheckStoreLogin(ctx context.Context, login string) (bool, error)
}

// Errors of the catalog, wrapped by an implementation's own.
var (
	ErrNotFound = errors.New("not in the catalog")
	ErrInvalid  = errors.New("refused as invalid")
)

// NotFound is a flow's own "not in the catalog" (an offer gone since it was
// listed).
func NotFound(what string) error { return fmt.Errorf("%w: %s", ErrNotFound, what) }

// Category is one browsable entry of a catalog list: a gift-card or top-up
// category, a manual service, a game with keys, a store game.
type Category struct {
	ID       string
	Name     string
	Region   string // "" when the upstream gives none
	Platform string // game keys
	Variant  string // in-game top-ups: the delivery mode, or ""
	Image    string // the upstream's image URL, or ""
}

// Brand groups a brand's regional categories.
type Brand struct {
	Name       string
	Categories []Category
}

// Offers is one category's items and what an order of them needs.
type Offers struct {
	CategoryID string
	Name       string
	Note       string // a remark or description, or ""
	Region     string // game keys
	Platform   string // game keys
	Restricted bool   // game keys: activation is region restricted
	Image      string // the category's image URL, or ""
	Fields     []Field
	Offers     []Offer
}

// Offer is one item that can be ordered: a card, a key, a top-up offer, a
// manual service's product.
type Offer struct {
	ID          string
	Name        string
	PriceUSD    decimal.Decimal // the upstream's unit price
	Stock       int             // cards and keys
	MinQuantity int             // cards and keys
	MaxQuantity int             // cards and keys
	// DeliveryMinutes is a manual product's expected delivery, or nil.
	DeliveryMinutes *int
	Note            string
}

// Field is a buyer input an order needs: the key the order carries, the
// label shown, the upstream's declared type ("" when none) and, for a
// choice, the allowed values.
type Field struct {
	Key     string
	Label   string
	Type    string
	Options []string
}

// MissingFields returns the keys of o's fields that have no non-empty value
// in values, in order.
func (o *Offers) MissingFields(values map[string]string) []string {
	var missing []string
	for _, f := range o.Fields {
		if values[f.Key] == "" {
			missing = append(missing, f.Key)
		}
	}
	return missing
}

// Offer returns the offer with id.
func (o *Offers) Offer(id string) (*Offer, bool) {
	for i := range o.Offers {
		if o.Offers[i].ID == id {
			return &o.Offers[i], true
		}
	}
	return nil, false
}

// StarsPricing is the price of one Star and the quantity bounds (0: none).
type StarsPricing struct {
	PricePerStar decimal.Decimal
	Min, Max     int
}

// PremiumPlan is one Premium duration and its price.
type PremiumPlan struct {
	Months   int
	PriceUSD decimal.Decimal
}

// Restriction says where a region-restricted key activates (country names).
type Restriction struct {
	Available   []string
	Unavailable []string
}

// Edition is a store game's gift edition and its price per region.
type Edition struct {
	ID      string
	Name    string
	Regions []RegionPrice
}

// RegionPrice is an edition's upstream price in one price region.
type RegionPrice struct {
	Region   string
	PriceUSD decimal.Decimal
}

// USD is the store top-up currency the rates are based on.
const USD = "USD"

// StoreRates are the store top-up currencies: how much of each one USD
// buys, and the smallest top-up in each (USD included). A currency without
// a minimum cannot be topped up now.
type StoreRates struct {
	Rates map[string]decimal.Decimal
	Min   map[string]decimal.Decimal
}

// Funds reports the upstream balance that pays for orders, cached briefly.
// When it cannot cover an item, buyers see the item as temporarily
// unavailable and are never asked to pay for it.
type Funds interface {
	UpstreamBalance(ctx context.Context) (decimal.Decimal, error)
}

// Quote is a priced offer the buyer confirmed or may confirm: what, for
// whom, how many and the price, valid until Expires.
type Quote struct {
	ID          string
	Line        string            // product line (Lines)
	Item        string            // the upstream item: card, key, offer, plan...
	Category    string            // the item's parent where the order needs it
	ItemName    string            // as shown to the buyer, unescaped
	Fields      map[string]string // buyer input the order endpoint needs
	For         string            // the recipient as shown to the buyer (@name, login, field answers)
	Quantity    int
	UpstreamUSD decimal.Decimal // what the upstream charges for the whole order
	ShopUSD     decimal.Decimal // what the buyer pays in USD
	Stars       int64           // what the buyer pays in Stars
	ChatID      int64
	UserID      int64
	Created     time.Time
	Expires     time.Time
	// A promo code applied to the quote: ShopUSD and Stars are the
	// discounted price, ListUSD and ListStars the price before it.
	PromoCode   string
	DiscountUSD decimal.Decimal
	ListUSD     decimal.Decimal
	ListStars   int64
	// Cancelled says the buyer cancelled the order on its summary: an
	// invoice for it is refused at pre-checkout.
	Cancelled bool
	// Lang is the language the buyer saw the quote in.
	Lang string
	// Watermark is the newest upstream order number the store had seen
	// when the quote was saved (state.Quote.Watermark); the store sets it.
	Watermark int64
}

// Expired reports whether the quote may no longer be paid at now.
func (q *Quote) Expired(now time.Time) bool { return !now.Before(q.Expires) }

// ErrNoQuote is what QuoteStore.Load returns (wrapped or not) for a quote
// that does not exist.
var ErrNoQuote = errors.New("no such quote")

// QuoteStore keeps quotes. Save gives a quote without an id one.
type QuoteStore interface {
	Save(ctx context.Context, q *Quote) error
	Load(ctx context.Context, id string) (*Quote, error)
}

// Promo is a promo code's terms, as a buyer may use it now.
type Promo struct {
	Code      string
	Percent   decimal.Decimal // off the order's price
	OffUSD    decimal.Decimal // fixed USD off the order
	Lines     []string        // product lines it applies to; none: all
	MinUSD    decimal.Decimal // smallest order price it applies to
	BelowCost bool            // may take the price below the upstream cost
}

// Why a promo code cannot be used, wrapped by an implementation's errors.
var (
	ErrPromoUnknown = errors.New("unknown promo code") // or disabled
	ErrPromoExpired = errors.New("promo code expired")
	ErrPromoUsedUp  = errors.New("promo code used up")
	ErrPromoUsed    = errors.New("promo code already used by this buyer")
)

// Promos finds promo codes. Promo returns the code's terms when the buyer
// may use it now, else an error wrapping one of ErrPromo*. It reserves
// nothing: checkout holds a use when the buyer pays.
type Promos interface {
	Promo(ctx context.Context, code string, userID int64) (*Promo, error)
}

// Limiter counts a buyer's actions that cost upstream calls: ok false
// denies one, and wait says when the next is allowed.
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, wait time.Duration, err error)
}
