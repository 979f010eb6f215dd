// Package check holds the local checks the reseller client runs on a
// request's inputs before anything is built or sent, and the error they
// return, *ValidationError (exported by package reseller as an alias),
// which names the offending input by its wire name. The checks of one
// endpoint (quantities, months, currencies) stay with its request type in
// package reseller; these are the ones every endpoint shares.
package check
