package resellersim

import (
	"testing"
	"time"

	"shopbot/reseller/resellersim/internal/wire"
	"shopbot/reseller/resellersim/simcatalog"
)

func TestClockOffsetShiftsUpstreamTimestamps(t *testing.T) {
	const behind = -10 * time.Minute
	e := newEnv(t, Config{ClockOffset: behind})
	e.sim.SetBehavior(LineGiftCard, Behavior{Mode: Complete, ProcessingAfter: time.Second, CompleteAfter: 5 * time.Second})
	eq(t, "offset", e.sim.ClockOffset(), behind)

	real := e.clock.Now()
	created := e.post("/gift-cards/order", giftOrder)
	n := num(t, created["number"])
	eq(t, "created_at", created["created_at"], any(wire.TS(real.Add(behind))))
	listed := list(t, e.get("/orders")["data"])[0].(obj)
	eq(t, "listed created_at", listed["created_at"], any(wire.TS(real.Add(behind))))
	tx := list(t, e.get("/transactions?limit=1")["data"])[0].(obj)
	eq(t, "transaction created_at", tx["created_at"], any(wire.TS(real.Add(behind))))

	// Progress keeps its pace: nothing happens before the behavior says so,
	// although the order looks ten minutes old on the real clock.
	eq(t, "status at once", e.get(path("/orders/%d", n))["status"], any("created"))
	e.clock.Add(5 * time.Second)
	done := e.get(path("/orders/%d", n))
	eq(t, "status", done["status"], any("completed"))
	h := list(t, done["status_history"])
	eq(t, "history", len(h), 3)
	for i, d := range []time.Duration{0, time.Second, 5 * time.Second} {
		eq(t, "history at", h[i].(obj)["at"], any(wire.TS(real.Add(behind+d))))
	}

	// A manual-service deadline is stamped on the same clock.
	m := e.post("/manual-services/order", obj{"service_id": simcatalog.DemoManualService, "product_id": simcatalog.DemoManualOffer,
		"fields": obj{"login": "a@b.c", "password": "pw"}})
	eq(t, "manual created_at", m["created_at"], any(wire.TS(e.clock.Now().Add(behind))))

	// A clock jump applies from then on; earlier stamps stay.
	e.sim.SetClockOffset(0)
	n2 := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	o2, _ := e.sim.Order(n2)
	eq(t, "after the jump", o2.CreatedAt, e.clock.Now())
	o1, _ := e.sim.Order(n)
	eq(t, "before the jump", o1.CreatedAt, real.Add(behind))
}
