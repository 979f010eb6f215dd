package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/bot/botapitest"
)

// The replica mode (-replicas 1,2,4): the shop as N processes of the
// binary on one Redis deployment (-redis's server or -cluster's cluster),
// behind one fake Bot API whose webhook deliveries the driver spreads over
// the replicas in turn, as a load balancer in front of one webhook URL
// would. For each N the same buyers browse as in the chat runs; the
// figures are the replicas' CPU summed, and what Redis did (commands and
// its CPU, summed over a cluster's masters). Before the buyers come, the
// replicas sit idle for -idle, and the Redis commands of that window are
// the replicas' own background work (their polls and jobs). The first N
// is the baseline its ratios are taken against.

// parseReplicas reads -replicas: counts of replicas, comma-separated.
func parseReplicas(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("-replicas: %q is not a count of replicas (1 to 64)", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// measureReplicas runs the shop at each count of c.replicas in turn.
func measureReplicas(ctx context.Context, c config, rdb redis.UniversalClient, shopBin, upstreamURL string) ([]result, error) {
	var out []result
	for _, n := range c.replicas {
		fmt.Fprintf(os.Stderr, "running the shop as %s: %d buyers, %d presses, think %v...\n", replicasName(n), c.buyers, c.presses, c.think)
		r, err := measureReplicaRun(ctx, c, rdb, shopBin, upstreamURL, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", replicasName(n), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// measureReplicaRun starts n replicas, lets them idle for c.idle, drives
// the buyers through them and stops them.
func measureReplicaRun(ctx context.Context, c config, rdb redis.UniversalClient, shopBin, upstreamURL string, n int) (result, error) {
	res := result{name: replicasName(n), replicas: n}
	var mu sync.Mutex
	fake, err := botapitest.New(botapitest.WithToken(token), botapitest.OnViolation(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		res.problems++
		if res.problems <= 3 {
			fmt.Fprintln(os.Stderr, "Bot API schema violation:", err)
		}
	}))
	if err != nil {
		return res, err
	}
	defer fake.Close()
	if err := clearRedis(ctx, rdb); err != nil {
		return res, err
	}
	var procs []*proc
	defer func() {
		// Stopped at once: each waits out its in-flight work.
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() { defer wg.Done(); p.stop() }()
		}
		wg.Wait()
	}()
	var hooks []string
	for i := range n {
		log := filepath.Join(c.logDir, fmt.Sprintf("replicas-%d-%d.log", n, i+1))
		p, err := startProc(ctx, c, fake, upstreamURL, []string{shopBin, "run"}, nil, log, i+1)
		if err != nil {
			return res, fmt.Errorf("replica %d: %w", i+1, err)
		}
		procs = append(procs, p)
		hooks = append(hooks, p.hook())
	}
	d := newDriver(fake, hooks, c.timeout)
	defer d.close()

	if c.idle > 0 {
		cpu0, err := procsCPU(procs)
		if err != nil {
			return res, err
		}
		idle0, err := readCounters(ctx, rdb)
		if err != nil {
			return res, err
		}
		start := time.Now()
		sleep(ctx, c.idle)
		idle1, err := readCounters(ctx, rdb)
		if err != nil {
			return res, err
		}
		cpu1, err := procsCPU(procs)
		if err != nil {
			return res, err
		}
		res.idle, res.idleFor, res.idleCPU = idle1.since(idle0), time.Since(start), cpu1-cpu0
	}

	cpu0, err := procsCPU(procs)
	if err != nil {
		return res, err
	}
	redis0, err := readCounters(ctx, rdb)
	if err != nil {
		return res, err
	}
	lat, lost, elapsed := drive(ctx, c, d, "", false)
	cpu1, err := procsCPU(procs)
	if err != nil {
		return res, err
	}
	redis1, err := readCounters(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.latencies, res.lost, res.elapsed = lat, lost, elapsed
	res.cpu, res.redis = cpu1-cpu0, redis1.since(redis0)
	res.updates = len(res.latencies)
	for i, p := range procs {
		res.peakRSSKB = max(res.peakRSSKB, peakRSS(p.cmd.Process.Pid))
		if d.posted[i].Load() == 0 && res.updates > 0 {
			return res, fmt.Errorf("replica %d got no update", i+1)
		}
	}
	slices.Sort(res.latencies)
	mu.Lock()
	defer mu.Unlock()
	return res, ctx.Err()
}

// replicasName is "1 replica", "2 replicas" and so on.
func replicasName(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

// procsCPU is the CPU the processes used so far, summed.
func procsCPU(procs []*proc) (time.Duration, error) {
	var sum time.Duration
	for _, p := range procs {
		t, err := cpuTime(p.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += t
	}
	return sum, nil
}

// loadAverage is the machine's load average over the last minute, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// coreShare is cpu used over d as a share of one core ("1.5%").
func coreShare(cpu, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(cpu)/float64(d))
}

// perCore is how many updates one core-second serves at cpu per update.
func perCore(cpu time.Duration) float64 {
	if cpu <= 0 {
		return 0
	}
	return float64(time.Second) / float64(cpu)
}

// reportReplicas prints the replica mode's figures and the ratios of each
// count of replicas to the first.
func reportReplicas(w io.Writer, c config, rdbInfo string, rs []result) {
	fmt.Fprintf(w, "\nReplicas of the shop on one Redis deployment: %d buyers, %d presses each after /start, think %v; updates spread over the replicas in turn; Redis: %s\n", c.buyers, c.presses, c.think, rdbInfo)
	fmt.Fprintf(w, "Machine: %d cores (GOMAXPROCS of each replica: the machine's), load average %s at the end; the replicas, Redis and the benchmark's buyers and fake Telegram share them\n\n", runtime.NumCPU(), loadAverage())
	fmt.Fprintf(w, "| replicas | updates | lost | updates/s | p50 | p99 | CPU per update (replicas summed) | updates per core-second | Redis ops per update | Redis CPU per update | idle: replicas' CPU | idle: Redis ops/s | idle: Redis CPU | peak RSS of a replica |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %d | %d | %.0f | %v | %v | %v | %.0f | %.1f | %v | %s | %.0f | %s | %d MiB |\n", r.replicas, r.updates, r.lost, r.rate(),
			r.pct(0.50).Round(time.Millisecond), r.pct(0.99).Round(time.Millisecond), r.cpuPer().Round(time.Microsecond), perCore(r.cpuPer()),
			r.redisOpsPer(), r.redisCPUPer().Round(time.Microsecond), coreShare(r.idleCPU, r.idleFor), r.idleOps(), coreShare(r.idle.cpu, r.idleFor), r.peakRSSKB/1024)
		if r.problems > 0 {
			fmt.Fprintf(w, "  %s: %d Bot API schema violations\n", r.name, r.problems)
		}
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		if warn := r.redis.plus(r.idle).shared(); warn != "" {
			fmt.Fprintf(w, "%s:%s\n", r.name, warn)
		}
	}
	base := rs[0]
	for _, r := range rs[1:] {
		fmt.Fprintf(w, "%s / %d: throughput %.2fx, p50 %.2fx, p99 %.2fx, CPU per update %.2fx, Redis ops per update %.2fx, Redis CPU per update %.2fx\n",
			r.name, base.replicas, r.rate()/base.rate(), ratio(r.pct(0.50), base.pct(0.50)), ratio(r.pct(0.99), base.pct(0.99)),
			ratio(r.cpuPer(), base.cpuPer()), r.redisOpsPer()/base.redisOpsPer(), ratio(r.redisCPUPer(), base.redisCPUPer()))
	}
	for _, r := range rs {
		fmt.Fprintf(w, "Redis commands per update, %s: %s\n", r.name, r.redis.top(8, float64(r.updates)))
	}
	for _, r := range rs {
		if r.idleFor > 0 {
			fmt.Fprintf(w, "Redis commands a second with %s idle: %s\n", r.name, r.idle.top(5, r.idleFor.Seconds()))
		}
	}
	for _, r := range rs {
		if len(r.redis.masters) > 1 {
			fmt.Fprintf(w, "Masters with %s, each one's share of the commands and its CPU per update: %s\n", r.name, r.redis.split(r.updates))
		}
	}
	if busiest := base.redis.busiestCPU(); busiest > 0 && base.updates > 0 {
		// Redis runs commands on one thread: the busiest master's CPU
		// per update bounds the updates a second the deployment takes.
		fmt.Fprintf(w, "Redis with %s: %.0f updates per core-second of the busiest master\n",
			base.name, perCore(busiest/time.Duration(base.updates)))
	}
}
