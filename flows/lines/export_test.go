package lines

import (
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/locales"
)

// What the external tests (package lines_test: the product lines driven
// through the engine over the simulator's catalog) name of the package's
// insides, and the scaffolding they share.

var (
	NewTestEngine = testEngine
	SamplePricing = testPricing
	Now           = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
)

// testEngine is an engine whose nonces are predictable (na, nb, ...), so
// that transcripts stay the same from run to run.
func testEngine() *flows.Engine {
	e := flows.NewEngine(nil, locales.En)
	n := 0
	e.NewNonce = func() string { n++; return "n" + string(rune('a'+n)) }
	return e
}

// testPricing is the shop's pricing of the transcripts: 10% markup, 5% and
// 50 cents on Premium, 0.013 USD a Star.
func testPricing() shop.Pricing {
	return shop.Pricing{
		Markup:       shop.Markup{Percent: decimal.NewFromInt(10)},
		Lines:        map[string]shop.Markup{"premium": {Percent: decimal.NewFromInt(5), Fixed: decimal.RequireFromString("0.50")}},
		StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true,
	}
}

// Steps of the product lines.
const (
	StepFields = stepFields
	MsUser     = msUser
	MsQty      = msQty
	MsPlan     = msPlan
	GcBrands   = gcBrands
	GcRegions  = gcRegions
	GcCards    = gcCards
	GcQty      = gcQty
	GkGames    = gkGames
	GkOffers   = gkOffers
	TuBrands   = tuBrands
	TuOffers   = tuOffers
	StLogin    = stLogin
	SgGames    = sgGames
	SgInvite   = sgInvite
)
