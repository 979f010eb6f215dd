package records_test

import (
	"testing"
	"time"

	"shopbot/state"
)

// Stats counts orders by status, orphans and disputes; Observe sees every
// creation and change of status, and neither a duplicate payment nor an
// update without a change of status.
func TestOrderStatsAndObserve(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	var seen []string
	s.Observe = func(o *state.Order, from string) { seen = append(seen, from+">"+o.Status+":"+o.Line) }
	a := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	mustCreatePaid(t, s, paidOrder(43, "q2", "ch2"))
	if _, dup, err := s.CreatePaid(ctx, paidOrder(42, "q1", "ch1")); err != nil || !dup {
		t.Fatalf("duplicate payment: dup=%v err=%v", dup, err)
	}
	if _, err := s.Transition(ctx, a.ID, []string{state.OrderPaid}, state.OrderRefunding, nil, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, a.ID, []string{state.OrderRefunding}, state.OrderRefunding, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Dispute(ctx, 900, 901); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReportOrphan(ctx, 902); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ByStatus[state.OrderPaid] != 1 || st.ByStatus[state.OrderRefunding] != 1 || st.ByStatus[state.OrderDelivered] != 0 ||
		len(st.ByStatus) != len(state.OrderStatuses) || st.Orphans != 1 || st.Disputed != 2 {
		t.Fatalf("stats %+v", st)
	}
	want := []string{">paid:giftcards", ">paid:giftcards", "paid>refunding:giftcards"}
	if len(seen) != len(want) {
		t.Fatalf("observed %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("observed %q, want %q", seen, want)
		}
	}
}

// OldestInProgress is the creation time of the oldest order on its way:
// an order in review or finished does not count, however old.
func TestOldestInProgressSkipsReviewAndFinished(t *testing.T) {
	_, s := newOrders(t)
	ctx := t.Context()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	if at, err := s.OldestInProgress(ctx); err != nil || !at.IsZero() {
		t.Fatalf("no orders: %v, %v", at, err)
	}
	review := mustCreatePaid(t, s, paidOrder(41, "q0", "ch0"))
	if _, err := s.Transition(ctx, review.ID, []string{state.OrderPaid}, state.OrderNeedsReview, nil, "test"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	done := mustCreatePaid(t, s, paidOrder(42, "q1", "ch1"))
	if _, err := s.Transition(ctx, done.ID, []string{state.OrderPaid}, state.OrderRefunding, nil, "test"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	placing := mustCreatePaid(t, s, paidOrder(43, "q2", "ch2"))
	if _, err := s.Transition(ctx, placing.ID, []string{state.OrderPaid}, state.OrderPlacing, nil, "test"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	mustCreatePaid(t, s, paidOrder(44, "q3", "ch3"))
	if at, err := s.OldestInProgress(ctx); err != nil || !at.Equal(done.CreatedAt) {
		t.Fatalf("oldest in progress %v, %v; want the refunding order's %v", at, err, done.CreatedAt)
	}
	if _, err := s.Transition(ctx, done.ID, []string{state.OrderRefunding}, state.OrderRefunded, nil, "test"); err != nil {
		t.Fatal(err)
	}
	if at, err := s.OldestInProgress(ctx); err != nil || !at.Equal(placing.CreatedAt) {
		t.Fatalf("oldest in progress %v, %v; want the placing order's %v", at, err, placing.CreatedAt)
	}
}
