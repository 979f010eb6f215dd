package resellersim

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/resellersim/internal/wire"
)

// faults holds the injected failures and the rate-limit state. It is
// guarded by Sim.mu.
type faults struct {
	onRequest func(r *http.Request, body []byte)
	onCreated func(o OrderSnapshot)
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

	createScript []CreateStep

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

// takeCreateStep returns the next scripted step of an order-creating
// request, and whether there was one.
func (f *faults) takeCreateStep() (CreateStep, bool) {
	if len(f.createScript) == 0 {
		return CreateStep{}, false
	}
	st := f.createScript[0]
	f.createScript = f.createScript[1:]
	return st, true
}

// forcedRateLimit sets the headers of an injected 429 asking for a wait of
// retryAfter (whole seconds, at least 1) and returns its error.
func forcedRateLimit(now time.Time, limit int, retryAfter time.Duration, h http.Header) *wire.APIError {
	secs := ceilSeconds(retryAfter)
	shown := limit
	if shown <= 0 {
		shown = 60
	}
	h.Set("Retry-After", strconv.Itoa(secs))
	h.Set("X-RateLimit-Limit", strconv.Itoa(shown))
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(time.Duration(secs)*time.Second).Unix(), 10))
	return &wire.APIError{Status: http.StatusTooManyRequests, Type: "rate_limited", Msg: "rate limit exceeded"}
}

// rateCheck counts an authenticated request, sets the rate-limit headers and
// returns an error when the request is over the limit.
func (f *faults) rateCheck(now time.Time, limit int, window time.Duration, h http.Header) *wire.APIError {
	if f.forced429 > 0 {
		f.forced429--
		return forcedRateLimit(now, limit, f.forcedAfter, h)
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
		return &wire.APIError{Status: http.StatusTooManyRequests, Type: "rate_limited",
			Msg: "rate limit exceeded: " + strconv.Itoa(limit) + " requests per " + window.String()}
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

// OnOrderCreated registers f to be called with every order created, over
// HTTP or by PlaceOtherClientOrder, right after it is stored and before the
// answer is written (nil removes it). f runs without the Sim's lock and may
// call the Sim's methods. Tests use it to wait for the creation instead of
// sleeping, for example to give up on a CreatedThenHang request once the
// order exists.
func (s *Sim) OnOrderCreated(f func(o OrderSnapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.onCreated = f
}

// CreateCount returns how many order-creating requests have arrived,
// whatever their outcome.
func (s *Sim) CreateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.creates
}

// ClearFaults removes every pending injected failure, delay, forced 429 and
// scripted create step. The request and creation hooks and the create count
// are kept.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults
	f.failNext, f.failOn = 0, nil
	f.delayNext, f.pathDelays = 0, nil
	f.cutAfterCreate, f.failAfterCreate = 0, 0
	f.forced429 = 0
	f.createScript = nil
}

// CreateStep is what one order-creating request does when scripted with
// ScriptCreates. Make one with Created, RateLimited, RefusedWith,
// CutBeforeCreate, HangBeforeCreate, CreatedThenFail, CreatedThenCut or
// CreatedThenHang.
type CreateStep struct {
	create     bool          // the request is executed: the order is created and charged
	answer     createAnswer  // what the client gets
	status     int           // the status of answerStatus
	retryAfter time.Duration // the Retry-After of a 429
}

type createAnswer int

const (
	answerNormal createAnswer = iota // the order, or the 400 of an invalid request
	answerStatus                     // an error body with the step's status
	answerCut                        // the connection is closed without an answer
	answerHang                       // no answer until the client gives up
)

// Created is a create served normally: the order is created and returned
// (an invalid request gets its 400 as usual).
func Created() CreateStep { return CreateStep{create: true} }

// RateLimited answers 429 with Retry-After retryAfter (rounded up to whole
// seconds, at least 1) and the X-RateLimit-* headers; nothing is created.
func RateLimited(retryAfter time.Duration) CreateStep {
	return CreateStep{answer: answerStatus, status: http.StatusTooManyRequests, retryAfter: retryAfter}
}

// RefusedWith answers status (for example 502 from a gateway, or 503) with
// the spec's error body before the service executes anything: nothing is
// created. The client cannot tell it from CreatedThenFail(status).
func RefusedWith(status int) CreateStep {
	return CreateStep{answer: answerStatus, status: status}
}

// CutBeforeCreate closes the connection without an answer before the
// service executes anything: nothing is created. The client cannot tell it
// from CreatedThenCut.
func CutBeforeCreate() CreateStep { return CreateStep{answer: answerCut} }

// HangBeforeCreate holds the request without executing it until the client
// gives up (its timeout or cancellation); nothing is created. The client
// cannot tell it from CreatedThenHang.
func HangBeforeCreate() CreateStep { return CreateStep{answer: answerHang} }

// CreatedThenFail creates the order (the balance is charged) and then
// answers status (for example 502 or 504) with the spec's error body, as a
// gateway does when the service behind it timed out or crashed after
// committing. A request rejected with 400 creates nothing and gets its 400.
func CreatedThenFail(status int) CreateStep {
	return CreateStep{create: true, answer: answerStatus, status: status}
}

// CreatedThenCut creates the order (the balance is charged) and then closes
// the connection without an answer. A request rejected with 400 creates
// nothing and gets its 400.
func CreatedThenCut() CreateStep { return CreateStep{create: true, answer: answerCut} }

// CreatedThenHang creates the order (the balance is charged) and then holds
// the answer until the client gives up, which the client sees as its own
// timeout after sending. A request rejected with 400 creates nothing and
// gets its 400.
func CreatedThenHang() CreateStep { return CreateStep{create: true, answer: answerHang} }

// Creates reports whether the step executes the request (creates the order
// when the request is valid).
func (st CreateStep) Creates() bool { return st.create }

// String describes the step, for test messages.
func (st CreateStep) String() string {
	var ans string
	switch st.answer {
	case answerNormal:
		ans = "answered normally"
	case answerStatus:
		ans = "answered " + strconv.Itoa(st.status)
		if st.status == http.StatusTooManyRequests {
			ans += " Retry-After " + strconv.Itoa(ceilSeconds(st.retryAfter)) + "s"
		}
	case answerCut:
		ans = "connection cut"
	case answerHang:
		ans = "no answer until the client gives up"
	}
	if st.create {
		return "created, " + ans
	}
	return "not created, " + ans
}

// ScriptCreates appends steps to the script of order-creating requests: the
// next order-creating request (any product line, whatever its body) does
// steps[0], the one after steps[1], and so on; once the script is used up,
// creates are served as usual. For example "the next create answers 429
// with Retry-After 25s, creating nothing, then the one after creates the
// order but answers 502":
//
//	sim.ScriptCreates(resellersim.RateLimited(25*time.Second), resellersim.CreatedThenFail(http.StatusBadGateway))
//
// A scripted step is the whole fault of its request: FailNext, FailNextOn,
// CutAfterCreate and FailCreateAfterExecute are neither applied to it nor
// used up by it. Delays (DelayNext, SetDelay) still hold it, and a step that
// executes still passes authentication, the account status and the rate
// limit (Config.RateLimit, RateLimitNext) as a real request does. Every
// scripted request counts in CreateCount. ClearFaults drops what is left.
func (s *Sim) ScriptCreates(steps ...CreateStep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.createScript = append(s.faults.createScript, steps...)
}

// ScriptedCreatesLeft returns how many scripted steps have not been used yet.
func (s *Sim) ScriptedCreatesLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults.createScript)
}
