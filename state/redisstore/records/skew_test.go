package records_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/statetest"
)

// newerOrder rewrites order id's document as a newer build would: a newer
// version, a field this build does not know and, when status is set, a
// status it does not know either.
func newerOrder(t *testing.T, r *statetest.Redis, key, status string) string {
	t.Helper()
	doc, err := r.Client.HGet(t.Context(), key, "doc").Result()
	if err != nil {
		t.Fatal(err)
	}
	doc = strings.Replace(doc, `"v":1,`, `"v":2,"gift_note":"happy birthday",`, 1)
	if status != "" {
		doc = strings.Replace(doc, `"status":"delivered"`, `"status":"`+status+`"`, 1)
	}
	if err := r.Client.HSet(t.Context(), key, "doc", doc).Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

// An order a newer build wrote is never moved, shrunk or rewritten by this
// one (which would drop what it does not know of it), whatever asks.
func TestOrdersOfANewerVersionAreLeftAlone(t *testing.T) {
	r, s := newOrders(t)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	a := mustCreatePaid(t, s, paidOrder(1, "q1", "ch1"))
	if a.V != state.OrderVersion {
		t.Fatalf("created with version %d, want %d", a.V, state.OrderVersion)
	}
	b := mustCreatePaid(t, s, paidOrder(1, "q2", "ch2"))
	for _, o := range []*state.Order{a, b} {
		for _, to := range []string{state.OrderPlacing, state.OrderPlaced, state.OrderDelivered} {
			cur, _ := s.Get(ctx, o.ID)
			if _, err := s.Transition(ctx, o.ID, []string{cur.Status}, to, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	docA := newerOrder(t, r, s.KeyOf(a.ID), "")
	docB := newerOrder(t, r, s.KeyOf(b.ID), "gifted")
	for _, id := range []int64{a.ID, b.ID} {
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatalf("a newer order cannot be read to be shown: %v", err)
		}
		if err := got.Readable(); !errors.Is(err, state.ErrRecordTooNew) {
			t.Fatalf("order %d Readable = %v", id, err)
		}
		called := false
		_, err = s.Transition(ctx, id, []string{state.OrderDelivered}, state.OrderDelivered, func(*state.Order) error { called = true; return nil }, "a note")
		if !errors.Is(err, state.ErrRecordTooNew) || called {
			t.Fatalf("order %d: Transition = %v (mutate ran: %v), want ErrRecordTooNew before anything", id, err, called)
		}
	}
	now = now.Add(100 * 24 * time.Hour)
	if n, err := s.ExpireDelivered(ctx, s.Retention); err != nil || n != 0 {
		t.Fatalf("retention shrank %d (%v), want the newer orders left", n, err)
	}
	for id, want := range map[int64]string{a.ID: docA, b.ID: docB} {
		if doc, _ := r.Client.HGet(ctx, s.KeyOf(id), "doc").Result(); doc != want {
			t.Fatalf("order %d rewritten:\n%s\nwant\n%s", id, doc, want)
		}
	}
	// A paid order a newer build journaled is not made again in this
	// build's format.
	o := paidOrder(2, "q3", "ch3")
	o.V = state.OrderVersion + 1
	if _, _, err := s.CreatePaid(ctx, o); !errors.Is(err, state.ErrRecordTooNew) {
		t.Fatalf("CreatePaid of a newer order = %v", err)
	}
}
