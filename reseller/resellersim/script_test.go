package resellersim

import (
	"context"
	"errors"
	"net/http"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/simcatalog"
	"testing"
	"time"
)

// sendCtx performs a create with ctx and returns the status (0 when no
// answer arrived) and the transport error.
func (e *env) sendCtx(ctx context.Context, method, p string, body any) (response, error) {
	e.t.Helper()
	rd, err := jsonBody(body)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, method, e.base+p, rd)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	resp.Body.Close()
	return response{status: resp.StatusCode, header: resp.Header}, nil
}

func TestScriptCreates(t *testing.T) {
	e := newEnv(t, Config{})
	topup := obj{"category_id": simcatalog.DemoTopUpCategory, "offer_id": simcatalog.DemoTopUpOffer, "fields": obj{"player_id": "5551234"}}

	// A sequence placement must survive: 429 with Retry-After 25s creating nothing, then
	// a create that creates the order and answers 502, then normal again.
	e.sim.ScriptCreates(faults.RateLimited(25*time.Second), faults.CreatedThenFail(http.StatusBadGateway))
	eq(t, "left", e.sim.ScriptedCreatesLeft(), 2)
	r := e.send(e.key, http.MethodPost, "/top-ups/order", topup)
	e.wantError(r, http.StatusTooManyRequests, "rate_limited")
	eq(t, "retry-after", r.header.Get("Retry-After"), "25")
	eq(t, "remaining", r.header.Get("X-RateLimit-Remaining"), "0")
	if r.header.Get("X-RateLimit-Limit") == "" || r.header.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("headers %v", r.header)
	}
	eq(t, "nothing created by the 429", len(e.sim.Orders()), 0)
	// Scripted creates do not use up the other faults.
	e.sim.FailNextOn("/top-ups/order", 1, http.StatusServiceUnavailable)
	e.wantError(e.send(e.key, http.MethodPost, "/top-ups/order", topup), http.StatusBadGateway, "server_error")
	eq(t, "created by the 502", len(e.sim.Orders()), 1)
	eq(t, "charged", e.sim.Balance().StringFixed(4), "999.0100")
	eq(t, "left", e.sim.ScriptedCreatesLeft(), 0)
	e.wantError(e.send(e.key, http.MethodPost, "/top-ups/order", topup), http.StatusServiceUnavailable, "server_error")
	e.post("/top-ups/order", topup)
	eq(t, "orders", len(e.sim.Orders()), 2)
	eq(t, "creates", e.sim.CreateCount(), 4)

	// Any line takes the next step; an invalid request gets its 400 and
	// creates nothing even when its step would create.
	e.sim.ScriptCreates(faults.CreatedThenCut(), faults.Created(), faults.RefusedWith(http.StatusBadGateway), faults.CutBeforeCreate())
	if _, err := e.sendCtx(t.Context(), http.MethodPost, "/gift-cards/order", giftOrder); err == nil {
		t.Fatal("the cut create answered")
	}
	eq(t, "created by the cut", len(e.sim.Orders()), 3)
	e.wantError(e.send(e.key, http.MethodPost, "/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory}), http.StatusBadRequest, "invalid_request")
	eq(t, "nothing created by the 400", len(e.sim.Orders()), 3)
	e.wantError(e.send(e.key, http.MethodPost, "/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 100}),
		http.StatusBadGateway, "server_error")
	if _, err := e.sendCtx(t.Context(), http.MethodPost, "/gift-cards/order", giftOrder); err == nil {
		t.Fatal("the cut create answered")
	}
	eq(t, "nothing created by the refusals", len(e.sim.Orders()), 3)

	// ClearFaults drops what is left.
	e.sim.ScriptCreates(faults.RateLimited(time.Second))
	e.sim.ClearFaults()
	e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	eq(t, "orders", len(e.sim.Orders()), 4)
}

func TestScriptCreatesHang(t *testing.T) {
	e := newEnv(t, Config{})
	created := make(chan OrderSnapshot, 1)
	e.sim.OnOrderCreated(func(o OrderSnapshot) { created <- o })
	arrived := make(chan struct{}, 1)
	e.sim.OnRequest(func(*http.Request, []byte) { arrived <- struct{}{} })

	// CreatedThenHang: the order exists, the client never gets an answer
	// and gives up (here: cancels once the order exists).
	e.sim.ScriptCreates(faults.CreatedThenHang(), faults.HangBeforeCreate())
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { _, err := e.sendCtx(ctx, http.MethodPost, "/gift-cards/order", giftOrder); errc <- err }()
	<-arrived
	o := <-created
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the client's cancellation", err)
	}
	eq(t, "the order exists", len(e.sim.Orders()), 1)
	eq(t, "its number", e.sim.Orders()[0].Number, o.Number)

	// HangBeforeCreate: nothing is created, the client gives up.
	ctx, cancel = context.WithCancel(t.Context())
	go func() { _, err := e.sendCtx(ctx, http.MethodPost, "/gift-cards/order", giftOrder); errc <- err }()
	<-arrived
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the client's cancellation", err)
	}
	e.sim.OnRequest(nil)
	e.get("/me")
	eq(t, "nothing created", len(e.sim.Orders()), 1)
	select {
	case o := <-created:
		t.Fatalf("order %d created by HangBeforeCreate", o.Number)
	default:
	}
}
