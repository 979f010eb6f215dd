package resellersim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// faults holds the injected failures and the rate-limit state. It is
// guarded by Sim.mu.
type faults struct {
	onRequest func(r *http.Request, body []byte)
	creates   int

	failNext   int
	failStatus int
	failOn     []pathFault

	delayNext  int
	delayFor   time.Duration
	pathDelays map[string]time.Duration

	cutAfterCreate  int
	failAfterCreate int
	failAfterStatus int

	forced429   int
	forcedAfter time.Duration

	windowStart time.Time
	count       int
}

type pathFault struct {
	prefix string
	n      int
	status int
}

// normPrefix makes a path prefix relative to PathPrefix.
func normPrefix(p string) string {
	if rel, ok := strings.CutPrefix(p, PathPrefix); ok && (rel == "" || rel[0] == '/') {
		return rel
	}
	return p
}

// takeFail returns the status of an injected failure for the request path
// (relative to PathPrefix), or 0.
func (f *faults) takeFail(rel string) int {
	for i := range f.failOn {
		pf := &f.failOn[i]
		if pf.n > 0 && strings.HasPrefix(rel, pf.prefix) {
			pf.n--
			return pf.status
		}
	}
	if f.failNext > 0 {
		f.failNext--
		return f.failStatus
	}
	return 0
}

// takeDelay returns how long to hold the request at rel.
func (f *faults) takeDelay(rel string) time.Duration {
	var d time.Duration
	if f.delayNext > 0 {
		f.delayNext--
		d += f.delayFor
	}
	best, bestDelay := -1, time.Duration(0)
	for p, pd := range f.pathDelays {
		if strings.HasPrefix(rel, p) && len(p) > best {
			best, bestDelay = len(p), pd
		}
	}
	return d + bestDelay
}

// takeAfterCreate reports what happens after an order was created.
func (f *faults) takeAfterCreate() (cut bool, status int) {
	if f.cutAfterCreate > 0 {
		f.cutAfterCreate--
		return true, 0
	}
	if f.failAfterCreate > 0 {
		f.failAfterCreate--
		return false, f.failAfterStatus
	}
	return false, 0
}

// rateCheck counts an authenticated request, sets the rate-limit headers and
// returns an error when the request is over the limit.
func (f *faults) rateCheck(now time.Time, limit int, window time.Duration, h http.Header) *apiError {
	if f.forced429 > 0 {
		f.forced429--
		secs := ceilSeconds(f.forcedAfter)
		shown := limit
		if shown <= 0 {
			shown = 60
		}
		h.Set("Retry-After", strconv.Itoa(secs))
		h.Set("X-RateLimit-Limit", strconv.Itoa(shown))
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(time.Duration(secs)*time.Second).Unix(), 10))
		return &apiError{status: http.StatusTooManyRequests, typ: "rate_limited", msg: "rate limit exceeded"}
	}
	if limit <= 0 {
		return nil
	}
	if f.windowStart.IsZero() || !now.Before(f.windowStart.Add(window)) {
		f.windowStart, f.count = now, 0
	}
	f.count++
	reset := f.windowStart.Add(window)
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, limit-f.count)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(ceilUnix(reset), 10))
	if f.count > limit {
		h.Set("Retry-After", strconv.Itoa(ceilSeconds(reset.Sub(now))))
		return &apiError{status: http.StatusTooManyRequests, typ: "rate_limited",
			msg: "rate limit exceeded: " + strconv.Itoa(limit) + " requests per " + window.String()}
	}
	return nil
}

// ceilSeconds rounds d up to whole seconds, at least 1.
func ceilSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

func ceilUnix(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// FailNext makes the next n requests, to any endpoint, fail with status
// before anything is executed. The body is the spec's error body with the
// type that goes with the status (server_error for 5xx).
func (s *Sim) FailNext(n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failNext, s.faults.failStatus = n, status
}

// FailNextOn makes the next n requests whose path starts with pathPrefix
// (relative to /api/v1, for example "/gift-cards/order"; the full path also
// works) fail with status before anything is executed.
func (s *Sim) FailNextOn(pathPrefix string, n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failOn = append(s.faults.failOn, pathFault{prefix: normPrefix(pathPrefix), n: n, status: status})
}

// CutAfterCreate makes the next n order-creating requests create the order
// (the balance is charged) and then close the connection without an answer.
func (s *Sim) CutAfterCreate(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.cutAfterCreate = n
}

// FailCreateAfterExecute makes the next n order-creating requests create the
// order (the balance is charged) and then answer status with an error body.
func (s *Sim) FailCreateAfterExecute(n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failAfterCreate, s.faults.failAfterStatus = n, status
}

// DelayNext holds each of the next n requests for d before serving it. A
// request whose context ends first gets no answer and executes nothing.
func (s *Sim) DelayNext(n int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.delayNext, s.faults.delayFor = n, d
}

// SetDelay holds every request whose path starts with pathPrefix for d
// (d <= 0 removes the delay). The request context is respected.
func (s *Sim) SetDelay(pathPrefix string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.pathDelays == nil {
		s.faults.pathDelays = map[string]time.Duration{}
	}
	p := normPrefix(pathPrefix)
	if d <= 0 {
		delete(s.faults.pathDelays, p)
		return
	}
	s.faults.pathDelays[p] = d
}

// RateLimitNext makes the next n authenticated requests answer 429 with a
// Retry-After of retryAfter (rounded up to whole seconds, at least 1).
func (s *Sim) RateLimitNext(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.forced429, s.faults.forcedAfter = n, retryAfter
}

// OnRequest registers f to be called with every request and its body before
// it is served (nil removes it). f runs without the Sim's lock and may call
// the Sim's methods.
func (s *Sim) OnRequest(f func(r *http.Request, body []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.onRequest = f
}

// CreateCount returns how many order-creating requests have arrived,
// whatever their outcome.
func (s *Sim) CreateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.creates
}

// ClearFaults removes every pending injected failure, delay and forced 429.
// The request hook and the create count are kept.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults
	f.failNext, f.failOn = 0, nil
	f.delayNext, f.pathDelays = 0, nil
	f.cutAfterCreate, f.failAfterCreate = 0, 0
	f.forced429 = 0
}
