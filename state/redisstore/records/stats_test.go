package records_test

import (
	"testing"

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
