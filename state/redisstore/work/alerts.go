package work

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// AlertTTL is how long a raised alert is remembered when nothing clears
// it: past that, the same condition alerts again.
const AlertTTL = 30 * 24 * time.Hour

// Alerts remembers which admin alerts are raised, shared by every process,
// so that an alert goes out once per occurrence. Keys, under prefix +
// "alert:":
//
//	<key>    STRING unix seconds of the raise (expires after AlertTTL)
//
// The alert keys are the callers' ("upstream:low-balance",
// "order:<id>:review", "books:<item>").
type Alerts struct {
	rdb redis.UniversalClient
	p   string
}

// NewAlerts returns the alert store under prefix.
func NewAlerts(rdb redis.UniversalClient, prefix string) *Alerts {
	return &Alerts{rdb: rdb, p: prefix + "alert:"}
}

// Raise raises the alert key at at unless it is raised already, and
// reports whether it raised it now.
func (a *Alerts) Raise(ctx context.Context, key string, at time.Time) (bool, error) {
	ok, err := a.rdb.SetArgs(ctx, a.p+key, at.Unix(), redis.SetArgs{Mode: "NX", TTL: AlertTTL}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil || ok != "OK" {
		return false, fmt.Errorf("raise alert %s: %w", key, err)
	}
	return true, nil
}

// Raised reports whether the alert key is raised.
func (a *Alerts) Raised(ctx context.Context, key string) (bool, error) {
	n, err := a.rdb.Exists(ctx, a.p+key).Result()
	if err != nil {
		return false, fmt.Errorf("read alert %s: %w", key, err)
	}
	return n > 0, nil
}

// Clear ends the alert's occurrence, so the next Raise raises it again. It
// reports whether the alert was raised.
func (a *Alerts) Clear(ctx context.Context, key string) (bool, error) {
	n, err := a.rdb.Del(ctx, a.p+key).Result()
	if err != nil {
		return false, fmt.Errorf("clear alert %s: %w", key, err)
	}
	return n > 0, nil
}
