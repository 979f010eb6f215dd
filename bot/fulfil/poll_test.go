package fulfil

import (
	"testing"
	"time"

	"shopbot/state"
)

// An order put back from the journal or adopted after a Redis loss may have
// no attempt start on record: it is polled as a fresh claim, not as an
// order as old as the zero time (which would wait PollMax, a minute,
// before its codes went out).
func TestPollDelayCountsFromTheClaimWhenNoAttemptStartIsRecorded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f := &Fulfiller{clock: func() time.Time { return now }}
	f.cfg.defaults()
	cases := []struct {
		name string
		o    state.Order
		want time.Duration
	}{
		{"put back: no attempt start, just claimed", state.Order{ClaimedAt: now}, f.cfg.PollFirst},
		{"placed a moment ago", state.Order{PlacingAt: now.Add(-time.Second), ClaimedAt: now}, f.cfg.PollFirst},
		{"placed 1.9 s ago", state.Order{PlacingAt: now.Add(-1900 * time.Millisecond), ClaimedAt: now.Add(-1900 * time.Millisecond)}, f.cfg.PollFirst},
		{"placed 2 s ago", state.Order{PlacingAt: now.Add(-2 * time.Second), ClaimedAt: now.Add(-2 * time.Second)}, f.cfg.PollMin},
		{"placed 30 minutes ago", state.Order{PlacingAt: now.Add(-30 * time.Minute), ClaimedAt: now.Add(-30 * time.Minute)}, f.cfg.PollMax},
		{"placed 9 s ago", state.Order{PlacingAt: now.Add(-9 * time.Second), ClaimedAt: now.Add(-9 * time.Second)}, 3 * time.Second},
	}
	for _, tc := range cases {
		if got := f.pollDelay(&tc.o); got != tc.want {
			t.Errorf("%s: poll in %s, want %s", tc.name, got, tc.want)
		}
	}
}

// An upstream order is read right after its create and then every
// PollFirst (500 ms) while it is younger than PollMin, so an order done at
// its second read is read 500 ms after the first; the first minute costs at
// most PollMin/PollFirst reads more than polling from PollMin.
func TestPollReadsSoonAfterTheCreateThenBacksOff(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	now := start
	f := &Fulfiller{clock: func() time.Time { return now }}
	f.cfg.defaults()
	if f.cfg.PollFirst != 500*time.Millisecond {
		t.Fatalf("PollFirst %s, want 500ms", f.cfg.PollFirst)
	}
	o := state.Order{PlacingAt: start, ClaimedAt: start}
	reads := []time.Duration{0}
	for now.Sub(start) < time.Minute {
		now = now.Add(f.pollDelay(&o))
		reads = append(reads, now.Sub(start))
	}
	if reads[1] != 500*time.Millisecond {
		t.Fatalf("second read at %s, want 500ms (reads %v)", reads[1], reads)
	}
	old := []time.Duration{0}
	now = start
	f.cfg.PollFirst = f.cfg.PollMin // as before: PollMin from the start
	for now.Sub(start) < time.Minute {
		now = now.Add(f.pollDelay(&o))
		old = append(old, now.Sub(start))
	}
	if extra := len(reads) - len(old); extra < 1 || extra > int(f.cfg.PollMin/(500*time.Millisecond)) {
		t.Fatalf("%d reads in the first minute, %d polling from PollMin: %d more, want 1 to 3 (%v)", len(reads), len(old), extra, reads)
	}
}
