package records_test

import (
	"errors"
	"shopbot/state/redisstore/records"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/statetest"
)

// newPromos is a promo store on a fake clock.
func newPromos(t *testing.T) (*records.Promos, *time.Time) {
	t.Helper()
	r := statetest.New(t)
	s := records.NewPromos(r.Client, r.Prefix)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	return s, &now
}

func TestPromoAddGetListDisable(t *testing.T) {
	s, _ := newPromos(t)
	ctx := t.Context()
	if err := s.Add(ctx, &state.Promo{Code: " spring10 ", Percent: decimal.NewFromInt(10), MaxUses: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, &state.Promo{Code: "SPRING10", OffUSD: decimal.NewFromInt(1)}); !errors.Is(err, state.ErrPromoExists) {
		t.Fatalf("second add: %v", err)
	}
	if err := s.Add(ctx, &state.Promo{Code: "x"}); err == nil {
		t.Fatal("a one-letter code was stored")
	}
	p, err := s.Get(ctx, "spring10")
	if err != nil || p.Code != "SPRING10" || !p.Percent.Equal(decimal.NewFromInt(10)) || p.MaxUses != 5 || p.Disabled {
		t.Fatalf("get: %+v %v", p, err)
	}
	list, total, err := s.List(ctx, 10)
	if err != nil || total != 1 || len(list) != 1 {
		t.Fatalf("list: %v %d %v", list, total, err)
	}
	if did, err := s.Disable(ctx, "SPRING10"); !did || err != nil {
		t.Fatalf("disable: %v %v", did, err)
	}
	if did, err := s.Disable(ctx, "SPRING10"); did || err != nil {
		t.Fatalf("disable again: %v %v", did, err)
	}
	if _, err := s.Check(ctx, "SPRING10", 1); !errors.Is(err, state.ErrPromoDisabled) {
		t.Fatalf("check disabled: %v", err)
	}
	if _, err := s.Check(ctx, "NOPE", 1); !errors.Is(err, state.ErrPromoUnknown) {
		t.Fatalf("check unknown: %v", err)
	}
}

// Twenty buyers reserve the last use at once: exactly one holds it; the
// others are told it is used up. A release frees it, a commit consumes it
// once, a return gives it back once.
func TestPromoLastUseRace(t *testing.T) {
	s, now := newPromos(t)
	ctx := t.Context()
	if err := s.Add(ctx, &state.Promo{Code: "LAST", Percent: decimal.NewFromInt(50), MaxUses: 1}); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var winner atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Reserve(ctx, "LAST", "q"+strconv.Itoa(i), int64(100+i), now.Add(time.Minute))
			switch {
			case err == nil:
				won.Add(1)
				winner.Store(int64(i))
			case !errors.Is(err, state.ErrPromoUsedUp):
				t.Errorf("buyer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d buyers hold the last use", won.Load())
	}
	w := winner.Load()
	wq := "q" + strconv.Itoa(int(w))
	if err := s.Release(ctx, "LAST", wq, 100+w); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, "LAST", "other", 7, now.Add(time.Minute)); err != nil {
		t.Fatalf("after release: %v", err)
	}
	for range 2 {
		if err := s.Commit(ctx, "LAST", "other", 7); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	if p, _ := s.Get(ctx, "LAST"); p.Used != 1 || p.Held != 0 {
		t.Fatalf("used %d held %d", p.Used, p.Held)
	}
	if err := s.Commit(ctx, "LAST", wq, 100+w); !errors.Is(err, state.ErrPromoUsedUp) {
		t.Fatalf("a released hold committed: %v", err)
	}
	for i, want := range []bool{true, false} {
		if did, err := s.Return(ctx, "LAST", "other", 7); did != want || err != nil {
			t.Fatalf("return %d: %v %v", i, did, err)
		}
	}
	if p, _ := s.Get(ctx, "LAST"); p.Used != 0 {
		t.Fatalf("used %d after the return", p.Used)
	}
	_ = now
}

// A lapsed hold is committed when a use is still free, and refused when
// another buyer took it meanwhile; a live hold is honoured even after the
// code expired or was disabled (the buyer paid under it).
func TestPromoHoldLapseAndExpiry(t *testing.T) {
	s, now := newPromos(t)
	ctx := t.Context()
	start := *now
	if err := s.Add(ctx, &state.Promo{Code: "ONE", OffUSD: decimal.NewFromInt(1), MaxUses: 1, Expires: start.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, "ONE", "a", 1, start.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	*now = start.Add(2 * time.Minute) // a's hold lapsed
	if err := s.Reserve(ctx, "ONE", "b", 2, start.Add(3*time.Minute)); err != nil {
		t.Fatalf("b after a lapsed: %v", err)
	}
	if err := s.Commit(ctx, "ONE", "a", 1); !errors.Is(err, state.ErrPromoUsedUp) {
		t.Fatalf("a's late commit: %v", err)
	}
	if _, err := s.Disable(ctx, "ONE"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, "ONE", "b", 2); err != nil {
		t.Fatalf("b's live hold after disable: %v", err)
	}
	if err := s.Add(ctx, &state.Promo{Code: "SOON", OffUSD: decimal.NewFromInt(1), Expires: start.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	*now = start.Add(time.Hour)
	if _, err := s.Check(ctx, "SOON", 1); !errors.Is(err, state.ErrPromoExpired) {
		t.Fatalf("expired: %v", err)
	}
}

func TestPromoOneUsePerBuyer(t *testing.T) {
	s, now := newPromos(t)
	ctx := t.Context()
	if err := s.Add(ctx, &state.Promo{Code: "ONCE", Percent: decimal.NewFromInt(5), PerBuyer: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, "ONCE", "a", 1, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, "ONCE", "b", 1, now.Add(time.Minute)); !errors.Is(err, state.ErrPromoUsedByBuyer) {
		t.Fatalf("second quote of the buyer: %v", err)
	}
	if err := s.Reserve(ctx, "ONCE", "c", 2, now.Add(time.Minute)); err != nil {
		t.Fatalf("another buyer: %v", err)
	}
	if err := s.Commit(ctx, "ONCE", "a", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(ctx, "ONCE", 1); !errors.Is(err, state.ErrPromoUsedByBuyer) {
		t.Fatalf("check after use: %v", err)
	}
	if _, err := s.Return(ctx, "ONCE", "a", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(ctx, "ONCE", 1); err != nil {
		t.Fatalf("check after the return: %v", err)
	}
}
