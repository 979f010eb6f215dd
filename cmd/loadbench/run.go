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
	broadcast int // broadcast messages sent during the run
	problems  int // Bot API schema violations
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

func run(c config) error {
	results, err := measureAll(c)
	if err != nil {
		return err
	}
	report(os.Stdout, c, results)
	return nil
}

// measureAll runs every bot of c.bots in turn.
func measureAll(c config) ([]result, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s: %w (start redis-server, or pass -redis)", c.redisURL, err)
	}
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if c.logDir == "" {
		c.logDir = dir
	}
	shopBin := filepath.Join(dir, "shopbot")
	fmt.Fprintln(os.Stderr, "building the shop...")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", shopBin, "shopbot/cmd/shopbot").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the shop: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}

	sim := resellersim.New(resellersim.Config{APIKey: upstreamID, Seed: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	upstream := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = upstream.Serve(ln) }()
	defer upstream.Close()
	upstreamURL := "http://" + ln.Addr().String() + "/api/v1"

	var results []result
	for _, name := range strings.Split(c.bots, ",") {
		var cmd []string
		switch strings.TrimSpace(name) {
		case "floor":
			cmd = []string{self}
		case "shop":
			cmd = []string{shopBin, "run"}
		default:
			return nil, fmt.Errorf("-bots: unknown bot %q (floor, shop)", name)
		}
		runs := []int{0}
		if name == "shop" && c.broadcast > 0 {
			runs = append(runs, c.broadcast)
		}
		for _, bc := range runs {
			label := name
			if bc > 0 {
				label = fmt.Sprintf("shop+broadcast %d", bc)
			}
			fmt.Fprintf(os.Stderr, "running %s: %d buyers, %d presses, think %v...\n", label, c.buyers, c.presses, c.think)
			r, err := measure(ctx, c, rdb, label, cmd, upstreamURL, bc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", label, err)
			}
			results = append(results, r)
		}
	}
	return results, nil
}

// measure starts one bot, drives the buyers through it and stops it.
func measure(ctx context.Context, c config, rdb *redis.Client, label string, argv []string, upstreamURL string, broadcast int) (result, error) {
	res := result{name: label}
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
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return res, err
	}
	addr, err := freeAddr()
	if err != nil {
		return res, err
	}
	logFile, err := os.Create(filepath.Join(c.logDir, strings.ReplaceAll(label, " ", "-")+".log"))
	if err != nil {
		return res, err
	}
	defer logFile.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(),
		"TELEGRAM_TOKEN="+token, "TELEGRAM_API_URL="+fake.URL(),
		"RESELLER_BASE_URL="+upstreamURL, "RESELLER_API_KEY="+upstreamID,
		"REDIS_URL="+c.redisURL, "REDIS_SENTINEL_URL=", "REDIS_CLUSTER_URL=",
		"WEBHOOK_URL=https://loadbench.example"+hookPath, "WEBHOOK_SECRET="+secret,
		"HTTP_ADDR="+addr, "ADMIN_IDS="+strconv.Itoa(admin),
	)
	if len(argv) == 1 {
		cmd.Env = append(cmd.Env, roleEnv+"=floor")
	}
	if c.profile != "" && strings.HasPrefix(label, "shop") && broadcast == 0 {
		cmd.Env = append(cmd.Env, "SHOPBOT_CPUPROFILE="+c.profile)
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	d := newDriver(fake, "http://"+addr+hookPath, c.timeout)
	defer d.close()
	if err := d.ready(ctx, exited, argv[len(argv)-1] == "run"); err != nil {
		return res, fmt.Errorf("%w (log: %s)", err, logFile.Name())
	}
	if broadcast > 0 {
		if err := startBroadcast(ctx, d, rdb, broadcast); err != nil {
			return res, err
		}
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	sent0 := len(fake.CallsFor("sendMessage"))
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
			lat, lost := b.browse(ctx, c.presses, c.think, rng)
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.lost += lost
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	cpu1, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	res.peakRSSKB = peakRSS(cmd.Process.Pid)
	res.updates = len(res.latencies)
	if broadcast > 0 {
		for _, call := range fake.CallsFor("sendMessage")[sent0:] {
			if call.Int("chat_id") >= broadcastBuyer {
				res.broadcast++
			}
		}
	}
	slices.Sort(res.latencies)
	return res, ctx.Err()
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
