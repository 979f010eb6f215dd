package botapitest

import (
	"context"

	"shopbot/bot/botapitest/calls"
)

func (s *Server) record(c calls.Call) { s.log.Record(c) }

// Calls returns every call recorded since the server started or since the
// last Reset, oldest first; requests with a wrong token are not recorded.
func (s *Server) Calls() []calls.Call { return s.log.Calls() }

// CallsFor returns the recorded calls of one method, oldest first.
func (s *Server) CallsFor(method string) []calls.Call { return s.log.CallsFor(method) }

// Reset forgets the recorded calls (and only them: chats, updates, payments
// and faults are kept).
func (s *Server) Reset() { s.log.Reset() }

// WaitFor waits until at least n calls of method are recorded and returns
// all recorded calls of that method. It fails when ctx ends or the server
// closes first.
func (s *Server) WaitFor(ctx context.Context, method string, n int) ([]calls.Call, error) {
	return s.log.WaitFor(ctx, method, n)
}

// WaitForCall waits for the first recorded call (earlier ones included)
// for which match returns true.
func (s *Server) WaitForCall(ctx context.Context, match func(calls.Call) bool) (calls.Call, error) {
	return s.log.WaitForCall(ctx, match)
}

// Subscribe returns a channel that receives every call recorded from now on,
// in order, without ever blocking the server (a slow reader only delays its
// own channel), and a function that ends the subscription. The channel is
// closed when the subscription ends or the server closes.
func (s *Server) Subscribe() (<-chan calls.Call, func()) { return s.log.Subscribe() }
