// Package simcatalog is the product catalog of the upstream simulator
// (package resellersim): the catalog's types (Catalog and its entries),
// the built-in catalog (Default, default.go: deterministic, with
// out-of-stock and hidden items named by the Demo* ids), the Store a
// simulator serves (its own copy, indexed by id, which tests reprice,
// restock and hide), the read-only catalog endpoints (http.go) that render
// it in the API's wire format, and the checks of what an order may buy
// (orders.go: each line's create request against the catalog). Orders, the
// account and the faults stay in resellersim, which holds the lock around
// every use of a Store.
package simcatalog
