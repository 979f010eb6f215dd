package reseller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a new Client.
const (
	// DefaultUserAgent is the User-Agent header sent unless WithUserAgent is given.
	DefaultUserAgent = "shopbot/1.0"
	// DefaultTimeout bounds each HTTP attempt unless WithTimeout is given.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxAttempts is the number of attempts of a retryable call
	// (the first try included) unless WithMaxAttempts is given.
	DefaultMaxAttempts = 4
	// DefaultBackoffBase is the wait before the second attempt; it doubles
	// per attempt up to DefaultBackoffMax (before jitter).
	DefaultBackoffBase = 250 * time.Millisecond
	// DefaultBackoffMax caps the exponential backoff.
	DefaultBackoffMax = 5 * time.Second
	// DefaultMaxRetryWait is the longest Retry-After the client waits out by
	// itself; a longer one is returned to the caller as a *RateLimitError.
	DefaultMaxRetryWait = 30 * time.Second
)

// maxResponseBody caps how much of a response body is read.
const maxResponseBody = 32 << 20

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
	base         string // absolute base URL without a trailing slash
	baseRedacted string
	apiKey       string

	httpClient   *http.Client
	userAgent    string
	timeout      time.Duration
	maxAttempts  int
	backoffBase  time.Duration
	backoffMax   time.Duration
	maxRetryWait time.Duration
	now          func() time.Time
	sleep        func(context.Context, time.Duration) error
	jitter       func(time.Duration) time.Duration
	observer     func(endpoint string, status int, dur time.Duration)

	// Operator images (media.go).
	baseScheme   string // "http" or "https"
	baseHost     string // lower-cased host name of the base URL
	baseAddr     string // host:port of the base URL, the default port filled in
	mediaHosts   []string
	imageTimeout time.Duration
	imageOnce    sync.Once
	images       *http.Client
	allowAddr    func(netip.Addr) bool // tests: replaces publicAddr
}

// Option configures a Client in New.
type Option func(*Client) error

// WithHTTPClient sets the HTTP client used for API requests. The default
// client does not follow redirects (an API answer is never a redirect, and a
// followed POST would turn into a GET). DownloadChatImage does not use it:
// operator images go through the client's own guarded transport.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("reseller: WithHTTPClient: nil client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithUserAgent sets the User-Agent header (default "shopbot/1.0").
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if strings.TrimSpace(ua) == "" || strings.ContainsAny(ua, "\r\n") {
			return errors.New("reseller: WithUserAgent: empty or multi-line user agent")
		}
		c.userAgent = ua
		return nil
	}
}

// WithTimeout bounds each HTTP attempt (default 15s). The caller's context
// still bounds the whole call, retries included.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return errors.New("reseller: WithTimeout: timeout must be positive")
		}
		c.timeout = d
		return nil
	}
}

// WithMaxAttempts sets how many attempts a retryable call makes, the first
// one included (default 4). 1 disables retries.
func WithMaxAttempts(n int) Option {
	return func(c *Client) error {
		if n < 1 {
			return errors.New("reseller: WithMaxAttempts: need at least 1 attempt")
		}
		c.maxAttempts = n
		return nil
	}
}

// WithBackoff sets the exponential backoff between attempts: base before the
// second attempt, doubling up to max (defaults 250ms and 5s), before jitter.
func WithBackoff(base, max time.Duration) Option {
	return func(c *Client) error {
		if base < 0 || max < base {
			return errors.New("reseller: WithBackoff: need 0 <= base <= max")
		}
		c.backoffBase, c.backoffMax = base, max
		return nil
	}
}

type retryWaitKey struct{}

// LimitRetryWait returns a context whose calls wait out a 429's
// Retry-After only up to d (when shorter than the client's
// WithMaxRetryWait): a caller holding something others wait for, such as
// a placement slot, would rather get the *RateLimitError at once, let go
// and come back later than wait for the limit to lift.
func LimitRetryWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, retryWaitKey{}, d)
}

// retryWaitLimit is the longest Retry-After the call of ctx waits out.
func (c *Client) retryWaitLimit(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(retryWaitKey{}).(time.Duration); ok && d < c.maxRetryWait {
		return d
	}
	return c.maxRetryWait
}

// WithMaxRetryWait sets the longest Retry-After the client waits out before
// retrying a 429 (default 30s). A longer requested wait ends the call with a
// *RateLimitError so the caller can reschedule. It does not apply to
// order-creating calls, which return every 429 at once.
func WithMaxRetryWait(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return errors.New("reseller: WithMaxRetryWait: negative wait")
		}
		c.maxRetryWait = d
		return nil
	}
}

// WithClock sets the clock used for durations reported to the observer and
// for reading Retry-After dates and X-RateLimit-Reset.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return errors.New("reseller: WithClock: nil clock")
		}
		c.now = now
		return nil
	}
}

// WithSleep sets how the client waits between attempts. The function must
// return early with an error when ctx is done.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) error {
		if sleep == nil {
			return errors.New("reseller: WithSleep: nil sleep")
		}
		c.sleep = sleep
		return nil
	}
}

// WithJitter sets the function applied to each backoff wait (not to a
// Retry-After wait). The default returns a random value in [d/2, d].
func WithJitter(jitter func(d time.Duration) time.Duration) Option {
	return func(c *Client) error {
		if jitter == nil {
			return errors.New("reseller: WithJitter: nil jitter")
		}
		c.jitter = jitter
		return nil
	}
}

// WithObserver sets a function called after every HTTP attempt with the
// route template (for example "GET /orders/{number}"), the status code (0
// when no response arrived) and the attempt's duration. It suits metrics.
func WithObserver(observe func(endpoint string, status int, dur time.Duration)) Option {
	return func(c *Client) error {
		c.observer = observe
		return nil
	}
}

// New returns a Client for the API at baseURL (an absolute http or https URL
// ending in the path prefix /api/v1; a trailing slash is tolerated),
// authenticating with apiKey.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, errors.New("reseller: base URL is not a valid URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("reseller: base URL %q must be an absolute http(s) URL", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("reseller: base URL %q must not carry a query or fragment", u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	if apiKey == "" {
		return nil, errors.New("reseller: empty API key")
	}
	for _, r := range apiKey {
		if r <= ' ' || r == 0x7f {
			return nil, errors.New("reseller: API key contains spaces or control characters")
		}
	}
	c := &Client{
		base:         u.String(),
		baseRedacted: u.Redacted(),
		apiKey:       apiKey,
		httpClient: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		userAgent:    DefaultUserAgent,
		timeout:      DefaultTimeout,
		maxAttempts:  DefaultMaxAttempts,
		backoffBase:  DefaultBackoffBase,
		backoffMax:   DefaultBackoffMax,
		maxRetryWait: DefaultMaxRetryWait,
		now:          time.Now,
		sleep:        sleepContext,
		jitter:       equalJitter,
		imageTimeout: DefaultChatImageTimeout,
	}
	c.baseScheme = strings.ToLower(u.Scheme)
	host, port := hostPort(u)
	c.baseHost, c.baseAddr = host, net.JoinHostPort(host, port)
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// String describes the client without revealing the API key.
func (c *Client) String() string {
	return fmt.Sprintf("reseller.Client{base: %s, key: [REDACTED]}", c.baseRedacted)
}

// GoString is like String, so %#v does not print the key either.
func (c *Client) GoString() string { return c.String() }

// sleepContext waits d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// equalJitter returns a random duration in [d/2, d].
func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// policy says when a call may be retried.
type policy int

const (
	// policySafe: reads and check-login. Retried on 429, 5xx and network errors.
	policySafe policy = iota
	// policyCreate: order-creating POSTs. Retried only when nothing was
	// written; a 429 is returned at once as a *RateLimitError (never waited
	// out); any other failure after sending becomes an *OutcomeUnknownError.
	policyCreate
	// policyUnsent: chat POST. Retried only on 429 or when nothing was
	// written; other failures are returned as they are.
	policyUnsent
)

// call is one logical API call.
type call struct {
	method      string
	route       string // template for errors and metrics, e.g. "GET /orders/{number}"
	path        string // escaped path below the base URL, e.g. "/orders/12"
	query       url.Values
	body        []byte
	contentType string
	policy      policy
}

// attemptResult is what one HTTP attempt produced.
type attemptResult struct {
	status    int
	header    http.Header
	body      []byte
	err       error // transport error, or body read error of a 2xx
	maybeSent bool  // the request may have reached the server
}

// get performs a GET.
func (c *Client) get(ctx context.Context, route, path string, q url.Values, out any) error {
	return c.do(ctx, &call{method: http.MethodGet, route: route, path: path, query: q, policy: policySafe}, out)
}

// postJSON performs a POST with a JSON body.
func (c *Client) postJSON(ctx context.Context, route, path string, p policy, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("reseller: %s: encoding request: %w", route, err)
	}
	return c.do(ctx, &call{method: http.MethodPost, route: route, path: path, body: body,
		contentType: "application/json", policy: p}, out)
}

// createOrder performs an order-creating POST and checks that the answer is
// an order.
func (c *Client) createOrder(ctx context.Context, route, path string, in any) (*Order, error) {
	o := new(Order)
	if err := c.postJSON(ctx, route, path, policyCreate, in, o); err != nil {
		return nil, err
	}
	if o.Number < 1 {
		return nil, &OutcomeUnknownError{Endpoint: route, Err: errors.New("response carries no order number")}
	}
	return o, nil
}

// do runs a call with the retry policy of the call and decodes a 2xx body
// into out (when out is not nil).
func (c *Client) do(ctx context.Context, cl *call, out any) error {
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	for attempt := 1; ; attempt++ {
		r := c.attempt(ctx, cl, u)
		wait, retry, err := c.judge(ctx, cl, r, attempt, out)
		if !retry || attempt >= c.maxAttempts {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err // the wait would outlive the caller's deadline
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return c.redactErr(fmt.Errorf("reseller: %s: %w (while retrying after: %v)", cl.route, serr, err))
		}
	}
}

// judge turns an attempt into the call's error (nil on success) and says
// whether, and after how long, to retry.
func (c *Client) judge(ctx context.Context, cl *call, r attemptResult, attempt int, out any) (wait time.Duration, retry bool, err error) {
	switch {
	case r.err != nil:
		err = c.redactErr(fmt.Errorf("reseller: %s: %w", cl.route, r.err))
		if ctx.Err() != nil { // the caller gave up: never retry
			if cl.policy == policyCreate && r.maybeSent {
				return 0, false, &OutcomeUnknownError{Endpoint: cl.route, Err: err}
			}
			return 0, false, err
		}
		if cl.policy == policySafe || !r.maybeSent {
			return c.backoff(attempt), true, err
		}
		if cl.policy == policyCreate {
			return 0, false, &OutcomeUnknownError{Endpoint: cl.route, Err: err}
		}
		return 0, false, err

	case r.status == http.StatusTooManyRequests:
		apiErr := newAPIError(cl.route, r.status, r.body, c.redact)
		rl := newRateLimitError(apiErr, r.header, c.now(), c.redact)
		if cl.policy == policyCreate {
			// Nothing was created: the caller decides when to try again.
			return 0, false, rl
		}
		wait = rl.RetryAfter
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		if wait > c.retryWaitLimit(ctx) {
			return 0, false, rl
		}
		return wait, true, rl

	case r.status >= 200 && r.status < 300:
		if out == nil {
			return 0, false, nil
		}
		if b, ok := out.(*[]byte); ok { // the caller reads the body itself
			*b = r.body
			return 0, false, nil
		}
		if derr := json.Unmarshal(r.body, out); derr != nil {
			err = c.redactErr(fmt.Errorf("reseller: %s: decoding %d response: %w", cl.route, r.status, derr))
			if cl.policy == policyCreate {
				return 0, false, &OutcomeUnknownError{Endpoint: cl.route, Err: err}
			}
			return 0, false, err
		}
		return 0, false, nil

	case r.status >= 400 && r.status < 500:
		return 0, false, newAPIError(cl.route, r.status, r.body, c.redact)

	default: // 5xx, or an unexpected 1xx/3xx
		apiErr := newAPIError(cl.route, r.status, r.body, c.redact)
		switch {
		case cl.policy == policyCreate:
			return 0, false, &OutcomeUnknownError{Endpoint: cl.route, Err: apiErr}
		case cl.policy == policySafe && r.status >= 500:
			return c.backoff(attempt), true, apiErr
		}
		return 0, false, apiErr
	}
}

// attempt performs one HTTP request.
func (c *Client) attempt(ctx context.Context, cl *call, u string) attemptResult {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	// traced: the transport reports trace events at all (it asked for a
	// connection); wrote: it started writing the request on a connection.
	var traced, wrote atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		GetConn:      func(string) { traced.Store(true) },
		WroteHeaders: func() { wrote.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) },
	})

	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(actx, cl.method, u, body)
	if err != nil {
		return attemptResult{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if cl.contentType != "" {
		req.Header.Set("Content-Type", cl.contentType)
	}

	start := c.now()
	resp, err := c.httpClient.Do(req)
	if err != nil {
		c.observe(cl.route, 0, c.now().Sub(start))
		// Provably unsent: a dial failure, or a tracing transport that never
		// began writing. A transport that does not report trace events is
		// assumed to have sent something.
		sent := !isDialError(err) && (wrote.Load() || !traced.Load())
		return attemptResult{err: err, maybeSent: sent}
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	resp.Body.Close()
	c.observe(cl.route, resp.StatusCode, c.now().Sub(start))
	if rerr == nil && len(data) > maxResponseBody {
		rerr = fmt.Errorf("response body larger than %d bytes", maxResponseBody)
	}
	r := attemptResult{status: resp.StatusCode, header: resp.Header, body: data, maybeSent: true}
	if rerr != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		r.err = fmt.Errorf("reading %d response: %w", resp.StatusCode, rerr)
	}
	return r
}

// observe reports an attempt to the observer, if any.
func (c *Client) observe(route string, status int, d time.Duration) {
	if c.observer != nil {
		c.observer(route, status, d)
	}
}

// backoff returns the wait before attempt+1: capped exponential, jittered.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.backoffBase
	for i := 1; i < attempt && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	d = c.jitter(d)
	return max(d, 0)
}

// isDialError reports whether err is a failure to connect (nothing sent).
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// redact removes the API key from s.
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[REDACTED]")
}

// redactErr hides the API key in err's message, keeping err unwrappable.
func (c *Client) redactErr(err error) error {
	if err == nil || c.apiKey == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, c.apiKey) {
		return err
	}
	return &redactedError{msg: c.redact(msg), err: err}
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

// pathID validates a string path parameter and escapes it.
func pathID(field, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", invalid(field, "is required")
	}
	if id == "." || id == ".." {
		return "", invalid(field, "must not be %q", id)
	}
	return url.PathEscape(id), nil
}

// checkNumber validates a positive integer identifier.
func checkNumber(field string, n int64) error {
	if n < 1 {
		return invalid(field, "must be at least 1, got %d", n)
	}
	return nil
}

// checkLimit validates an optional limit (0 means the server default).
func checkLimit(limit, hi int) error {
	if limit != 0 && (limit < 1 || limit > hi) {
		return invalid("limit", "must be between 1 and %d, got %d", hi, limit)
	}
	return nil
}

// required validates a required string.
func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid(field, "is required")
	}
	return nil
}

// checkFields validates a buyer-fields map: keys and values non-empty.
func checkFields(fields map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		if strings.TrimSpace(k) == "" {
			return invalid("fields", "has an empty key")
		}
		if strings.TrimSpace(v) == "" {
			return invalid("fields."+k, "is empty")
		}
	}
	return nil
}

// paginate walks cursor pages: fetch returns one page's items, has_more and
// next_cursor. It stops on has_more=false or a null next_cursor, and fails
// instead of looping when a cursor comes back twice.
func paginate[T any](ctx context.Context, start int64,
	fetch func(ctx context.Context, cursor int64) ([]T, bool, *int64, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cursor := start
		seen := map[int64]bool{}
		for {
			items, more, next, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if !more || next == nil {
				return
			}
			if *next < 1 || *next == cursor || seen[*next] {
				yield(zero, fmt.Errorf("reseller: pagination does not advance (next_cursor %d after cursor %d)", *next, cursor))
				return
			}
			seen[cursor] = true
			cursor = *next
		}
	}
}
