package faults

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/reseller/resellersim/internal/wire"
)

// Plan holds the injected failures and the rate-limit state of a Sim. The
// zero value injects nothing. It is not safe for concurrent use: the Sim
// holds its lock around every use.
type Plan struct {
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

// NormPrefix makes a path prefix relative to wire.PathPrefix.
func NormPrefix(p string) string {
	if rel, ok := strings.CutPrefix(p, wire.PathPrefix); ok && (rel == "" || rel[0] == '/') {
		return rel
	}
	return p
}

// TakeFail returns the status of an injected failure for the request path
// (relative to PathPrefix), or 0.
func (f *Plan) TakeFail(rel string) int {
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

// TakeDelay returns how long to hold the request at rel.
func (f *Plan) TakeDelay(rel string) time.Duration {
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

// TakeAfterCreate reports what happens after an order was created.
func (f *Plan) TakeAfterCreate() (cut bool, status int) {
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

// TakeCreateStep returns the next scripted step of an order-creating
// request, and whether there was one.
func (f *Plan) TakeCreateStep() (CreateStep, bool) {
	if len(f.createScript) == 0 {
		return CreateStep{}, false
	}
	st := f.createScript[0]
	f.createScript = f.createScript[1:]
	return st, true
}

// ForcedRateLimit sets the headers of an injected 429 asking for a wait of
// retryAfter (whole seconds, at least 1) and returns its error.
func ForcedRateLimit(now time.Time, limit int, retryAfter time.Duration, h http.Header) *wire.APIError {
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

// RateCheck counts an authenticated request, sets the rate-limit headers and
// returns an error when the request is over the limit.
func (f *Plan) RateCheck(now time.Time, limit int, window time.Duration, h http.Header) *wire.APIError {
	if f.forced429 > 0 {
		f.forced429--
		return ForcedRateLimit(now, limit, f.forcedAfter, h)
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

// FailNext makes the next n requests fail with status.
func (f *Plan) FailNext(n, status int) { f.failNext, f.failStatus = n, status }

// FailNextOn makes the next n requests whose path (relative to
// wire.PathPrefix, or full) starts with pathPrefix fail with status.
func (f *Plan) FailNextOn(pathPrefix string, n, status int) {
	f.failOn = append(f.failOn, pathFault{prefix: NormPrefix(pathPrefix), n: n, status: status})
}

// CutAfterCreate cuts the connection after the next n creates.
func (f *Plan) CutAfterCreate(n int) { f.cutAfterCreate = n }

// FailAfterCreate answers status after the next n creates.
func (f *Plan) FailAfterCreate(n, status int) { f.failAfterCreate, f.failAfterStatus = n, status }

// DelayNext holds each of the next n requests for d.
func (f *Plan) DelayNext(n int, d time.Duration) { f.delayNext, f.delayFor = n, d }

// SetDelay holds every request whose path starts with pathPrefix for d
// (d <= 0 removes the delay).
func (f *Plan) SetDelay(pathPrefix string, d time.Duration) {
	if f.pathDelays == nil {
		f.pathDelays = map[string]time.Duration{}
	}
	p := NormPrefix(pathPrefix)
	if d <= 0 {
		delete(f.pathDelays, p)
		return
	}
	f.pathDelays[p] = d
}

// RateLimitNext answers the next n authenticated requests 429 with a
// Retry-After of retryAfter.
func (f *Plan) RateLimitNext(n int, retryAfter time.Duration) {
	f.forced429, f.forcedAfter = n, retryAfter
}

// Script appends steps to the script of order-creating requests.
func (f *Plan) Script(steps ...CreateStep) { f.createScript = append(f.createScript, steps...) }

// ScriptLeft returns how many scripted steps have not been used yet.
func (f *Plan) ScriptLeft() int { return len(f.createScript) }

// Clear removes every pending injected failure, delay, forced 429 and
// scripted create step; the rate-limit window is kept.
func (f *Plan) Clear() {
	f.failNext, f.failOn = 0, nil
	f.delayNext, f.pathDelays = 0, nil
	f.cutAfterCreate, f.failAfterCreate = 0, 0
	f.forced429 = 0
	f.createScript = nil
}

// CreateStep is what one order-creating request does when scripted with
// Sim.ScriptCreates. Make one with Created, RateLimited, RefusedWith,
// CutBeforeCreate, HangBeforeCreate, CreatedThenFail, CreatedThenCut or
// CreatedThenHang.
type CreateStep struct {
	create     bool          // the request is executed: the order is created and charged
	answer     Answer        // what the client gets
	status     int           // the status of AnswerStatus and AnswerGateway
	retryAfter time.Duration // the Retry-After of a 429
	late       time.Duration // AnswerGateway: how long after the answer the service creates the order
}

// Answer is what the client of a scripted create gets.
type Answer int

const (
	// AnswerNormal is the order, or the 400 of an invalid request.
	AnswerNormal Answer = iota
	// AnswerStatus is an error body with the step's status.
	AnswerStatus
	// AnswerCut closes the connection without an answer.
	AnswerCut
	// AnswerHang gives no answer until the client gives up.
	AnswerHang
	// AnswerGateway is a gateway's own error page (not the spec's error
	// body) with the step's status, answered while the service behind it
	// still works on the request: it creates the order later.
	AnswerGateway
)

// Created is a create served normally: the order is created and returned
// (an invalid request gets its 400 as usual).
func Created() CreateStep { return CreateStep{create: true} }

// RateLimited answers 429 with Retry-After retryAfter (rounded up to whole
// seconds, at least 1) and the X-RateLimit-* headers; nothing is created.
func RateLimited(retryAfter time.Duration) CreateStep {
	return CreateStep{answer: AnswerStatus, status: http.StatusTooManyRequests, retryAfter: retryAfter}
}

// RefusedWith answers status (for example 502 from a gateway, or 503) with
// the spec's error body before the service executes anything: nothing is
// created. The client cannot tell it from CreatedThenFail(status).
func RefusedWith(status int) CreateStep {
	return CreateStep{answer: AnswerStatus, status: status}
}

// CutBeforeCreate closes the connection without an answer before the
// service executes anything: nothing is created. The client cannot tell it
// from CreatedThenCut.
func CutBeforeCreate() CreateStep { return CreateStep{answer: AnswerCut} }

// HangBeforeCreate holds the request without executing it until the client
// gives up (its timeout or cancellation); nothing is created. The client
// cannot tell it from CreatedThenHang.
func HangBeforeCreate() CreateStep { return CreateStep{answer: AnswerHang} }

// CreatedThenFail creates the order (the balance is charged) and then
// answers status (for example 502 or 504) with the spec's error body, as a
// gateway does when the service behind it timed out or crashed after
// committing. A request rejected with 400 creates nothing and gets its 400.
func CreatedThenFail(status int) CreateStep {
	return CreateStep{create: true, answer: AnswerStatus, status: status}
}

// CreatedThenCut creates the order (the balance is charged) and then closes
// the connection without an answer. A request rejected with 400 creates
// nothing and gets its 400.
func CreatedThenCut() CreateStep { return CreateStep{create: true, answer: AnswerCut} }

// CreatedThenHang creates the order (the balance is charged) and then holds
// the answer until the client gives up, which the client sees as its own
// timeout after sending. A request rejected with 400 creates nothing and
// gets its 400.
func CreatedThenHang() CreateStep { return CreateStep{create: true, answer: AnswerHang} }

// GatewayThenCreated answers status (502, 504) at once with a gateway's
// error page, not the spec's error body, as a proxy that gave up on the
// service does; the service still executes the request and creates the
// order after late. The client cannot tell it from a gateway error of a
// request that never reached the service.
func GatewayThenCreated(status int, late time.Duration) CreateStep {
	return CreateStep{answer: AnswerGateway, status: status, late: late}
}

// Late is how long after a gateway's answer the service creates the order.
func (st CreateStep) Late() time.Duration { return st.late }

// Creates reports whether the step executes the request (creates the order
// when the request is valid).
func (st CreateStep) Creates() bool { return st.create }

// Answer is what the client gets.
func (st CreateStep) Answer() Answer { return st.answer }

// Status is the status of an AnswerStatus step.
func (st CreateStep) Status() int { return st.status }

// RetryAfter is the Retry-After of a 429 step.
func (st CreateStep) RetryAfter() time.Duration { return st.retryAfter }

// String describes the step, for test messages.
func (st CreateStep) String() string {
	var ans string
	switch st.answer {
	case AnswerNormal:
		ans = "answered normally"
	case AnswerStatus:
		ans = "answered " + strconv.Itoa(st.status)
		if st.status == http.StatusTooManyRequests {
			ans += " Retry-After " + strconv.Itoa(ceilSeconds(st.retryAfter)) + "s"
		}
	case AnswerCut:
		ans = "connection cut"
	case AnswerHang:
		ans = "no answer until the client gives up"
	case AnswerGateway:
		return "gateway answered " + strconv.Itoa(st.status) + ", created " + st.late.String() + " later"
	}
	if st.create {
		return "created, " + ans
	}
	return "not created, " + ans
}
