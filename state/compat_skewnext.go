//go:build skewnext

package state

// A build of the next generation, for the version-skew test only
// (cmd/shopbot/skew_test.go builds it with -tags skewnext): it writes wallet
// top-ups in a version this generation's builds do not read, and runs a job
// kind they do not know (cmd/shopbot/skewnext.go). It accepts them beside
// it, as a generation that changed nothing they would mishandle does.
const (
	schemaGen    = 2
	minPeerGen   = 1
	topupVersion = 2
)
