// Package check holds the local checks the reseller client runs on a
// request's inputs before anything is built or sent, and the error they
// return, *ValidationError (exported by package reseller as an alias),
// which names the offending input by its wire name. These are the checks
// endpoints share (path ids, numbers, limits, required strings, buyer
// fields, order quantities); the rest of a request's checks stay with its
// type's Validate in package reseller. Truncate clips quoted input in error
// texts.
package check
