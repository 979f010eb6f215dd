package reseller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"shopbot/reseller/internal/check"
	"shopbot/reseller/internal/transport"
)

// Defaults of a new Client.
const (
	// DefaultUserAgent is the User-Agent header sent unless WithUserAgent is given.
	DefaultUserAgent = transport.DefaultUserAgent
	// DefaultTimeout bounds each HTTP attempt unless WithTimeout is given.
	DefaultTimeout = transport.DefaultTimeout
	// DefaultMaxAttempts is the number of attempts of a retryable call
	// (the first try included) unless WithMaxAttempts is given.
	DefaultMaxAttempts = transport.DefaultMaxAttempts
	// DefaultBackoffBase is the wait before the second attempt; it doubles
	// per attempt up to DefaultBackoffMax (before jitter).
	DefaultBackoffBase = transport.DefaultBackoffBase
	// DefaultBackoffMax caps the exponential backoff.
	DefaultBackoffMax = transport.DefaultBackoffMax
	// DefaultMaxRetryWait is the longest Retry-After the client waits out by
	// itself; a longer one is returned to the caller as a *RateLimitError.
	DefaultMaxRetryWait = transport.DefaultMaxRetryWait
)

// Client talks to the reseller API. It is safe for concurrent use. Create it
// with New.
//
// Every request carries "Authorization: Bearer <key>", a User-Agent and
// "Accept: application/json", and each attempt is bounded by the per-call
// timeout (WithTimeout) as well as by the caller's context.
//
// Retries (at most WithMaxAttempts attempts, capped exponential backoff with
// jitter between them, never past the context's deadline):
//   - Reads (every GET) and POST /store-topup/check-login are retried on
//     429, 5xx and network errors.
//   - Order-creating POSTs are retried only when nothing of the request was
//     written (connection refused, DNS failure). A 429 is never waited out
//     inside the call: it is returned at once as a *RateLimitError carrying
//     RetryAfter. Nothing was created, so the caller decides when to try
//     again (and a deadline the caller counts from the answer is not spent
//     inside the call). Any other failure (timeout or connection cut after
//     sending, 5xx, an undecodable 2xx body, or the context ending after
//     sending) is returned as *OutcomeUnknownError: an order may exist, so
//     the caller reconciles via Orders instead of retrying. A 4xx (429
//     included) is a plain *Error or *RateLimitError, never outcome-unknown:
//     nothing was created.
//   - The chat POST is retried only on 429 or when nothing was written.
//
// On reads, check-login and the chat POST a 429 is waited out for its
// Retry-After (or a backoff when absent); a Retry-After longer than
// WithMaxRetryWait ends the call at once with the *RateLimitError. No error
// string ever contains the API key.
type Client struct {
	tr *transport.Transport // requests, retries, errors, images
}

// Option configures a Client in New.
type Option = transport.Option

// WithHTTPClient sets the HTTP client used for API requests. The default
// client does not follow redirects (an API answer is never a redirect, and a
// followed POST would turn into a GET). DownloadChatImage does not use it:
// operator images go through the client's own guarded transport.
func WithHTTPClient(hc *http.Client) Option { return transport.WithHTTPClient(hc) }

// WithUserAgent sets the User-Agent header (default "shopbot/1.0").
func WithUserAgent(ua string) Option { return transport.WithUserAgent(ua) }

// WithTimeout bounds each HTTP attempt (default 15s). The caller's context
// still bounds the whole call, retries included.
func WithTimeout(d time.Duration) Option { return transport.WithTimeout(d) }

// WithMaxAttempts sets how many attempts a retryable call makes, the first
// one included (default 4). 1 disables retries.
func WithMaxAttempts(n int) Option { return transport.WithMaxAttempts(n) }

// WithBackoff sets the exponential backoff between attempts: base before the
// second attempt, doubling up to max (defaults 250ms and 5s), before jitter.
func WithBackoff(base, max time.Duration) Option { return transport.WithBackoff(base, max) }

// LimitRetryWait returns a context whose calls wait out a 429's
// Retry-After only up to d (when shorter than the client's
// WithMaxRetryWait): a caller holding something others wait for, such as
// a placement slot, would rather get the *RateLimitError at once, let go
// and come back later than wait for the limit to lift.
func LimitRetryWait(ctx context.Context, d time.Duration) context.Context {
	return transport.LimitRetryWait(ctx, d)
}

// WithMaxRetryWait sets the longest Retry-After the client waits out before
// retrying a 429 (default 30s). A longer requested wait ends the call with a
// *RateLimitError so the caller can reschedule. It does not apply to
// order-creating calls, which return every 429 at once.
func WithMaxRetryWait(d time.Duration) Option { return transport.WithMaxRetryWait(d) }

// WithClock sets the clock used for durations reported to the observer and
// for reading Retry-After dates and X-RateLimit-Reset.
func WithClock(now func() time.Time) Option { return transport.WithClock(now) }

// WithSleep sets how the client waits between attempts. The function must
// return early with an error when ctx is done.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return transport.WithSleep(sleep)
}

// WithJitter sets the function applied to each backoff wait (not to a
// Retry-After wait). The default returns a random value in [d/2, d].
func WithJitter(jitter func(d time.Duration) time.Duration) Option {
	return transport.WithJitter(jitter)
}

// WithObserver sets a function called after every HTTP attempt with the
// route template (for example "GET /orders/{number}"), the status code (0
// when no response arrived) and the attempt's duration. It suits metrics.
func WithObserver(observe func(endpoint string, status int, dur time.Duration)) Option {
	return transport.WithObserver(observe)
}

// New returns a Client for the API at baseURL (an absolute http or https URL
// ending in the path prefix /api/v1; a trailing slash is tolerated),
// authenticating with apiKey.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	tr, err := transport.New(baseURL, apiKey, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{tr: tr}, nil
}

// String describes the client without revealing the API key.
func (c *Client) String() string {
	return fmt.Sprintf("reseller.Client{base: %s, key: [REDACTED]}", c.tr.BaseRedacted)
}

// GoString is like String, so %#v does not print the key either.
func (c *Client) GoString() string { return c.String() }

// Retry policies of the calls (see Client).
const (
	policySafe   = transport.Safe
	policyCreate = transport.Create
	policyUnsent = transport.Unsent
)

// getJSON performs a GET and decodes the answer into a new T: the one body
// of every GET endpoint method.
func getJSON[T any](ctx context.Context, c *Client, route, path string, q url.Values) (*T, error) {
	out := new(T)
	if err := c.tr.Get(ctx, route, path, q, out); err != nil {
		return nil, err
	}
	return out, nil
}

// postJSON performs a POST with a JSON body and decodes the answer into a
// new T.
func postJSON[T any](ctx context.Context, c *Client, route, path string, p transport.Policy, in any) (*T, error) {
	out := new(T)
	if err := c.tr.PostJSON(ctx, route, path, p, in, out); err != nil {
		return nil, err
	}
	return out, nil
}

// createOrder performs an order-creating POST and checks that the answer is
// an order.
func (c *Client) createOrder(ctx context.Context, route, path string, in any) (*Order, error) {
	o, err := postJSON[Order](ctx, c, route, path, policyCreate, in)
	if err != nil {
		return nil, err
	}
	if o.Number < 1 {
		return nil, &OutcomeUnknownError{Endpoint: route, Err: errors.New("response carries no order number")}
	}
	return o, nil
}

// List is a catalog list answer (object "list"): Data holds the entries.
type List[T any] struct {
	// Object is "list".
	Object string `json:"object"`
	// Data holds the entries.
	Data []T `json:"data"`
	// Total is the number of matching entries where the endpoint reports it
	// (gift-card and top-up categories and brands, game keys); 0 otherwise.
	Total int `json:"total"`
}

// checkPage checks the page size (1 to 100, 0 for the server's default) and
// the cursor (at least 1, 0 for the first page) of a cursor-paged list.
func checkPage(limit int, cursor int64) error {
	if err := check.Limit(limit, 100); err != nil {
		return err
	}
	if cursor < 0 {
		return invalid("cursor", "must be at least 1, got %d", cursor)
	}
	return nil
}

// pageQuery returns the query of a cursor-paged list's page size and
// cursor, leaving out zero values.
func pageQuery(limit int, cursor int64) url.Values {
	q := url.Values{}
	setLimit(q, limit)
	if cursor != 0 {
		q.Set("cursor", strconv.FormatInt(cursor, 10))
	}
	return q
}

// setQ sets the search parameter q when not empty.
func setQ(q url.Values, s string) {
	if s != "" {
		q.Set("q", s)
	}
}

// setLimit sets the page size limit when not 0 (0 leaves the server's
// default).
func setLimit(q url.Values, n int) {
	if n != 0 {
		q.Set("limit", strconv.Itoa(n))
	}
}
