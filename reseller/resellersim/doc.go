// Package resellersim is an in-memory simulator of the upstream reseller store
// service, served over HTTP, used by tests and by the demo.
package resellersim
