package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxResponseBody caps how much of a response body is read.
const maxResponseBody = 32 << 20

// Transport sends the calls of one reseller.Client. New fills it with the
// defaults, then the options set its fields; it is not changed after New.
type Transport struct {
	// Base is the absolute base URL without a trailing slash.
	Base         string
	BaseRedacted string // Base for messages
	// APIKey is sent as "Authorization: Bearer <key>" and hidden in errors.
	APIKey string

	HTTPClient   *http.Client
	UserAgent    string
	Timeout      time.Duration // bounds each attempt
	MaxAttempts  int           // of a retryable call, the first one included
	BackoffBase  time.Duration // wait before the second attempt, doubling
	BackoffMax   time.Duration // cap of the backoff, before jitter
	MaxRetryWait time.Duration // longest Retry-After waited out
	Now          func() time.Time
	Sleep        func(context.Context, time.Duration) error
	Jitter       func(time.Duration) time.Duration
	Observer     func(endpoint string, status int, dur time.Duration)

	// Operator and catalog images (images.go).
	MediaHosts   []string
	ImageTimeout time.Duration
	AllowAddr    func(netip.Addr) bool // tests: replaces the public-address check

	baseScheme string // "http" or "https"
	baseHost   string // lower-cased host name of the base URL
	baseAddr   string // host:port of the base URL, the default port filled in
	imageOnce  sync.Once
	images     *http.Client
}

// New returns a Transport for the API at baseURL authenticating with
// apiKey, configured by the defaults and then opts (see reseller.New).
func New(baseURL, apiKey string, opts ...Option) (*Transport, error) {
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
	t := &Transport{
		Base:         u.String(),
		BaseRedacted: u.Redacted(),
		APIKey:       apiKey,
		HTTPClient: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		UserAgent:    DefaultUserAgent,
		Timeout:      DefaultTimeout,
		MaxAttempts:  DefaultMaxAttempts,
		BackoffBase:  DefaultBackoffBase,
		BackoffMax:   DefaultBackoffMax,
		MaxRetryWait: DefaultMaxRetryWait,
		Now:          time.Now,
		Sleep:        SleepContext,
		Jitter:       EqualJitter,
		ImageTimeout: DefaultImageTimeout,
		baseScheme:   strings.ToLower(u.Scheme),
	}
	host, port := hostPort(u)
	t.baseHost, t.baseAddr = host, net.JoinHostPort(host, port)
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// SleepContext waits d or until ctx is done.
func SleepContext(ctx context.Context, d time.Duration) error {
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

// EqualJitter returns a random duration in [d/2, d].
func EqualJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

type retryWaitKey struct{}

// LimitRetryWait returns a context whose calls wait out a 429's Retry-After
// only up to d (when shorter than MaxRetryWait); see reseller.LimitRetryWait.
func LimitRetryWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, retryWaitKey{}, d)
}

// retryWaitLimit is the longest Retry-After the call of ctx waits out.
func (t *Transport) retryWaitLimit(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(retryWaitKey{}).(time.Duration); ok && d < t.MaxRetryWait {
		return d
	}
	return t.MaxRetryWait
}

// Policy says when a call may be retried.
type Policy int

const (
	// Safe: reads and check-login. Retried on 429, 5xx and network errors.
	Safe Policy = iota
	// Create: order-creating POSTs. Retried only when nothing was
	// written; a 429 is returned at once as a *RateLimitError (never waited
	// out); any other failure after sending becomes an *OutcomeUnknownError.
	Create
	// Unsent: chat POST. Retried only on 429 or when nothing was
	// written; other failures are returned as they are.
	Unsent
)

// Call is one logical API call.
type Call struct {
	Method      string
	Route       string // template for errors and metrics, e.g. "GET /orders/{number}"
	Path        string // escaped path below the base URL, e.g. "/orders/12"
	Query       url.Values
	Body        []byte
	ContentType string
	Policy      Policy
}

// attemptResult is what one HTTP attempt produced.
type attemptResult struct {
	status    int
	header    http.Header
	body      []byte
	err       error // transport error, or body read error of a 2xx
	maybeSent bool  // the request may have reached the server
}

// Get performs a GET.
func (t *Transport) Get(ctx context.Context, route, path string, q url.Values, out any) error {
	return t.Do(ctx, &Call{Method: http.MethodGet, Route: route, Path: path, Query: q, Policy: Safe}, out)
}

// PostJSON performs a POST with a JSON body.
func (t *Transport) PostJSON(ctx context.Context, route, path string, p Policy, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("reseller: %s: encoding request: %w", route, err)
	}
	return t.Do(ctx, &Call{Method: http.MethodPost, Route: route, Path: path, Body: body,
		ContentType: "application/json", Policy: p}, out)
}

// Do runs a call with the retry policy of the call and decodes a 2xx body
// into out (when out is not nil; a *[]byte receives the body as it is).
func (t *Transport) Do(ctx context.Context, cl *Call, out any) error {
	u := t.Base + cl.Path
	if len(cl.Query) > 0 {
		u += "?" + cl.Query.Encode()
	}
	for attempt := 1; ; attempt++ {
		r := t.attempt(ctx, cl, u)
		wait, retry, err := t.judge(ctx, cl, r, attempt, out)
		if !retry || attempt >= t.MaxAttempts {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err // the wait would outlive the caller's deadline
		}
		if serr := t.Sleep(ctx, wait); serr != nil {
			return t.RedactErr(fmt.Errorf("reseller: %s: %w (while retrying after: %v)", cl.Route, serr, err))
		}
	}
}

// judge turns an attempt into the call's error (nil on success) and says
// whether, and after how long, to retry.
func (t *Transport) judge(ctx context.Context, cl *Call, r attemptResult, attempt int, out any) (wait time.Duration, retry bool, err error) {
	switch {
	case r.err != nil:
		err = t.RedactErr(fmt.Errorf("reseller: %s: %w", cl.Route, r.err))
		if ctx.Err() != nil { // the caller gave up: never retry
			if cl.Policy == Create && r.maybeSent {
				return 0, false, &OutcomeUnknownError{Endpoint: cl.Route, Err: err}
			}
			return 0, false, err
		}
		if cl.Policy == Safe || !r.maybeSent {
			return t.backoff(attempt), true, err
		}
		if cl.Policy == Create {
			return 0, false, &OutcomeUnknownError{Endpoint: cl.Route, Err: err}
		}
		return 0, false, err

	case r.status == http.StatusTooManyRequests:
		apiErr := NewAPIError(cl.Route, r.status, r.body, t.Redact)
		rl := newRateLimitError(apiErr, r.header, t.Now(), t.Redact)
		if cl.Policy == Create {
			// Nothing was created: the caller decides when to try again.
			return 0, false, rl
		}
		wait = rl.RetryAfter
		if wait == 0 {
			wait = t.backoff(attempt)
		}
		if wait > t.retryWaitLimit(ctx) {
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
			err = t.RedactErr(fmt.Errorf("reseller: %s: decoding %d response: %w", cl.Route, r.status, derr))
			if cl.Policy == Create {
				return 0, false, &OutcomeUnknownError{Endpoint: cl.Route, Err: err}
			}
			return 0, false, err
		}
		return 0, false, nil

	case r.status >= 400 && r.status < 500:
		return 0, false, NewAPIError(cl.Route, r.status, r.body, t.Redact)

	default: // 5xx, or an unexpected 1xx/3xx
		apiErr := NewAPIError(cl.Route, r.status, r.body, t.Redact)
		switch {
		case cl.Policy == Create:
			return 0, false, &OutcomeUnknownError{Endpoint: cl.Route, Err: apiErr}
		case cl.Policy == Safe && r.status >= 500:
			return t.backoff(attempt), true, apiErr
		}
		return 0, false, apiErr
	}
}

// attempt performs one HTTP request.
func (t *Transport) attempt(ctx context.Context, cl *Call, u string) attemptResult {
	actx, cancel := context.WithTimeout(ctx, t.Timeout)
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
	if cl.Body != nil {
		body = bytes.NewReader(cl.Body)
	}
	req, err := http.NewRequestWithContext(actx, cl.Method, u, body)
	if err != nil {
		return attemptResult{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+t.APIKey)
	req.Header.Set("User-Agent", t.UserAgent)
	req.Header.Set("Accept", "application/json")
	if cl.ContentType != "" {
		req.Header.Set("Content-Type", cl.ContentType)
	}

	start := t.Now()
	resp, err := t.HTTPClient.Do(req)
	if err != nil {
		t.observe(cl.Route, 0, t.Now().Sub(start))
		// Provably unsent: a dial failure, or a tracing transport that never
		// began writing. A transport that does not report trace events is
		// assumed to have sent something.
		sent := !isDialError(err) && (wrote.Load() || !traced.Load())
		return attemptResult{err: err, maybeSent: sent}
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	resp.Body.Close()
	t.observe(cl.Route, resp.StatusCode, t.Now().Sub(start))
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
func (t *Transport) observe(route string, status int, d time.Duration) {
	if t.Observer != nil {
		t.Observer(route, status, d)
	}
}

// backoff returns the wait before attempt+1: capped exponential, jittered.
func (t *Transport) backoff(attempt int) time.Duration {
	d := t.BackoffBase
	for i := 1; i < attempt && d < t.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, t.BackoffMax)
	d = t.Jitter(d)
	return max(d, 0)
}

// isDialError reports whether err is a failure to connect (nothing sent).
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Redact removes the API key from s.
func (t *Transport) Redact(s string) string {
	if t.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, t.APIKey, "[REDACTED]")
}

// RedactErr hides the API key in err's message, keeping err unwrappable.
func (t *Transport) RedactErr(err error) error {
	if err == nil || t.APIKey == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, t.APIKey) {
		return err
	}
	return &redactedError{msg: t.Redact(msg), err: err}
}
