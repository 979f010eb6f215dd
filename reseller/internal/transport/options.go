package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Option configures a Transport (reseller.Option).
type Option func(*Transport) error

// Defaults of a new Transport (reseller documents them).
const (
	DefaultUserAgent    = "shopbot/1.0"
	DefaultTimeout      = 15 * time.Second
	DefaultMaxAttempts  = 4
	DefaultBackoffBase  = 250 * time.Millisecond
	DefaultBackoffMax   = 5 * time.Second
	DefaultMaxRetryWait = 30 * time.Second
	DefaultImageTimeout = 20 * time.Second
)

// WithHTTPClient is reseller.WithHTTPClient.
func WithHTTPClient(hc *http.Client) Option {
	return func(t *Transport) error {
		if hc == nil {
			return errors.New("reseller: WithHTTPClient: nil client")
		}
		t.HTTPClient = hc
		return nil
	}
}

// WithUserAgent is reseller.WithUserAgent.
func WithUserAgent(ua string) Option {
	return func(t *Transport) error {
		if strings.TrimSpace(ua) == "" || strings.ContainsAny(ua, "\r\n") {
			return errors.New("reseller: WithUserAgent: empty or multi-line user agent")
		}
		t.UserAgent = ua
		return nil
	}
}

// WithTimeout is reseller.WithTimeout.
func WithTimeout(d time.Duration) Option {
	return func(t *Transport) error {
		if d <= 0 {
			return errors.New("reseller: WithTimeout: timeout must be positive")
		}
		t.Timeout = d
		return nil
	}
}

// WithMaxAttempts is reseller.WithMaxAttempts.
func WithMaxAttempts(n int) Option {
	return func(t *Transport) error {
		if n < 1 {
			return errors.New("reseller: WithMaxAttempts: need at least 1 attempt")
		}
		t.MaxAttempts = n
		return nil
	}
}

// WithBackoff is reseller.WithBackoff.
func WithBackoff(base, max time.Duration) Option {
	return func(t *Transport) error {
		if base < 0 || max < base {
			return errors.New("reseller: WithBackoff: need 0 <= base <= max")
		}
		t.BackoffBase, t.BackoffMax = base, max
		return nil
	}
}

// WithMaxRetryWait is reseller.WithMaxRetryWait.
func WithMaxRetryWait(d time.Duration) Option {
	return func(t *Transport) error {
		if d < 0 {
			return errors.New("reseller: WithMaxRetryWait: negative wait")
		}
		t.MaxRetryWait = d
		return nil
	}
}

// WithClock is reseller.WithClock.
func WithClock(now func() time.Time) Option {
	return func(t *Transport) error {
		if now == nil {
			return errors.New("reseller: WithClock: nil clock")
		}
		t.Now = now
		return nil
	}
}

// WithSleep is reseller.WithSleep.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(t *Transport) error {
		if sleep == nil {
			return errors.New("reseller: WithSleep: nil sleep")
		}
		t.Sleep = sleep
		return nil
	}
}

// WithJitter is reseller.WithJitter.
func WithJitter(jitter func(d time.Duration) time.Duration) Option {
	return func(t *Transport) error {
		if jitter == nil {
			return errors.New("reseller: WithJitter: nil jitter")
		}
		t.Jitter = jitter
		return nil
	}
}

// WithObserver is reseller.WithObserver.
func WithObserver(observe func(endpoint string, status int, dur time.Duration)) Option {
	return func(t *Transport) error {
		t.Observer = observe
		return nil
	}
}

// WithMediaHosts is reseller.WithMediaHosts.
func WithMediaHosts(hosts ...string) Option {
	return func(t *Transport) error {
		for _, h := range hosts {
			h = strings.ToLower(strings.TrimSpace(h))
			if h == "" {
				continue
			}
			if strings.ContainsAny(h, "/?#@ ") {
				return fmt.Errorf("reseller: WithMediaHosts: %q is not a host or host:port", h)
			}
			t.MediaHosts = append(t.MediaHosts, h)
		}
		return nil
	}
}

// WithImageTimeout is reseller.WithImageTimeout.
func WithImageTimeout(d time.Duration) Option {
	return func(t *Transport) error {
		if d <= 0 {
			return errors.New("reseller: WithImageTimeout: timeout must be positive")
		}
		t.ImageTimeout = d
		return nil
	}
}
