//go:build !skewnext

package state

// The generation of this build (compat.go).
const (
	schemaGen    = 1
	minPeerGen   = 0
	topupVersion = 1
)
