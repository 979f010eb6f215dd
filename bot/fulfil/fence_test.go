package fulfil

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/jobs"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/statetest"
)

// Fencing a create (send, nothingFound): two workers over one Redis and
// one upstream, on a fake clock moved by hand, each running the order's
// job step itself under the lease it claimed, as jobs.Worker does.

// fenceClock is a clock that moves only when the test moves it.
type fenceClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fenceClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fenceClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// quietMessenger takes every message to the buyer.
type quietMessenger struct{}

func (quietMessenger) Send(context.Context, int64, string, [][]flows.Button) (int, error) {
	return 1, nil
}
func (quietMessenger) SendDocument(context.Context, int64, string, []byte, string) error { return nil }
func (quietMessenger) RefundStars(context.Context, int64, string) error                  { return nil }

type fenceRig struct {
	t       *testing.T
	clk     *fenceClock
	sim     *resellersim.Sim
	orders  *records.Orders
	sched   *sched.Schedule
	cfg     Config
	order   *state.Order
	creates chan struct{} // one value per create request the upstream got
}

// The defaults of the shop: lease 6 s, grace 10 s, create timeout 15 s.
func newFenceRig(t *testing.T, hold func(n int) <-chan struct{}) *fenceRig {
	t.Helper()
	r := statetest.New(t)
	clk := &fenceClock{now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	sim := resellersim.New(resellersim.Config{Seed: 1, Now: clk.Now})
	rig := &fenceRig{t: t, clk: clk, sim: sim, creates: make(chan struct{}, 10)}
	var mu sync.Mutex
	n := 0
	sim.OnRequest(func(req *http.Request, _ []byte) {
		if req.Method != http.MethodPost {
			return
		}
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		rig.creates <- struct{}{}
		if hold != nil {
			if c := hold(k); c != nil {
				<-c
			}
		}
	})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	rig.orders = records.NewOrders(r.Client, r.Prefix)
	rig.orders.Now = clk.Now
	rig.sched = sched.NewSchedule(r.Client, r.Prefix)
	rig.cfg = Config{Lease: 6 * time.Second, Grace: 10 * time.Second, CreateTimeout: 15 * time.Second}
	rig.cfg.defaults()
	item, err := json.Marshal(state.Quote{Line: "giftcards", Category: simcatalog.DemoGiftCategory, Item: simcatalog.DemoGiftCard,
		ItemName: "Apple Gift Card 10 USD", Quantity: 1, UpstreamUSD: decimal.NewFromInt(10)})
	if err != nil {
		t.Fatal(err)
	}
	rig.order, _, err = rig.orders.CreatePaid(t.Context(), &state.Order{
		QuoteID: "q-1", ChargeID: "charge-1", UserID: 7, ChatID: 7, Lang: "en", Line: "giftcards", Item: item,
		PayMethod: state.PayStars, ShopUSD: decimal.NewFromInt(12), UpstreamUSD: decimal.NewFromInt(10), Stars: 900,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.sched.Put(t.Context(), OrderJob(rig.order.ID), clk.Now()); err != nil {
		t.Fatal(err)
	}
	return rig
}

// worker is one replica's fulfilment worker over the rig, with failpoint.
func (rig *fenceRig) worker(srvURL string, failpoint func(string, int64) error) *Fulfiller {
	rig.t.Helper()
	up, err := reseller.New(srvURL+"/api/v1", "test-key", reseller.WithMaxAttempts(1), reseller.WithTimeout(time.Minute))
	if err != nil {
		rig.t.Fatal(err)
	}
	cfg := rig.cfg
	cfg.Failpoint = failpoint
	return New(Deps{Orders: rig.orders, Schedule: rig.sched, Upstream: up, Messenger: quietMessenger{}, Now: rig.clk.Now}, cfg)
}

// claim claims the order's job now for a lease, as a worker's Claim does,
// and returns the context its step runs in.
func (rig *fenceRig) claim() (context.Context, sched.Job) {
	rig.t.Helper()
	got, err := rig.sched.Claim(rig.t.Context(), rig.clk.Now(), rig.cfg.Lease, 1)
	if err != nil || len(got) != 1 {
		rig.t.Fatalf("claim the order's job: %v, %v", got, err)
	}
	ctx, _, cancel := jobs.NewLease(context.Background(), rig.sched, got[0], rig.cfg.Lease, rig.clk.Now(), rig.clk.Now)
	rig.t.Cleanup(cancel)
	return ctx, got[0]
}

// createsSoFar counts the create requests the upstream got.
func (rig *fenceRig) createsSoFar() int { return len(rig.creates) }

func (rig *fenceRig) get() *state.Order {
	rig.t.Helper()
	o, err := rig.orders.Get(rig.t.Context(), rig.order.ID)
	if err != nil {
		rig.t.Fatal(err)
	}
	return o
}

// Worker A's create is in flight when its lease lapses (its Redis cut
// off): B claims the job, finds placing with no answer, and waits. It
// must not create again before A's create is over for sure (its lease
// from the intent, the create timeout, then the grace), whenever B found
// the attempt: A's POST may still land. On the old protocol B counted the
// grace from its own discovery and bought a second time 18 s after the
// first create left.
func TestLeaseLapsedMidCreateNoSecondCreateBeforeTheFirstIsOver(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	rig := newFenceRig(t, func(n int) <-chan struct{} {
		if n == 1 {
			return release // A's create is held in flight
		}
		return nil
	})
	srv := httptest.NewServer(rig.sim)
	t.Cleanup(srv.Close)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	a, b := rig.worker(srv.URL, nil), rig.worker(srv.URL, nil)
	t0 := rig.clk.Now()

	actx, ajob := rig.claim()
	aDone := make(chan struct{})
	go func() { defer close(aDone); a.runJob(actx, ajob) }()
	select {
	case <-rig.creates:
		rig.creates <- struct{}{} // keep the count
	case <-time.After(30 * time.Second):
		t.Fatal("A sent no create")
	}

	// A's lease lapses; B claims the job and finds the attempt.
	rig.clk.Add(rig.cfg.Lease + time.Second)
	bctx, bjob := rig.claim()
	if bjob.Gen <= ajob.Gen {
		t.Fatalf("B's lease generation %d, A's %d", bjob.Gen, ajob.Gen)
	}
	for _, at := range []time.Duration{7, 18, 25, 30} {
		rig.clk.Add(t0.Add(at * time.Second).Sub(rig.clk.Now()))
		b.runJob(bctx, bjob)
		if n := rig.createsSoFar(); n != 1 {
			t.Fatalf("%d creates %s after the first, still in flight (its deadline %s after it)",
				n, time.Duration(at)*time.Second, rig.get().AttemptDeadline.Sub(t0))
		}
	}
	if got := rig.get(); got.Status != state.OrderPlacing || !got.AttemptDeadline.Equal(t0.Add(rig.cfg.Lease+rig.cfg.CreateTimeout)) || got.AttemptFence != ajob.Gen {
		t.Fatalf("order %s, deadline %v, fence %d", got.Status, got.AttemptDeadline, got.AttemptFence)
	}

	// A's create lands late: it is the order's, and the only one.
	close(release)
	select {
	case <-aDone:
	case <-time.After(30 * time.Second):
		t.Fatal("A's step did not end")
	}
	rig.clk.Add(t0.Add(32 * time.Second).Sub(rig.clk.Now()))
	b.runJob(bctx, bjob)
	got := rig.get()
	if got.Status != state.OrderPlaced && got.Status != state.OrderDelivered {
		t.Fatalf("order %s after its create landed", got.Status)
	}
	if n, ups := rig.createsSoFar(), rig.sim.Orders(); n != 1 || len(ups) != 1 || int64(ups[0].Number) != got.UpstreamNumber {
		t.Fatalf("%d creates, upstream orders %v, order has %d", n, len(ups), got.UpstreamNumber)
	}
}

// Worker A, 3 s into its lease, writes its intent, and before its POST
// its lease is another's (it lapsed while A stalled, and B claimed the
// job), while the intent itself is still young enough to send. A must not
// send; B treats A's attempt as in flight until its deadline and the
// grace, then places the order once.
func TestWorkerThatLostItsLeaseDoesNotSend(t *testing.T) {
	t.Parallel()
	rig := newFenceRig(t, nil)
	srv := httptest.NewServer(rig.sim)
	t.Cleanup(srv.Close)
	var bctx context.Context
	var bjob sched.Job
	stalled := func(step string, _ int64) error {
		if step == FailpointIntent && bctx == nil {
			rig.clk.Add(4 * time.Second) // past A's lease, not past its intent's
			bctx, bjob = rig.claim()
		}
		return nil
	}
	a, b := rig.worker(srv.URL, stalled), rig.worker(srv.URL, nil)
	actx, ajob := rig.claim()
	rig.clk.Add(3 * time.Second)
	t0 := rig.clk.Now() // A's intent
	a.runJob(actx, ajob)
	if n := rig.createsSoFar(); n != 0 {
		t.Fatalf("A sent %d creates without its lease", n)
	}
	if !errors.Is(actx.Err(), context.Canceled) {
		t.Fatalf("A's step context: %v, want ended with its lease", actx.Err())
	}
	deadline := t0.Add(rig.cfg.Lease + rig.cfg.CreateTimeout)
	if got := rig.get(); !got.AttemptDeadline.Equal(deadline) {
		t.Fatalf("A's attempt deadline %v, want %v", got.AttemptDeadline, deadline)
	}
	// B waits out A's attempt as one that may be in flight...
	for rig.clk.Now().Before(deadline.Add(rig.cfg.Grace)) {
		b.runJob(bctx, bjob)
		if n := rig.createsSoFar(); n != 0 {
			t.Fatalf("B created %s after A's intent, before A's deadline and the grace", rig.clk.Now().Sub(t0))
		}
		rig.clk.Add(2 * time.Second)
	}
	// ...and then places it, once.
	b.runJob(bctx, bjob)
	got := rig.get()
	if n := rig.createsSoFar(); n != 1 || got.UpstreamNumber == 0 {
		t.Fatalf("%d creates, order %s upstream %d", n, got.Status, got.UpstreamNumber)
	}
}

// When an attempt's create is over for sure, from the order alone: at its
// answer when one is on record, else at its deadline, whenever the worker
// looking found it; an attempt from before deadlines were recorded counts
// from its start.
func TestCreateOverIsReadFromTheOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	now := t0.Add(8 * time.Second) // a worker that took the order over
	f := &Fulfiller{clock: func() time.Time { return now }}
	f.cfg.defaults()
	deadline := t0.Add(f.cfg.Lease + f.cfg.CreateTimeout)
	for _, tc := range []struct {
		name string
		o    state.Order
		want time.Time
	}{
		{"answered", state.Order{AttemptID: "a", PlacingAt: t0, UncertainAt: t0.Add(time.Second), AttemptDeadline: t0.Add(time.Second)}, t0.Add(time.Second)},
		{"no answer", state.Order{AttemptID: "a", PlacingAt: t0, AttemptDeadline: deadline}, deadline},
		{"no deadline on record", state.Order{AttemptID: "a", PlacingAt: t0}, deadline},
		{"put back later than its deadline", state.Order{AttemptID: "a", PlacingAt: t0, UncertainAt: deadline.Add(time.Minute)}, deadline.Add(time.Minute)},
	} {
		got, err := f.createOver(t.Context(), &tc.o)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
