//go:build skewnext

package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"shopbot/bot"
	"shopbot/bot/jobs"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/sched"
)

// The next generation's build for the version-skew test (skew_test.go,
// built with -tags skewnext; state/compat_skewnext.go has its generation
// and record versions).

// SkewProbeKind is the job kind of the order schedule only the next
// generation runs.
const SkewProbeKind = "skewprobe"

// SkewProbeRanKey is where a probe job records the version that ran it
// (after the prefix, then the job's name).
const SkewProbeRanKey = "skewprobe-ran:"

// nextGenWork runs the probe jobs until ctx ends: each records the
// version that ran it and finishes.
func nextGenWork(ctx context.Context, rdb redisstore.Client, log *slog.Logger) (stop func()) {
	w := &jobs.Worker{
		What: "skew probe", Sched: sched.NewSchedule(rdb, redisstore.DefaultPrefix), Now: time.Now, Log: log,
		Tick: 100 * time.Millisecond, Lease: 5 * time.Second, Timeout: 5 * time.Second, Parallel: 1,
		Kinds: []string{SkewProbeKind},
		Step: func(ctx context.Context, j sched.Job) (time.Time, bool) {
			if err := rdb.Set(ctx, redisstore.DefaultPrefix+SkewProbeRanKey+j.Name, bot.Version, time.Hour).Err(); err != nil {
				log.Warn("skew probe", "job", j.Name, "err", err)
				return time.Now().Add(time.Second), false
			}
			log.Info("skew probe ran", "job", j.Name)
			return time.Time{}, false
		},
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	return func() { cancel(); wg.Wait() }
}
