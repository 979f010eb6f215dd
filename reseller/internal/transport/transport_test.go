package transport

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestEqualJitter(t *testing.T) {
	for range 1000 {
		if d := EqualJitter(time.Second); d < 500*time.Millisecond || d > time.Second {
			t.Fatalf("EqualJitter(1s) = %v", d)
		}
	}
}

func TestRetry_realSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := SleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("SleepContext = %v", err)
	}
	if err := SleepContext(t.Context(), time.Millisecond); err != nil {
		t.Errorf("SleepContext = %v", err)
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"3": 3 * time.Second, "0.5": 500 * time.Millisecond, "": 0, "-1": 0, "NaN": 0, "soon": 0,
		now.Add(5 * time.Second).Format(http.TimeFormat):  5 * time.Second,
		now.Add(-5 * time.Second).Format(http.TimeFormat): 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	h := http.Header{"X-Ratelimit-Reset": {"1714557960"}}
	if rl := newRateLimitError(&Error{}, h, now, func(s string) string { return s }); !rl.Reset.Equal(time.Unix(1714557960, 0)) {
		t.Errorf("absolute reset = %v", rl.Reset)
	}
}
