package resellersim

import (
	"net/http"
	"time"

	"shopbot/reseller/resellersim/faults"
)

// FailNext makes the next n requests, to any endpoint, fail with status
// before anything is executed. The body is the spec's error body with the
// type that goes with the status (server_error for 5xx).
func (s *Sim) FailNext(n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.FailNext(n, status)
}

// FailNextOn makes the next n requests whose path starts with pathPrefix
// (relative to /api/v1, for example "/gift-cards/order"; the full path also
// works) fail with status before anything is executed.
func (s *Sim) FailNextOn(pathPrefix string, n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.FailNextOn(pathPrefix, n, status)
}

// CutAfterCreate makes the next n order-creating requests create the order
// (the balance is charged) and then close the connection without an answer.
func (s *Sim) CutAfterCreate(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.CutAfterCreate(n)
}

// FailCreateAfterExecute makes the next n order-creating requests create the
// order (the balance is charged) and then answer status with an error body.
func (s *Sim) FailCreateAfterExecute(n int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.FailAfterCreate(n, status)
}

// DelayNext holds each of the next n requests for d before serving it. A
// request whose context ends first gets no answer and executes nothing.
func (s *Sim) DelayNext(n int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.DelayNext(n, d)
}

// SetDelay holds every request whose path starts with pathPrefix for d
// (d <= 0 removes the delay). The request context is respected.
func (s *Sim) SetDelay(pathPrefix string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.SetDelay(pathPrefix, d)
}

// RateLimitNext makes the next n authenticated requests answer 429 with a
// Retry-After of retryAfter (rounded up to whole seconds, at least 1).
func (s *Sim) RateLimitNext(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.RateLimitNext(n, retryAfter)
}

// OnRequest registers f to be called with every request and its body before
// it is served (nil removes it). f runs without the Sim's lock and may call
// the Sim's methods.
func (s *Sim) OnRequest(f func(r *http.Request, body []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRequest = f
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
	s.onCreated = f
}

// CreateCount returns how many order-creating requests have arrived,
// whatever their outcome.
func (s *Sim) CreateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates
}

// ClearFaults removes every pending injected failure, delay, forced 429 and
// scripted create step. The request and creation hooks and the create count
// are kept.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.Clear()
}

// ScriptCreates appends steps to the script of order-creating requests: the
// next order-creating request (any product line, whatever its body) does
// steps[0], the one after steps[1], and so on; once the script is used up,
// creates are served as usual. For example "the next create answers 429
// with Retry-After 25s, creating nothing, then the one after creates the
// order but answers 502":
//
//	sim.ScriptCreates(faults.RateLimited(25*time.Second), faults.CreatedThenFail(http.StatusBadGateway))
//
// A scripted step is the whole fault of its request: FailNext, FailNextOn,
// CutAfterCreate and FailCreateAfterExecute are neither applied to it nor
// used up by it. Delays (DelayNext, SetDelay) still hold it, and a step that
// executes still passes authentication, the account status and the rate
// limit (Config.RateLimit, RateLimitNext) as a real request does. Every
// scripted request counts in CreateCount. ClearFaults drops what is left.
func (s *Sim) ScriptCreates(steps ...faults.CreateStep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.Script(steps...)
}

// ScriptedCreatesLeft returns how many scripted steps have not been used yet.
func (s *Sim) ScriptedCreatesLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.ScriptLeft()
}
