package resellersim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"shopbot/reseller/resellersim/simcatalog"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for Config.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a Sim served over HTTP with a fake clock.
type env struct {
	t     *testing.T
	sim   *Sim
	srv   *httptest.Server
	clock *fakeClock
	base  string
	key   string
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	clock := newClock()
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	sim := New(cfg)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	key := cfg.APIKey
	if key == "" {
		key = "test-key"
	}
	return &env{t: t, sim: sim, srv: srv, clock: clock, base: srv.URL + "/api/v1", key: key}
}

// obj is a decoded JSON object.
type obj = map[string]any

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   obj
}

// send performs a request; body is JSON-encoded unless it is a string or nil.
func (e *env) send(key, method, path string, body any) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.do(req)
}

func (e *env) do(req *http.Request) response {
	e.t.Helper()
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&r.body); err != nil {
			e.t.Fatalf("%s %s: decoding %s: %v", req.Method, req.URL.Path, raw, err)
		}
	}
	return r
}

// get expects 200 and returns the body.
func (e *env) get(path string) obj {
	e.t.Helper()
	r := e.send(e.key, http.MethodGet, path, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET %s: status %d: %s", path, r.status, r.raw)
	}
	return r.body
}

// post expects 200 and returns the body.
func (e *env) post(path string, body any) obj {
	e.t.Helper()
	r := e.send(e.key, http.MethodPost, path, body)
	if r.status != http.StatusOK {
		e.t.Fatalf("POST %s: status %d: %s", path, r.status, r.raw)
	}
	return r.body
}

// wantError expects an error answer with the status and error type.
func (e *env) wantError(r response, status int, typ string) {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	er, ok := r.body["error"].(obj)
	if !ok || er["type"] != typ || er["message"] == "" || len(r.body) != 1 {
		e.t.Fatalf("error body %s, want type %s", r.raw, typ)
	}
}

// order creates an order of a gift card and returns its number.
func (e *env) buyGiftCard(card string, qty int) int {
	e.t.Helper()
	o := e.post("/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory, "card_id": card, "quantity": qty})
	return num(e.t, o["number"])
}

func num(t *testing.T, v any) int {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v is not an integer", v)
	}
	return int(i)
}

func list(t *testing.T, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%v (%T) is not an array", v, v)
	}
	return l
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func path(format string, args ...any) string { return fmt.Sprintf(format, args...) }
