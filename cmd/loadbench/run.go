package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/bot/botapitest"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/state/redisstore"
)

const (
	token      = "123456:loadbench-token-abcdefghijklmnopqrstu"
	secret     = "loadbench-secret"
	upstreamID = "loadbench-upstream-key"
	admin      = 1
	firstBuyer = 1_000_000
	hookPath   = "/telegram/webhook"
)

var backLabel = locales.T(locales.En, "btn.back")

// result is one bot's run.
type result struct {
	name      string
	updates   int
	lost      int
	elapsed   time.Duration
	latencies []time.Duration
	cpu       time.Duration
	peakRSSKB int64
	broadcast int             // broadcast photos sent during the run
	problems  int             // Bot API schema violations
	roundsP99 []time.Duration // the p99 of each round pooled in (-rounds)
	redis     redisCounters   // what Redis did during the run
	replicas  int             // the replica mode: the shop's processes
	idle      redisCounters   // the replica mode: what Redis did with the replicas idle
	idleFor   time.Duration   // for this long
	idleCPU   time.Duration   // the replicas' CPU then, summed
}

// idleOps is the Redis commands a second with the replicas idle.
func (r result) idleOps() float64 {
	if r.idleFor <= 0 {
		return 0
	}
	return float64(r.idle.ops) / r.idleFor.Seconds()
}

func (r result) rate() float64 { return float64(r.updates) / r.elapsed.Seconds() }
func (r result) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
}
func (r result) cpuPer() time.Duration {
	if r.updates == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.updates)
}

// redisOpsPer is the Redis commands per update.
func (r result) redisOpsPer() float64 {
	if r.updates == 0 {
		return 0
	}
	return float64(r.redis.ops) / float64(r.updates)
}

// redisCPUPer is Redis's CPU per update.
func (r result) redisCPUPer() time.Duration {
	if r.updates == 0 {
		return 0
	}
	return r.redis.cpu / time.Duration(r.updates)
}

func run(c config) error {
	m, err := measureAll(c)
	if err != nil {
		return err
	}
	if len(m.results) > 0 {
		report(os.Stdout, c, m.results)
	}
	if len(m.replicas) > 0 {
		reportReplicas(os.Stdout, c, m.redis, m.replicas)
	}
	if len(m.purchases) > 0 {
		reportPurchases(os.Stdout, c, m.redis, m.purchases)
	}
	return nil
}

// measured is what one loadbench run measured.
type measured struct {
	results   []result         // the bots of -bots
	replicas  []result         // the replica mode, one result per count of replicas
	purchases []purchaseResult // the purchase mode
	redis     string           // which Redis and how it keeps writes
}

// measureAll runs every bot of c.bots in turn, then the replica mode and
// the purchase mode.
func measureAll(c config) (measured, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rdb, err := openRedis(ctx, c.endpoint())
	if err != nil {
		return measured{}, err
	}
	defer rdb.Close()
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return measured{}, err
	}
	defer os.RemoveAll(dir)
	if c.logDir == "" {
		c.logDir = dir
	}
	c.journalRoot = dir
	shopBin := filepath.Join(dir, "shopbot")
	fmt.Fprintln(os.Stderr, "building the shop...")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", shopBin, "shopbot/cmd/shopbot").CombinedOutput(); err != nil {
		return measured{}, fmt.Errorf("build the shop: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return measured{}, err
	}

	sim := resellersim.New(resellersim.Config{APIKey: upstreamID, Seed: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return measured{}, err
	}
	reads := &readCounter{next: sim}
	upstream := &http.Server{Handler: reads, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = upstream.Serve(ln) }()
	defer upstream.Close()
	upstreamURL := "http://" + ln.Addr().String() + "/api/v1"

	var results []result
	for _, name := range strings.Split(c.bots, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		var cmd []string
		switch strings.TrimSpace(name) {
		case "floor":
			cmd = []string{self}
		case "shop":
			cmd = []string{shopBin, "run"}
		default:
			return measured{}, fmt.Errorf("-bots: unknown bot %q (floor, shop)", name)
		}
		runs := []int{0}
		if name == "shop" && c.broadcast > 0 {
			// -rounds: without and with the broadcast again, which goes
			// first alternating, so a machine's load that drifts weighs on
			// both alike; each kind's rounds are pooled.
			runs = broadcastRounds(c.broadcast, max(c.rounds, 1))
		}
		if name == "shop" && c.webapp {
			runs = append(runs, appRun)
		}
		for _, bc := range runs {
			label := name
			switch {
			case bc == appRun:
				label = appLabel
			case bc > 0:
				label = fmt.Sprintf("shop+broadcast %d", bc)
			}
			fmt.Fprintf(os.Stderr, "running %s: %d buyers, %d presses, think %v...\n", label, c.buyers, c.presses, c.think)
			r, err := measure(ctx, c, rdb, label, cmd, upstreamURL, bc)
			if err != nil {
				return measured{}, fmt.Errorf("%s: %w", label, err)
			}
			results = pool(results, r)
		}
	}
	m := measured{results: results, redis: redisInfo(ctx, rdb)}
	if len(c.replicas) > 0 {
		fmt.Fprintf(os.Stderr, "machine: %d cores, load average %s\n", runtime.NumCPU(), loadAverage())
		if m.replicas, err = measureReplicas(ctx, c, rdb, shopBin, upstreamURL); err != nil {
			return measured{}, err
		}
	}
	if c.purchases > 0 {
		if m.purchases, err = measurePurchases(ctx, c, rdb, shopBin, upstreamURL, sim, reads); err != nil {
			return measured{}, err
		}
	}
	return m, nil
}

// broadcastRounds are the shop's runs of -broadcast n with -rounds:
// without and with the broadcast, then with and without, and so on.
func broadcastRounds(n, rounds int) []int {
	var runs []int
	for r := range rounds {
		if r%2 == 0 {
			runs = append(runs, 0, n)
		} else {
			runs = append(runs, n, 0)
		}
	}
	return runs
}

// pool adds r to the results: a run of a bot measured before (another
// round) joins its result, with the p99 of each round kept.
func pool(results []result, r result) []result {
	r.roundsP99 = []time.Duration{r.pct(0.99)}
	for i := range results {
		p := &results[i]
		if p.name != r.name {
			continue
		}
		p.updates += r.updates
		p.lost += r.lost
		p.elapsed += r.elapsed
		p.cpu += r.cpu
		p.peakRSSKB = max(p.peakRSSKB, r.peakRSSKB)
		p.broadcast += r.broadcast
		p.problems += r.problems
		p.redis = p.redis.plus(r.redis)
		p.latencies = append(p.latencies, r.latencies...)
		slices.Sort(p.latencies)
		p.roundsP99 = append(p.roundsP99, r.roundsP99...)
		return results
	}
	return append(results, r)
}

// appRun, as measure's broadcast, runs the shop with the Mini App on and
// has the buyers browse the app's API (webapp.go), labelled appLabel.
const (
	appRun   = -1
	appLabel = "shop Mini App API"
)

// measure starts one bot, drives the buyers through it and stops it.
func measure(ctx context.Context, c config, rdb redis.UniversalClient, label string, argv []string, upstreamURL string, broadcast int) (result, error) {
	res := result{name: label}
	app := broadcast == appRun
	broadcast = max(broadcast, 0)
	var mu sync.Mutex
	fake, err := botapitest.New(botapitest.WithToken(token), botapitest.OnViolation(func(err error) {
		mu.Lock()
		res.problems++
		if res.problems <= 3 {
			fmt.Fprintln(os.Stderr, "Bot API schema violation:", err)
		}
		mu.Unlock()
	}))
	if err != nil {
		return res, err
	}
	defer fake.Close()
	if err := clearRedis(ctx, rdb); err != nil {
		return res, err
	}
	var env []string
	if len(argv) == 1 {
		env = append(env, roleEnv+"=floor")
	}
	if app {
		env = append(env, "WEBAPP_URL=https://loadbench.example"+appPath)
	}
	if c.profile != "" && strings.HasPrefix(label, "shop") && broadcast == 0 {
		env = append(env, "SHOPBOT_CPUPROFILE="+c.profile)
	}
	bp, err := startBot(ctx, c, fake, upstreamURL, argv, env, filepath.Join(c.logDir, strings.ReplaceAll(label, " ", "-")+".log"))
	if err != nil {
		return res, err
	}
	defer bp.stop()
	d, addr, cmd := bp.d, bp.addr, bp.cmd
	if broadcast > 0 {
		if err := startBroadcast(ctx, d, rdb, broadcast); err != nil {
			return res, err
		}
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	redis0, err := readCounters(ctx, rdb)
	if err != nil {
		return res, err
	}
	sent0 := len(fake.CallsFor("sendPhoto"))
	lat, lost, elapsed := drive(ctx, c, d, addr, app)
	res.latencies, res.lost, res.elapsed = lat, lost, elapsed
	cpu1, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	redis1, err := readCounters(ctx, rdb)
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	res.redis = redis1.since(redis0)
	res.peakRSSKB = peakRSS(cmd.Process.Pid)
	res.updates = len(res.latencies)
	if broadcast > 0 {
		for _, call := range fake.CallsFor("sendPhoto")[sent0:] {
			if call.Int("chat_id") >= broadcastBuyer {
				res.broadcast++
			}
		}
	}
	slices.Sort(res.latencies)
	return res, ctx.Err()
}

// drive has c.buyers buyers browse through d (the Mini App's API on addr
// when app), all at once, and returns the latencies of their answered
// actions, how many were lost and how long it took.
func drive(ctx context.Context, c config, d *driver, addr string, app bool) (lat []time.Duration, lost int, elapsed time.Duration) {
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for i := range c.buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := d.buyer(int64(firstBuyer + i))
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			if c.think > 0 { // arrive spread over one think time
				sleep(ctx, time.Duration(rng.Int64N(int64(c.think))))
			}
			var l []time.Duration
			var n int
			if app {
				l, n = newAppBuyer(d.client, addr, int64(firstBuyer+i)).browseApp(ctx, c.presses, c.think, rng)
			} else {
				l, n = b.browse(ctx, c.presses, c.think, rng)
			}
			mu.Lock()
			lat = append(lat, l...)
			lost += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return lat, lost, time.Since(start)
}

// botProc is a bot's process started for a run, with the driver that
// plays Telegram for it.
type botProc struct {
	*proc
	d *driver
}

// startBot starts argv as a bot behind fake (startProc) with a driver
// that delivers the buyers' updates to it.
func startBot(ctx context.Context, c config, fake *botapitest.Server, upstreamURL string, argv, env []string, logPath string) (*botProc, error) {
	webhooks := 0
	if argv[len(argv)-1] == "run" {
		webhooks = 1
	}
	p, err := startProc(ctx, c, fake, upstreamURL, argv, env, logPath, webhooks)
	if err != nil {
		return nil, err
	}
	d := newDriver(fake, []string{p.hook()}, c.timeout)
	stop := p.stop
	p.stop = func() { d.close(); stop() }
	return &botProc{proc: p, d: d}, nil
}

// proc is a bot's process started for a run.
type proc struct {
	cmd  *exec.Cmd
	addr string // where it serves its webhook
	stop func() // stops the bot: SIGTERM, then SIGKILL after 20 s
}

// hook is the URL of the process's webhook.
func (p *proc) hook() string { return "http://" + p.addr + hookPath }

// startProc starts argv as a bot behind fake, its environment botEnv's and
// env, its output in logPath, and waits until it serves and fake has seen
// webhooks setWebhook calls (the shop, "run", sets its webhook at every
// start: the n-th replica of a run waits for the n-th; 0 for the floor,
// which is simply served).
func startProc(ctx context.Context, c config, fake *botapitest.Server, upstreamURL string, argv, env []string, logPath string, webhooks int) (*proc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(botEnv(c, fake, upstreamURL, addr), env...)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p := &proc{cmd: cmd, addr: addr, stop: func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
	}}
	if err := ready(ctx, fake, addr, exited, webhooks); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return p, nil
}

// botEnv is a bot's environment: the fake Telegram, the upstream, the
// Redis (one server, or -cluster's cluster) and the webhook served on addr. The metrics listener is off, so
// two benchmarks on one machine (or a shop running beside it) never meet
// on its port.
func botEnv(c config, fake *botapitest.Server, upstreamURL, addr string) []string {
	single, cluster := c.redisURL, ""
	if e := c.endpoint(); e.Mode == redisstore.ModeCluster {
		single, cluster = "", e.URL
	}
	// Each run is a shop of its own on a flushed database: its own
	// journal directory (shared by the run's replicas), so a run never
	// continues the store of the run before it.
	journal := "off"
	if c.journalRoot != "" {
		journal = filepath.Join(c.journalRoot, "journal-"+strings.NewReplacer(":", "-", "/", "-").Replace(fake.URL()))
	}
	return append(os.Environ(),
		"JOURNAL_DIR="+journal,
		"TELEGRAM_TOKEN="+token, "TELEGRAM_API_URL="+fake.URL(),
		"RESELLER_BASE_URL="+upstreamURL, "RESELLER_API_KEY="+upstreamID,
		"REDIS_URL="+single, "REDIS_SENTINEL_URL=", "REDIS_CLUSTER_URL="+cluster,
		"WEBHOOK_URL=https://loadbench.example"+hookPath, "WEBHOOK_SECRET="+secret,
		"HTTP_ADDR="+addr, "ADMIN_IDS="+strconv.Itoa(admin), "METRICS_ADDR=off",
	)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// cpuTime returns the user and system CPU time process pid used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the bot's CPU time: %w", err)
	}
	_, rest, ok := bytes.Cut(b, []byte(") "))
	f := strings.Fields(string(rest))
	if !ok || len(f) < 13 {
		return 0, errors.New("unexpected /proc/pid/stat")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

func peakRSS(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// postJSON posts v to url as JSON.
func postJSON(client *http.Client, url string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return nil
}
