package flows

// What the external tests (package flows_test: the product lines driven
// over the simulator's catalog) name of the package's insides.

var (
	NewTestEngine = testEngine
	SamplePricing = testPricing
	Now           = now
)

// Steps of the product lines.
const (
	StepConfirm = stepConfirm
	StepFields  = stepFields
	MsUser      = msUser
	MsQty       = msQty
	MsPlan      = msPlan
	GcBrands    = gcBrands
	GcRegions   = gcRegions
	GcCards     = gcCards
	GcQty       = gcQty
	GkGames     = gkGames
	GkOffers    = gkOffers
	TuBrands    = tuBrands
	TuOffers    = tuOffers
	StLogin     = stLogin
	SgGames     = sgGames
	SgInvite    = sgInvite
)
