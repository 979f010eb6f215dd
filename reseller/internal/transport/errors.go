package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/internal/check"
)

// MaxErrorSnippet caps how much of an undecodable error body is kept.
const MaxErrorSnippet = 256

// Error is an error answer of the API (reseller.Error documents it).
type Error struct {
	// Endpoint is the route template of the call, e.g. "GET /orders/{number}".
	Endpoint string
	// Status is the HTTP status code.
	Status int
	// Type is error.type from the body (see the ErrorType constants), or ""
	// when the body did not carry one.
	Type string
	// Message is error.message, or a snippet of an undecodable body.
	Message string
}

// Error describes the failure without revealing the API key.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("reseller: ")
	if e.Endpoint != "" {
		b.WriteString(e.Endpoint)
		b.WriteString(": ")
	}
	b.WriteString(strconv.Itoa(e.Status))
	if e.Type != "" {
		b.WriteString(" ")
		b.WriteString(e.Type)
	} else if t := http.StatusText(e.Status); t != "" {
		b.WriteString(" ")
		b.WriteString(t)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// RateLimitError is a 429 answer (reseller.RateLimitError documents it).
type RateLimitError struct {
	// Err is the decoded error body (Status 429).
	Err *Error
	// RetryAfter is the wait the Retry-After header asks for (seconds or an
	// HTTP date), or 0 when the header is absent or unreadable.
	RetryAfter time.Duration
	// Headers holds every X-RateLimit-* response header (canonical name to
	// first value); their exact names are not documented upstream.
	Headers map[string]string
	// Limit is X-RateLimit-Limit when present and numeric.
	Limit *int64
	// Remaining is X-RateLimit-Remaining when present and numeric.
	Remaining *int64
	// Reset is X-RateLimit-Reset when present and numeric: a value above
	// 10^9 is read as Unix seconds, a smaller one as seconds from now.
	Reset time.Time
}

// Error describes the rate limit and the requested wait.
func (e *RateLimitError) Error() string {
	msg := "reseller: rate limited"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return msg
}

// Unwrap returns the underlying *Error.
func (e *RateLimitError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// OutcomeUnknownError reports an order-creating call whose effect is
// unknown (reseller.OutcomeUnknownError documents it).
type OutcomeUnknownError struct {
	// Endpoint is the route template of the call, e.g. "POST /gift-cards/order".
	Endpoint string
	// Err is the failure observed (an *Error for a 5xx, a network or decode
	// error otherwise).
	Err error
}

// Error says that the outcome is unknown and why.
func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("reseller: %s: outcome unknown, an order may have been created: %v", e.Endpoint, e.Err)
}

// Unwrap returns the observed failure.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// ErrImageRefused is wrapped by the *ValidationError of an image URL that
// will not be fetched (reseller.ErrImageRefused documents it).
var ErrImageRefused = errors.New("image host refused")

// errorBody is the documented error shape.
type errorBody struct {
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// NewAPIError builds an *Error from a non-2xx answer. redact removes the key.
func NewAPIError(endpoint string, status int, body []byte, redact func(string) string) *Error {
	e := &Error{Endpoint: endpoint, Status: status}
	var eb errorBody
	if err := json.Unmarshal(body, &eb); err == nil && eb.Error != nil && (eb.Error.Type != "" || eb.Error.Message != "") {
		e.Type = redact(eb.Error.Type)
		e.Message = redact(eb.Error.Message)
		return e
	}
	// Redact before cutting, so that a cut cannot leave part of the key.
	e.Message = snippet([]byte(redact(string(body[:min(len(body), 4*MaxErrorSnippet)]))))
	return e
}

// snippet returns a printable, capped excerpt of an undecodable body.
func snippet(body []byte) string {
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(body), "?"))
	return check.Truncate(strings.TrimSpace(s), MaxErrorSnippet)
}

// newRateLimitError builds a *RateLimitError from a 429 answer.
func newRateLimitError(apiErr *Error, h http.Header, now time.Time, redact func(string) string) *RateLimitError {
	e := &RateLimitError{Err: apiErr, RetryAfter: parseRetryAfter(h.Get("Retry-After"), now)}
	for name, vals := range h {
		if len(vals) == 0 || !strings.HasPrefix(strings.ToLower(name), "x-ratelimit-") {
			continue
		}
		if e.Headers == nil {
			e.Headers = make(map[string]string)
		}
		e.Headers[http.CanonicalHeaderKey(name)] = redact(vals[0])
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Limit")), 10, 64); err == nil {
		e.Limit = &v
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Remaining")), 10, 64); err == nil {
		e.Remaining = &v
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil && v >= 0 {
		if v > 1e9 {
			e.Reset = time.Unix(v, 0)
		} else {
			e.Reset = now.Add(time.Duration(v) * time.Second)
		}
	}
	return e
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0 && secs <= 1e6) { // also rejects NaN
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// redactedError hides the API key in the message of a wrapped error.
type redactedError struct {
	msg string
	err error
}

// Error returns the message without the key.
func (e *redactedError) Error() string { return e.msg }

// Unwrap returns the original error.
func (e *redactedError) Unwrap() error { return e.err }
