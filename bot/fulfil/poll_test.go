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
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f := &Fulfiller{clock: func() time.Time { return now }}
	f.cfg.defaults()
	cases := []struct {
		name string
		o    state.Order
		want time.Duration
	}{
		{"put back: no attempt start, just claimed", state.Order{ClaimedAt: now}, f.cfg.PollMin},
		{"placed a moment ago", state.Order{PlacingAt: now.Add(-time.Second), ClaimedAt: now}, f.cfg.PollMin},
		{"placed 30 minutes ago", state.Order{PlacingAt: now.Add(-30 * time.Minute), ClaimedAt: now.Add(-30 * time.Minute)}, f.cfg.PollMax},
		{"placed 9 s ago", state.Order{PlacingAt: now.Add(-9 * time.Second), ClaimedAt: now.Add(-9 * time.Second)}, 3 * time.Second},
	}
	for _, tc := range cases {
		if got := f.pollDelay(&tc.o); got != tc.want {
			t.Errorf("%s: poll in %s, want %s", tc.name, got, tc.want)
		}
	}
}
