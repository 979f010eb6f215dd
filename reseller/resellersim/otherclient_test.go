package resellersim

import (
	"net/http"
	"shopbot/reseller/resellersim/faults"
	"shopbot/reseller/resellersim/simcatalog"
	"sync/atomic"
	"testing"
	"time"
)

func TestPlaceOtherClientOrder(t *testing.T) {
	e := newEnv(t, Config{})
	var hooked atomic.Int64
	e.sim.OnOrderCreated(func(OrderSnapshot) { hooked.Add(1) })

	// Our buyer's top-up, then a look-alike: same game and offer, another
	// player, placed by another client of the same account.
	mine := e.post("/top-ups/order", obj{"category_id": simcatalog.DemoTopUpCategory, "offer_id": simcatalog.DemoTopUpOffer, "fields": obj{"player_id": "111"}})
	other, err := e.sim.PlaceOtherClientOrder("/api/v1/top-ups/order",
		obj{"category_id": simcatalog.DemoTopUpCategory, "offer_id": simcatalog.DemoTopUpOffer, "fields": obj{"player_id": "222"}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "other type", other.Type, LineGameTopup)
	eq(t, "other player", other.Fields["player_id"], "222")
	eq(t, "other offer", other.OfferID, simcatalog.DemoTopUpOffer)
	if other.Number <= num(t, mine["number"]) {
		t.Fatalf("look-alike %d is not newer than %v", other.Number, mine["number"])
	}
	eq(t, "charged to the same balance", e.sim.Balance().StringFixed(4), "998.0200")
	eq(t, "not one of our creates", e.sim.CreateCount(), 1)
	eq(t, "hook", hooked.Load(), 2)
	eq(t, "total_orders", num(t, e.get("/me")["total_orders"]), 2)

	// Listed, the two cannot be told apart by anything but number (and
	// created_at, which a clock makes equal here).
	l := list(t, e.get("/orders")["data"])
	eq(t, "listed", len(l), 2)
	a, b := l[0].(obj), l[1].(obj)
	eq(t, "newest first", num(t, a["number"]), other.Number)
	for k, v := range a {
		if k != "number" && b[k] != v {
			t.Errorf("field %s differs: %v vs %v", k, v, b[k])
		}
	}
	if len(a) != len(b) {
		t.Errorf("objects differ: %v vs %v", a, b)
	}

	// No fault, script or rate limit applies; the request hook is not called.
	var calls atomic.Int64
	e.sim.OnRequest(func(*http.Request, []byte) { calls.Add(1) })
	e.sim.FailNext(1, http.StatusBadGateway)
	e.sim.ScriptCreates(faults.CreatedThenCut())
	e.sim.RateLimitNext(1, time.Second)
	if _, err := e.sim.PlaceOtherClientOrder("/gift-cards/order", giftOrder); err != nil {
		t.Fatal(err)
	}
	eq(t, "hook calls", calls.Load(), 0)
	eq(t, "script kept", e.sim.ScriptedCreatesLeft(), 1)
	e.sim.ClearFaults()
	e.sim.OnRequest(nil)

	// Errors are the endpoint's.
	if _, err := e.sim.PlaceOtherClientOrder("/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory}); err == nil {
		t.Fatal("invalid request accepted")
	}
	if _, err := e.sim.PlaceOtherClientOrder("/orders", obj{}); err == nil {
		t.Fatal("a non-create path accepted")
	}
	e.sim.SetAccountStatus(StatusBlocked)
	if _, err := e.sim.PlaceOtherClientOrder("/gift-cards/order", giftOrder); err == nil {
		t.Fatal("a blocked account placed an order")
	}
	e.sim.SetAccountStatus(StatusActive)
	if o, err := e.sim.PlaceOtherClientOrder("/gift-cards/order", `{"category_id":"`+simcatalog.DemoGiftCategory+`","card_id":"`+simcatalog.DemoGiftCard+`","quantity":1}`); err != nil || o.Quantity != 1 {
		t.Fatalf("raw JSON body: %+v, %v", o, err)
	}
}
