package records_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

func TestReminderPendingOffAndSentOnce(t *testing.T) {
	r := statetest.New(t)
	st := records.NewReminders(r.Client, r.Prefix)
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	q1 := records.PendingQuote{Quote: "q1", Chat: 5, Line: "giftcards", Category: "apple-us", Item: "Apple 10", Stars: 877, USD: decimal.RequireFromString("11.40"), Created: at}
	if err := st.SetPending(ctx, 5, q1); err != nil {
		t.Fatal(err)
	}
	q2 := q1
	q2.Quote, q2.Created = "q2", at.Add(time.Minute)
	_ = st.SetPending(ctx, 5, q2)
	got, ok, err := st.Pending(ctx, 5)
	if err != nil || !ok || got.Quote != "q2" || !got.USD.Equal(q1.USD) || !got.Created.Equal(q2.Created) {
		t.Fatalf("pending = %+v, %v, %v", got, ok, err)
	}
	// Clearing the older quote leaves the newer one.
	_ = st.ClearPending(ctx, 5, "q1")
	if _, ok, _ := st.Pending(ctx, 5); !ok {
		t.Fatal("a newer quote was forgotten")
	}
	_ = st.ClearPending(ctx, 5, "q2")
	if _, ok, _ := st.Pending(ctx, 5); ok {
		t.Fatal("not forgotten")
	}
	if off, _ := st.Off(ctx, 5); off {
		t.Fatal("off by default")
	}
	_ = st.SetOff(ctx, 5, true)
	if off, _ := st.Off(ctx, 5); !off {
		t.Fatal("not off")
	}
	if ok, _ := st.MarkSent(ctx, "q2"); !ok {
		t.Fatal("first mark")
	}
	if ok, _ := st.MarkSent(ctx, "q2"); ok {
		t.Fatal("marked twice")
	}
}
