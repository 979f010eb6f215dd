package reseller

import (
	"errors"
	"net/http"

	"shopbot/reseller/internal/check"
	"shopbot/reseller/internal/transport"
)

// Error types the API documents in error.type. Unknown types are kept as
// given in Error.Type.
const (
	ErrorTypeInvalidRequest = "invalid_request" // 400: bad query parameter or input
	ErrorTypeUnauthorized   = "unauthorized"    // 401: API key missing or invalid
	ErrorTypeForbidden      = "forbidden"       // 403: account suspended
	ErrorTypeNotFound       = "not_found"       // 404: resource not found
	ErrorTypeRateLimited    = "rate_limited"    // 429: rate limit exceeded
	ErrorTypeServerError    = "server_error"    // status not documented
)

// maxErrorSnippet caps how much of an undecodable error body is kept.
const maxErrorSnippet = transport.MaxErrorSnippet

// Error is an error answer of the API: a non-2xx status with the body
// {"error":{"type":...,"message":...}}. When the body is empty or not in that
// shape, Type is empty and Message holds the status text or a short snippet
// of the body (at most 256 bytes). Messages never contain the API key.
// Fields: Endpoint (the route template of the call, e.g. "GET
// /orders/{number}"), Status (the HTTP status code), Type (error.type, see
// the ErrorType constants, or "") and Message (error.message, or a snippet of
// an undecodable body).
type Error = transport.Error

// RateLimitError is a 429 answer. It wraps the *Error of the body, so
// errors.As(err, new(*Error)) also matches it. RetryAfter is the wait the
// Retry-After header asks for (seconds or an HTTP date; 0 when absent or
// unreadable); Headers holds every X-RateLimit-* header (their exact names
// are not documented upstream); Limit, Remaining and Reset are
// X-RateLimit-Limit, -Remaining and -Reset when present and numeric (a Reset
// above 10^9 is read as Unix seconds, a smaller one as seconds from now).
type RateLimitError = transport.RateLimitError

// OutcomeUnknownError reports an order-creating call whose effect is unknown:
// the request may have reached the upstream and an order may exist (timeout
// after sending, connection cut, 5xx, an undecodable 200 body). The client
// never retries such a call; the caller reconciles by listing orders.
// Endpoint is the route template of the call; Err the failure observed (an
// *Error for a 5xx, a network or decode error otherwise).
type OutcomeUnknownError = transport.OutcomeUnknownError

// ValidationError is a request rejected locally before anything was sent.
// Field names the offending input by its wire name (for example "quantity",
// "messenger_username", "limit", "fields.player_id"), Reason says what is
// wrong with it and Err is a sentinel it wraps, if any (ErrImageRefused).
type ValidationError = check.ValidationError

// invalid returns a *ValidationError.
func invalid(field, format string, args ...any) error {
	return check.Invalid(field, format, args...)
}

// IsNotFound reports whether err is an upstream 404 / not_found answer.
func IsNotFound(err error) bool {
	return hasAPIError(err, http.StatusNotFound, ErrorTypeNotFound)
}

// IsUnauthorized reports whether err is an upstream 401 / unauthorized
// answer (API key missing or invalid).
func IsUnauthorized(err error) bool {
	return hasAPIError(err, http.StatusUnauthorized, ErrorTypeUnauthorized)
}

// IsForbidden reports whether err is an upstream 403 / forbidden answer
// (account suspended).
func IsForbidden(err error) bool {
	return hasAPIError(err, http.StatusForbidden, ErrorTypeForbidden)
}

// IsInvalidRequest reports whether err is an upstream 400 / invalid_request
// answer. A local *ValidationError is not one; match it with errors.As.
func IsInvalidRequest(err error) bool {
	return hasAPIError(err, http.StatusBadRequest, ErrorTypeInvalidRequest)
}

// IsRateLimited reports whether err is an upstream 429 / rate_limited answer.
func IsRateLimited(err error) bool {
	return hasAPIError(err, http.StatusTooManyRequests, ErrorTypeRateLimited)
}

// IsOutcomeUnknown reports whether err is an *OutcomeUnknownError.
func IsOutcomeUnknown(err error) bool {
	var u *OutcomeUnknownError
	return errors.As(err, &u)
}

// hasAPIError matches an *Error by status or by type. An error whose outcome
// is unknown never matches: it is not a clean upstream answer.
func hasAPIError(err error, status int, typ string) bool {
	if IsOutcomeUnknown(err) {
		return false
	}
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == status || e.Type == typ
}
