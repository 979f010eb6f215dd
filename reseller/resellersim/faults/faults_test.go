package faults

import (
	"testing"
	"time"
)

func TestCreateStepString(t *testing.T) {
	for _, c := range []struct {
		step CreateStep
		want string
	}{
		{Created(), "created, answered normally"},
		{RateLimited(25 * time.Second), "not created, answered 429 Retry-After 25s"},
		{RefusedWith(502), "not created, answered 502"},
		{CutBeforeCreate(), "not created, connection cut"},
		{HangBeforeCreate(), "not created, no answer until the client gives up"},
		{CreatedThenFail(502), "created, answered 502"},
		{CreatedThenCut(), "created, connection cut"},
		{CreatedThenHang(), "created, no answer until the client gives up"},
	} {
		if got := c.step.String(); got != c.want {
			t.Errorf("step = %q, want %q", got, c.want)
		}
		if got, want := c.step.Creates(), c.want[0] == 'c'; got != want {
			t.Errorf("%s: creates = %v, want %v", c.want, got, want)
		}
	}
}
