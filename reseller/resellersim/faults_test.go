package resellersim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"shopbot/reseller/resellersim/simcatalog"
	"strings"
	"sync"
	"testing"
	"time"
)

var giftOrder = obj{"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1}

func TestFailNext(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.FailNext(2, http.StatusServiceUnavailable)
	e.wantError(e.send(e.key, http.MethodPost, "/gift-cards/order", giftOrder), http.StatusServiceUnavailable, "server_error")
	e.wantError(e.send(e.key, http.MethodGet, "/me", nil), http.StatusServiceUnavailable, "server_error")
	eq(t, "nothing executed", len(e.sim.Orders()), 0)
	eq(t, "creates seen", e.sim.CreateCount(), 1)
	e.get("/me")

	e.sim.FailNext(1, http.StatusBadRequest)
	e.wantError(e.send(e.key, http.MethodGet, "/me", nil), http.StatusBadRequest, "invalid_request")
	e.sim.FailNext(1, http.StatusTooManyRequests)
	r := e.send(e.key, http.MethodGet, "/me", nil)
	e.wantError(r, http.StatusTooManyRequests, "rate_limited")
	eq(t, "retry-after", r.header.Get("Retry-After"), "1")
	// Failures come before authentication.
	e.sim.FailNext(1, http.StatusBadGateway)
	e.wantError(e.send("", http.MethodGet, "/me", nil), http.StatusBadGateway, "server_error")
}

func TestFailNextOn(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.FailNextOn("/gift-cards/order", 1, http.StatusInternalServerError)
	e.sim.FailNextOn("/api/v1/orders", 1, http.StatusBadGateway)
	e.get("/me")
	e.get("/gift-cards/categories")
	e.wantError(e.send(e.key, http.MethodPost, "/gift-cards/order", giftOrder), http.StatusInternalServerError, "server_error")
	eq(t, "nothing executed", len(e.sim.Orders()), 0)
	n := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	e.wantError(e.send(e.key, http.MethodGet, path("/orders/%d", n), nil), http.StatusBadGateway, "server_error")
	e.get(path("/orders/%d", n))

	e.sim.FailNextOn("/orders", 5, http.StatusInternalServerError)
	e.sim.ClearFaults()
	e.get("/orders")
}

func TestCutAfterCreate(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.CutAfterCreate(1)
	body, _ := jsonBody(giftOrder)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/gift-cards/order", body)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := e.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the cut create answered %d", resp.StatusCode)
	}
	orders := e.sim.Orders()
	eq(t, "order exists", len(orders), 1)
	eq(t, "charged", e.sim.Balance().StringFixed(4), "989.6500")
	eq(t, "creates", e.sim.CreateCount(), 1)
	// The order is visible through the API for reconciliation.
	l := list(t, e.get("/orders")["data"])
	eq(t, "listed", num(t, l[0].(obj)["number"]), orders[0].Number)
	eq(t, "card", l[0].(obj)["card_id"], any(simcatalog.DemoGiftCard))
	// Only the next create is cut.
	e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	eq(t, "orders", len(e.sim.Orders()), 2)
}

func TestFailCreateAfterExecute(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.FailCreateAfterExecute(1, http.StatusBadGateway)
	e.get("/me") // not a create: unaffected
	e.wantError(e.send(e.key, http.MethodPost, "/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 100}),
		http.StatusBadGateway, "server_error")
	orders := e.sim.Orders()
	eq(t, "order exists", len(orders), 1)
	eq(t, "type", orders[0].Type, LineMessengerStars)
	eq(t, "charged", e.sim.Balance().StringFixed(4), "998.5000")
	// A create rejected with 400 does not use up the fault.
	e.sim.FailCreateAfterExecute(1, http.StatusInternalServerError)
	e.wantError(e.send(e.key, http.MethodPost, "/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 1}),
		http.StatusBadRequest, "invalid_request")
	e.wantError(e.send(e.key, http.MethodPost, "/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 100}),
		http.StatusInternalServerError, "server_error")
	eq(t, "orders", len(e.sim.Orders()), 2)
}

func TestDelays(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.DelayNext(1, 3*time.Millisecond)
	start := time.Now()
	e.get("/me")
	if d := time.Since(start); d < 3*time.Millisecond {
		t.Fatalf("delayed request took %v", d)
	}

	// A request whose context ends during the delay executes nothing.
	e.sim.DelayNext(1, time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	body, _ := jsonBody(giftOrder)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/gift-cards/order", body)
	req.Header.Set("Authorization", "Bearer "+e.key)
	if _, err := e.srv.Client().Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
	e.sim.ClearFaults() // in case the request never reached the server
	e.get("/me")
	eq(t, "nothing executed", len(e.sim.Orders()), 0)

	e.sim.SetDelay("/api/v1/me", 2*time.Millisecond)
	start = time.Now()
	e.get("/me")
	if d := time.Since(start); d < 2*time.Millisecond {
		t.Fatalf("path-delayed request took %v", d)
	}
	e.sim.SetDelay("/me", 0)
	e.sim.SetDelay("/gift-cards", time.Hour)
	e.get("/me")
	e.sim.ClearFaults()
	e.get("/gift-cards/categories")
}

func TestOnRequest(t *testing.T) {
	e := newEnv(t, Config{})
	var mu sync.Mutex
	var seen []string
	e.sim.OnRequest(func(r *http.Request, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+string(body))
		io.ReadAll(r.Body) // reading the body does not take it from the handler
		e.sim.CreateCount()
	})
	e.get("/me")
	e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	e.send("bad", http.MethodGet, "/me", nil)
	mu.Lock()
	defer mu.Unlock()
	eq(t, "count", len(seen), 3)
	eq(t, "first", seen[0], "GET /api/v1/me ")
	if !strings.HasPrefix(seen[1], "POST /api/v1/gift-cards/order {") || !strings.Contains(seen[1], simcatalog.DemoGiftCard) {
		t.Fatalf("create seen as %q", seen[1])
	}
	eq(t, "creates", e.sim.CreateCount(), 1)
	e.sim.OnRequest(nil)
	e.get("/me")
	eq(t, "removed", len(seen), 3)
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, Config{RateLimit: 3, RateWindow: time.Minute})
	reset := e.clock.Now().Add(time.Minute).Unix()
	for i := range 3 {
		r := e.send(e.key, http.MethodGet, "/me", nil)
		eq(t, "status", r.status, http.StatusOK)
		eq(t, "limit", r.header.Get("X-RateLimit-Limit"), "3")
		eq(t, "remaining", r.header.Get("X-RateLimit-Remaining"), path("%d", 2-i))
		eq(t, "reset", r.header.Get("X-RateLimit-Reset"), path("%d", reset))
		e.clock.Add(10 * time.Second)
	}
	r := e.send(e.key, http.MethodGet, "/gift-cards/categories", nil)
	e.wantError(r, http.StatusTooManyRequests, "rate_limited")
	eq(t, "retry-after", r.header.Get("Retry-After"), "30")
	eq(t, "remaining", r.header.Get("X-RateLimit-Remaining"), "0")
	eq(t, "limit", r.header.Get("X-RateLimit-Limit"), "3")
	eq(t, "reset", r.header.Get("X-RateLimit-Reset"), path("%d", reset))
	// Creates over the limit do nothing.
	e.wantError(e.send(e.key, http.MethodPost, "/gift-cards/order", giftOrder), http.StatusTooManyRequests, "rate_limited")
	eq(t, "orders", len(e.sim.Orders()), 0)
	// Unauthenticated requests answer 401 and do not count.
	e.wantError(e.send("", http.MethodGet, "/me", nil), http.StatusUnauthorized, "unauthorized")

	e.clock.Add(30 * time.Second)
	r = e.send(e.key, http.MethodGet, "/me", nil)
	eq(t, "new window", r.status, http.StatusOK)
	eq(t, "remaining", r.header.Get("X-RateLimit-Remaining"), "2")
}

func TestRateLimitNext(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.send(e.key, http.MethodGet, "/me", nil)
	eq(t, "no headers when off", r.header.Get("X-RateLimit-Limit"), "")
	e.sim.RateLimitNext(2, 1500*time.Millisecond)
	for range 2 {
		r = e.send(e.key, http.MethodPost, "/gift-cards/order", giftOrder)
		e.wantError(r, http.StatusTooManyRequests, "rate_limited")
		eq(t, "retry-after", r.header.Get("Retry-After"), "2")
		eq(t, "remaining", r.header.Get("X-RateLimit-Remaining"), "0")
		if r.header.Get("X-RateLimit-Limit") == "" || r.header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("headers %v", r.header)
		}
	}
	eq(t, "orders", len(e.sim.Orders()), 0)
	e.buyGiftCard(simcatalog.DemoGiftCard, 1)
}

func jsonBody(v any) (io.Reader, error) {
	b, err := json.Marshal(v)
	return bytes.NewReader(b), err
}
