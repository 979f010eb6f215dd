// Package transport is the HTTP machinery under the reseller client: it
// builds and sends each request (the Bearer key, User-Agent and Accept
// headers, a per-attempt timeout), applies the retry policy of the call
// (capped exponential backoff with jitter, waiting out a 429's Retry-After
// up to a limit, never past the caller's deadline, never retrying an
// order-creating call after anything may have been sent), reads the
// Retry-After and X-RateLimit-* headers, decodes error answers into the
// error types the reseller package exports (Error, RateLimitError,
// OutcomeUnknownError, ValidationError, by type alias), hides the API key in
// every error, and fetches operator and catalog images through a guarded
// HTTP client (declared hosts only, public addresses only, checked redirects).
//
// It knows nothing of endpoints or wire types: package reseller holds the
// Client, its options, one method per endpoint and the resource types, and
// describes the retry rules callers rely on (see reseller.Client). Error
// texts keep the "reseller: " prefix, since callers see them as the client's.
package transport
