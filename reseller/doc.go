// Package reseller is a typed client for the upstream reseller store API
// (summarized in docs/upstream.md): the account, balance transactions, orders, the eight
// product lines and the manual-service order chat.
//
// Create a Client with New and call one method per endpoint; every method
// takes a context first. Lists that page by cursor (GET /transactions and
// GET /orders) also have iterators, AllTransactions and AllOrders. For
// reconciling creates without clocks, NewestOrderNumber reads a watermark
// (order numbers grow with newness) and OrdersAbove lists, newest first,
// only the orders above one.
//
// Money is Money (a decimal.Decimal that reads and writes the API's 4-place
// strings), never a float. Requests are checked before sending: a bad input
// is a *ValidationError naming the field and nothing reaches the upstream.
// Upstream error answers are *Error (and *RateLimitError for 429); a failed
// order creation whose effect is unknown is an *OutcomeUnknownError, which
// the caller must reconcile instead of retrying (see Client for the retry
// rules). No error text ever contains the API key.
//
// This package holds the Client, its options, one method per endpoint (a
// file per product line) and the wire types. What lies under them is in
// internal packages, exported here by alias where callers see it:
// internal/transport sends the calls (auth headers, the retry policy and
// backoff, Retry-After and rate-limit headers, error decoding and key
// redaction, the guarded image download, the options' checks and
// defaults); internal/check holds the shared input checks and
// ValidationError; internal/rawjson reads the values whose shape the spec
// does not show (chat messages, delivered keys); internal/money is Money's
// 4-place codec.
package reseller
