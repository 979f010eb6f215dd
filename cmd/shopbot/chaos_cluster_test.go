//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The chaos test's shop: N replicas of the real binary, each a subprocess
// with the production configuration, sharing one Redis. The cluster starts,
// kills (SIGKILL), restarts, freezes (SIGSTOP) and thaws (SIGCONT) them.

// buildShopbot builds the real binary once into dir (without -race: the
// replicas are the system under test, not the test).
func buildShopbot(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("chaos: the go command is needed to build the shopbot binary: %v", err)
	}
	bin := filepath.Join(dir, "shopbot")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chaos: go build: %v\n%s", err, out)
	}
	return bin
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("chaos: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// replica is one slot of the cluster: a fixed HTTP port (the webhook
// target) and the process currently serving it, if any.
type replica struct {
	slot        int
	port        int
	metricsPort int // METRICS_ADDR's port; 0: any free one
	log         *os.File

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been reaped
	starts int
}

// cluster runs the replicas.
type cluster struct {
	t   *testing.T
	bin string
	env []string

	mu       sync.Mutex // serialises kills, restarts, freezes and thaws
	replicas []*replica
	frozen   bool
	kills    int
	crashes  int // exits nobody asked for
	stopping bool
}

func newCluster(t *testing.T, bin, logDir string, n int, env []string, logPrefix string) *cluster {
	// The replicas share one journal, as on one host: a fresh one unless
	// env names one (the fakes reuse charge ids and upstream numbers from
	// run to run, so a shared one holds another shop's look-alikes).
	env = append([]string(nil), env...)
	if !slices.ContainsFunc(env, func(v string) bool { return strings.HasPrefix(v, "JOURNAL_DIR=") }) {
		env = append(env, "JOURNAL_DIR="+t.TempDir())
	}
	c := &cluster{t: t, bin: bin, env: env}
	for i := range n {
		f, err := os.OpenFile(filepath.Join(logDir, fmt.Sprintf("%sreplica-%d.log", logPrefix, i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatalf("chaos: replica log: %v", err)
		}
		c.replicas = append(c.replicas, &replica{slot: i, port: freePort(t), log: f})
	}
	t.Cleanup(c.shutdown)
	return c
}

// exposeMetrics gives every replica a fixed METRICS_ADDR port, for a
// scraper to be pointed at, and returns them. Call it before starting.
func (c *cluster) exposeMetrics() []int {
	out := make([]int, len(c.replicas))
	for i, r := range c.replicas {
		r.metricsPort = freePort(c.t)
		out[i] = r.metricsPort
	}
	return out
}

// ports returns the replicas' HTTP ports (webhook targets).
func (c *cluster) ports() []int {
	out := make([]int, len(c.replicas))
	for i, r := range c.replicas {
		out[i] = r.port
	}
	return out
}

// startLocked starts slot r's process. A frozen cluster freezes it at once,
// so nothing runs while Redis is being snapshotted or rolled back.
func (c *cluster) startLocked(r *replica) error {
	r.starts++
	fmt.Fprintf(r.log, "\n=== chaos: start #%d of replica %d at %s\n", r.starts, r.slot, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(c.bin)
	cmd.Env = append(append([]string(nil), c.env...), "HTTP_ADDR=127.0.0.1:"+strconv.Itoa(r.port), "METRICS_ADDR=127.0.0.1:"+strconv.Itoa(r.metricsPort))
	cmd.Stdout, cmd.Stderr = r.log, r.log
	// The kernel kills the replica if the test process dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start replica %d: %w", r.slot, err)
	}
	exited := make(chan struct{})
	r.cmd, r.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		close(exited) // first: killLocked waits for it with c.mu held
		c.mu.Lock()
		if r.cmd == cmd && !c.stopping {
			// Not a kill of ours: the replica died on its own.
			c.crashes++
			fmt.Fprintf(r.log, "\n=== chaos: replica %d exited on its own: %v\n", r.slot, err)
			r.cmd = nil
		}
		c.mu.Unlock()
	}()
	if c.frozen {
		_ = cmd.Process.Signal(syscall.SIGSTOP)
	}
	return nil
}

// startAll starts every replica and waits until each answers /healthz.
func (c *cluster) startAll(ctx context.Context) error {
	c.mu.Lock()
	for _, r := range c.replicas {
		if err := c.startLocked(r); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.mu.Unlock()
	for _, r := range c.replicas {
		if err := waitHealthy(ctx, r.port); err != nil {
			return fmt.Errorf("replica %d: %w (log: %s)", r.slot, err, r.log.Name())
		}
	}
	return nil
}

func waitHealthy(ctx context.Context, port int) error {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("not healthy in time")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL to a running replica, the pick-th modulo their number,
// and returns its slot (-1 when none runs).
func (c *cluster) kill(pick int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var running []*replica
	for _, r := range c.replicas {
		if r.cmd != nil {
			running = append(running, r)
		}
	}
	if len(running) == 0 {
		return -1
	}
	r := running[pick%len(running)]
	c.killLocked(r)
	c.kills++
	return r.slot
}

func (c *cluster) killLocked(r *replica) {
	cmd, exited := r.cmd, r.exited
	r.cmd = nil
	fmt.Fprintf(r.log, "\n=== chaos: SIGKILL replica %d at %s\n", r.slot, time.Now().Format(time.RFC3339Nano))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	if c.frozen {
		_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies once continued
	}
	<-exited
}

// restart starts every slot that has no process.
func (c *cluster) restart() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.replicas {
		if r.cmd == nil {
			if err := c.startLocked(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// freeze stops every replica (SIGSTOP) and keeps new ones stopped until
// thaw; the caller must call thaw.
func (c *cluster) freeze() {
	c.mu.Lock()
	c.frozen = true
	for _, r := range c.replicas {
		if r.cmd != nil {
			_ = r.cmd.Process.Signal(syscall.SIGSTOP)
		}
	}
	// The lock stays held: no kill or restart while frozen.
}

// thaw continues every replica (SIGCONT).
func (c *cluster) thaw() {
	c.frozen = false
	for _, r := range c.replicas {
		if r.cmd != nil {
			_ = r.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	c.mu.Unlock()
}

// counts returns the kills made and the unexpected exits seen.
func (c *cluster) counts() (kills, crashes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kills, c.crashes
}

// stopGracefully sends SIGTERM to every replica and waits for them to end
// (SIGKILL after 15 s).
func (c *cluster) stopGracefully() {
	c.mu.Lock()
	c.stopping = true
	var waits []chan struct{}
	var cmds []*exec.Cmd
	for _, r := range c.replicas {
		if r.cmd != nil {
			_ = r.cmd.Process.Signal(syscall.SIGCONT)
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
			waits = append(waits, r.exited)
			cmds = append(cmds, r.cmd)
			r.cmd = nil
		}
	}
	c.mu.Unlock()
	for i, w := range waits {
		select {
		case <-w:
		case <-time.After(15 * time.Second):
			_ = cmds[i].Process.Signal(syscall.SIGKILL)
			<-w
		}
	}
}

// shutdown kills whatever still runs and closes the logs.
func (c *cluster) shutdown() {
	c.stopGracefully()
	for _, r := range c.replicas {
		_ = r.log.Close()
	}
}
