package records_test

import (
	"errors"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/statetest"
)

func TestStoreEpochIsSetOnce(t *testing.T) {
	r := statetest.New(t)
	first := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
	got, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix, first)
	if err != nil || !got.Equal(first) {
		t.Fatalf("first call: %v %v, want %v", got, err, first)
	}
	again, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix, time.Now())
	if err != nil || !again.Equal(first) {
		t.Fatalf("second call: %v %v, want the first time %v", again, err, first)
	}
	if ttl := r.Client.TTL(t.Context(), r.Prefix+redisstore.StoreEpochKey).Val(); ttl != -1 {
		t.Fatalf("the epoch expires (ttl %v)", ttl)
	}
	// Another store (prefix) has its own epoch.
	other, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix+"other:", time.Now())
	if err != nil || other.Equal(first) {
		t.Fatalf("another prefix: %v %v", other, err)
	}
}

// A store records the earlier stores it continues once, when it is
// created, and never after: a later caller's (or a flushed store's own
// replica's) idea of the lineage changes nothing.
func TestStoreLineageIsWrittenOnlyWithTheEpoch(t *testing.T) {
	r := statetest.New(t)
	now := time.UnixMilli(time.Now().UnixMilli())
	old := now.Add(-time.Hour).UnixMilli()
	l, err := redisstore.StoreLineage(t.Context(), r.Client, r.Prefix, now, []int64{old, old - 5, 0, now.Add(time.Hour).UnixMilli()})
	if err != nil || !l.Epoch.Equal(now) || len(l.Continues) != 2 || l.Continues[0] != old || l.Continues[1] != old-5 {
		t.Fatalf("created: %+v %v, want epoch %v continuing %d and %d (no zero, nothing newer than the store)", l, err, now, old, old-5)
	}
	again, err := redisstore.StoreLineage(t.Context(), r.Client, r.Prefix, now.Add(time.Minute), []int64{now.Add(-time.Second).UnixMilli()})
	if err != nil || !again.Epoch.Equal(now) || len(again.Continues) != 2 || again.Continues[0] != old {
		t.Fatalf("read again: %+v %v, want the lineage written with the epoch", again, err)
	}
	if e, err := redisstore.StoreEpoch(t.Context(), r.Client, r.Prefix, time.Now()); err != nil || !e.Equal(now) {
		t.Fatalf("StoreEpoch: %v %v", e, err)
	}
	// A first store continues nothing.
	first, err := redisstore.StoreLineage(t.Context(), r.Client, r.Prefix+"new:", now, nil)
	if err != nil || len(first.Continues) != 0 {
		t.Fatalf("a first store: %+v %v", first, err)
	}
}

func TestChargeReviewListsAChargeOnce(t *testing.T) {
	r := statetest.New(t)
	rv := records.NewChargeReviews(r.Client, r.Prefix)
	ctx := t.Context()
	paid := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	c := state.ChargeReview{ChargeID: "stx1", UserID: 7, Stars: 120, Payload: "q:abc", PaidAt: paid, Reason: state.ReviewBeforeStore}
	if added, err := rv.Add(ctx, c); err != nil || !added {
		t.Fatalf("first add: %v %v", added, err)
	}
	c.Reason = state.ReviewQuoteGone
	if added, err := rv.Add(ctx, c); err != nil || added {
		t.Fatalf("second add: %v %v", added, err)
	}
	if n, err := rv.Len(ctx); err != nil || n != 1 {
		t.Fatalf("len %d %v", n, err)
	}
	got, err := rv.Get(ctx, "stx1")
	if err != nil || got.Reason != state.ReviewBeforeStore || got.Stars != 120 || !got.PaidAt.Equal(paid) || got.ListedAt.IsZero() {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := rv.Get(ctx, "nope"); !errors.Is(err, state.ErrNoChargeReview) {
		t.Fatalf("get unknown: %v", err)
	}
	if _, err := rv.Add(ctx, state.ChargeReview{ChargeID: "stx2", Reason: state.ReviewQuoteGone}); err != nil {
		t.Fatal(err)
	}
	list, err := rv.List(ctx, 0, 10)
	if err != nil || len(list) != 2 || list[0].ChargeID != "stx1" || list[1].ChargeID != "stx2" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if ok, err := rv.Alerted(ctx, "stx1"); err != nil || ok {
		t.Fatalf("alerted before: %v %v", ok, err)
	}
	if err := rv.MarkAlerted(ctx, "stx1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := rv.Alerted(ctx, "stx1"); err != nil || !ok {
		t.Fatalf("alerted after: %v %v", ok, err)
	}
}

// Eight decisions about one charge at once (two admins, two replicas, a
// double press): exactly one wins, every other sees it; the charge leaves
// the waiting list (and its Stars the totals), stays listed for Get and
// for Add (the sweep does not list it again), and counts as alerted.
func TestChargeResolveLetsExactlyOneDecisionWin(t *testing.T) {
	r := statetest.New(t)
	rv := records.NewChargeReviews(r.Client, r.Prefix)
	ctx := t.Context()
	paid := time.Now().Add(-48 * time.Hour).UTC()
	for i, id := range []string{"stxA", "stxB", "stxC"} {
		if _, err := rv.Add(ctx, state.ChargeReview{ChargeID: id, UserID: 7, Stars: int64(100 * (i + 1)), PaidAt: paid, Reason: state.ReviewBeforeStore}); err != nil {
			t.Fatal(err)
		}
	}
	if w, f, err := rv.Totals(ctx); err != nil || w != (records.ChargeTotals{N: 3, Stars: 600}) || f != (records.ChargeTotals{}) {
		t.Fatalf("totals before: %+v %+v %v", w, f, err)
	}
	type result struct {
		won bool
		res *state.ChargeResolution
	}
	results := make(chan result, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		status := state.ChargeRefunding
		if i%2 == 1 {
			status = state.ChargeSettled
		}
		wg.Go(func() {
			won, res, err := rv.Resolve(ctx, "stxB", state.ChargeResolution{Status: status, By: state.Actor{ID: int64(100 + i), Role: "owner", Via: state.ViaChat}, At: time.Now()})
			if err != nil {
				t.Error(err)
			}
			results <- result{won, res}
		})
	}
	wg.Wait()
	close(results)
	var winner *state.ChargeResolution
	wins := 0
	var all []result
	for r := range results {
		all = append(all, r)
		if r.won {
			wins++
			winner = r.res
		}
	}
	if wins != 1 {
		t.Fatalf("%d decisions won, want 1", wins)
	}
	for _, r := range all {
		if r.res == nil || r.res.By.ID != winner.By.ID || r.res.Status != winner.Status {
			t.Fatalf("a decision saw %+v, the winner is %+v", r.res, winner)
		}
	}
	got, err := rv.Get(ctx, "stxB")
	if err != nil || got.Resolution == nil || got.Resolution.By.ID != winner.By.ID || got.Stars != 200 {
		t.Fatalf("get after: %+v %v", got, err)
	}
	if added, err := rv.Add(ctx, state.ChargeReview{ChargeID: "stxB", Reason: state.ReviewQuoteGone}); err != nil || added {
		t.Fatalf("listed again after its resolution: %v %v", added, err)
	}
	if ok, _ := rv.Alerted(ctx, "stxB"); !ok {
		t.Fatal("a resolved charge is not counted as alerted")
	}
	if n, _ := rv.Len(ctx); n != 2 {
		t.Fatalf("%d waiting, want 2", n)
	}
	list, err := rv.List(ctx, 0, 10)
	if err != nil || len(list) != 2 || list[0].ChargeID != "stxA" || list[1].ChargeID != "stxC" {
		t.Fatalf("waiting list %+v %v", list, err)
	}
	w, f, err := rv.Totals(ctx)
	if err != nil || w != (records.ChargeTotals{N: 2, Stars: 400}) {
		t.Fatalf("waiting after: %+v %v", w, err)
	}
	refunding := winner.Status == state.ChargeRefunding
	if want := map[bool]records.ChargeTotals{true: {N: 1, Stars: 200}}[refunding]; f != want {
		t.Fatalf("refunding after: %+v, want %+v", f, want)
	}
	if _, _, err := rv.Resolve(ctx, "nope", state.ChargeResolution{Status: state.ChargeSettled}); !errors.Is(err, state.ErrNoChargeReview) {
		t.Fatalf("resolve unknown: %v", err)
	}
	if _, _, err := rv.Resolve(ctx, "stxA", state.ChargeResolution{Status: state.ChargeRefunded}); err == nil {
		t.Fatal("a finished refund taken as a decision")
	}
}

// A refund decided and cut short is listed for the retry once its time
// has passed, finished once, and then leaves the refunding list.
func TestChargeRefundIsFinishedOnce(t *testing.T) {
	r := statetest.New(t)
	rv := records.NewChargeReviews(r.Client, r.Prefix)
	ctx := t.Context()
	if _, err := rv.Add(ctx, state.ChargeReview{ChargeID: "stxR", UserID: 7, Stars: 300, Reason: state.ReviewQuoteGone}); err != nil {
		t.Fatal(err)
	}
	decided := time.Now().Add(-3 * time.Minute)
	by := state.Actor{ID: 42, Role: "owner", Via: state.ViaChat}
	if won, _, err := rv.Resolve(ctx, "stxR", state.ChargeResolution{Status: state.ChargeRefunding, By: by, At: decided}); err != nil || !won {
		t.Fatalf("decide: %v %v", won, err)
	}
	if list, err := rv.Refunding(ctx, decided, 10); err != nil || len(list) != 0 {
		t.Fatalf("listed before its time: %+v %v", list, err)
	}
	list, err := rv.Refunding(ctx, time.Now(), 10)
	if err != nil || len(list) != 1 || list[0].ChargeID != "stxR" || list[0].Resolution == nil || list[0].Resolution.Status != state.ChargeRefunding || list[0].Resolution.By != by {
		t.Fatalf("refunding: %+v %v", list, err)
	}
	done := state.ChargeResolution{Status: state.ChargeRefunded, By: by, At: decided, DoneAt: time.Now()}
	var wg sync.WaitGroup
	var firsts atomic.Int64
	for range 4 {
		wg.Go(func() {
			first, err := rv.FinishRefund(ctx, "stxR", done)
			if err != nil {
				t.Error(err)
			}
			if first {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if firsts.Load() != 1 {
		t.Fatalf("finished %d times", firsts.Load())
	}
	got, err := rv.Get(ctx, "stxR")
	if err != nil || got.Resolution.Status != state.ChargeRefunded || got.Resolution.DoneAt.IsZero() || got.Resolution.By != by {
		t.Fatalf("after: %+v %v", got.Resolution, err)
	}
	if list, _ := rv.Refunding(ctx, time.Now(), 10); len(list) != 0 {
		t.Fatalf("still refunding: %+v", list)
	}
	if _, f, _ := rv.Totals(ctx); f.N != 0 {
		t.Fatalf("refunding totals %+v", f)
	}
}
