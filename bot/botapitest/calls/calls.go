package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// File is an uploaded multipart file part.
type File struct {
	// Name is the part's file name.
	Name string
	// Data is the file content.
	Data []byte
}

// Call is one recorded request to the server.
type Call struct {
	// Method is the Bot API method, spelled as in the schema when known.
	Method string
	// Params are the request parameters decoded by their schema type:
	// int64 for Integer, float64 for Float, bool for Boolean, decoded JSON
	// (map[string]any, []any) for objects and arrays, string otherwise.
	// Uploaded files are in Files instead.
	Params map[string]any
	// Files are the uploaded file parts by form field name.
	Files map[string]File
	// At is when the request arrived (server clock).
	At time.Time
	// ErrorCode is the error_code the server answered with, 0 on success.
	ErrorCode int
	// Description is the error description, empty on success.
	Description string
	// Result is what the server answered on success: a Message for the
	// send and edit methods (with the id it got and its text as stored),
	// true for most others. Nil on errors.
	Result any
	// Raw is each parameter's text as sent: form or query text, or the JSON
	// text of a non-string value in a JSON body. Uploaded files are not in it.
	Raw map[string]string
}

// OK reports whether the server answered the call successfully.
func (c Call) OK() bool { return c.ErrorCode == 0 }

// Has reports whether the call has the parameter (a file part counts).
func (c Call) Has(name string) bool {
	if _, ok := c.Params[name]; ok {
		return true
	}
	_, ok := c.Files[name]
	return ok
}

// Int returns an integer parameter, or 0 when it is absent or not a number.
func (c Call) Int(name string) int64 {
	switch v := c.Params[name].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// Bool returns a boolean parameter, false when absent.
func (c Call) Bool(name string) bool {
	b, _ := c.Params[name].(bool)
	return b
}

// String returns a parameter as text: strings as they are, numbers and
// booleans formatted, objects and arrays as the JSON that was sent, "" when
// absent.
func (c Call) String(name string) string {
	switch v := c.Params[name].(type) {
	case nil:
		return ""
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return c.Raw[name]
}

// JSON decodes a parameter's JSON text (e.g. reply_markup) into v.
func (c Call) JSON(name string, v any) error {
	raw, ok := c.Raw[name]
	if !ok {
		return fmt.Errorf("botapitest: %s call has no parameter %s", c.Method, name)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return fmt.Errorf("botapitest: decode %s.%s: %w", c.Method, name, err)
	}
	return nil
}

// Log records calls and lets tests read and wait for them. It is safe for
// concurrent use.
type Log struct {
	mu      sync.Mutex
	calls   []Call
	resets  int64
	changed chan struct{} // closed and replaced when calls change
	subs    map[int]*subscriber
	nextSub int
	closed  bool
	done    chan struct{} // closed by Close
}

// NewLog returns an empty log.
func NewLog() *Log {
	return &Log{changed: make(chan struct{}), subs: map[int]*subscriber{}, done: make(chan struct{})}
}

// Record appends a call and hands it to the waiters and subscribers.
func (l *Log) Record(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
	close(l.changed)
	l.changed = make(chan struct{})
	for _, sub := range l.subs {
		sub.push(c)
	}
}

// Calls returns every call recorded since the log was made or since the
// last Reset, oldest first.
func (l *Log) Calls() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Call(nil), l.calls...)
}

// CallsFor returns the recorded calls of one method, oldest first.
func (l *Log) CallsFor(method string) []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.callsForLocked(method)
}

func (l *Log) callsForLocked(method string) []Call {
	var out []Call
	for _, c := range l.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Reset forgets the recorded calls.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
	l.resets++
	close(l.changed)
	l.changed = make(chan struct{})
}

// WaitFor waits until at least n calls of method are recorded and returns
// all recorded calls of that method. It fails when ctx ends or the log
// closes first.
func (l *Log) WaitFor(ctx context.Context, method string, n int) ([]Call, error) {
	for {
		l.mu.Lock()
		calls := l.callsForLocked(method)
		ch := l.changed
		l.mu.Unlock()
		if len(calls) >= n {
			return calls, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return calls, fmt.Errorf("botapitest: waiting for %d %s calls, got %d: %w", n, method, len(calls), ctx.Err())
		case <-l.done:
			return calls, fmt.Errorf("botapitest: waiting for %d %s calls, got %d: server closed", n, method, len(calls))
		}
	}
}

// WaitForCall waits for the first recorded call (earlier ones included)
// for which match returns true.
func (l *Log) WaitForCall(ctx context.Context, match func(Call) bool) (Call, error) {
	seen, gen := 0, int64(-1)
	for {
		l.mu.Lock()
		calls := l.calls
		ch := l.changed
		if gen != l.resets { // first round, or Reset ran
			seen, gen = 0, l.resets
		}
		l.mu.Unlock()
		for ; seen < len(calls); seen++ {
			if match(calls[seen]) {
				return calls[seen], nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Call{}, fmt.Errorf("botapitest: waiting for a matching call: %w", ctx.Err())
		case <-l.done:
			return Call{}, fmt.Errorf("botapitest: waiting for a matching call: server closed")
		}
	}
}

// Subscribe returns a channel that receives every call recorded from now on,
// in order, without ever blocking Record (a slow reader only delays its own
// channel), and a function that ends the subscription. The channel is
// closed when the subscription ends or the log closes.
func (l *Log) Subscribe() (<-chan Call, func()) {
	sub := &subscriber{
		signal: make(chan struct{}, 1),
		stop:   make(chan struct{}),
		out:    make(chan Call),
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		close(sub.out)
		return sub.out, func() {}
	}
	id := l.nextSub
	l.nextSub++
	l.subs[id] = sub
	l.mu.Unlock()
	go sub.pump()
	return sub.out, func() {
		l.mu.Lock()
		delete(l.subs, id)
		l.mu.Unlock()
		sub.cancel()
	}
}

// Close ends the waits (they fail with "server closed") and the
// subscriptions. It is safe to call more than once.
func (l *Log) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	subs := l.subs
	l.subs = map[int]*subscriber{}
	l.mu.Unlock()
	close(l.done)
	for _, sub := range subs {
		sub.cancel()
	}
}

// subscriber queues calls for one Subscribe channel.
type subscriber struct {
	mu       sync.Mutex
	queue    []Call
	signal   chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	out      chan Call
}

func (sub *subscriber) push(c Call) {
	sub.mu.Lock()
	sub.queue = append(sub.queue, c)
	sub.mu.Unlock()
	select {
	case sub.signal <- struct{}{}:
	default:
	}
}

func (sub *subscriber) cancel() { sub.stopOnce.Do(func() { close(sub.stop) }) }

func (sub *subscriber) pump() {
	defer close(sub.out)
	for {
		sub.mu.Lock()
		q := sub.queue
		sub.queue = nil
		sub.mu.Unlock()
		for _, c := range q {
			select {
			case sub.out <- c:
			case <-sub.stop:
				return
			}
		}
		select {
		case <-sub.signal:
		case <-sub.stop:
			return
		}
	}
}
