//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server process the chaos run owns, configured as
// the operator guide recommends for a single node (appendonly yes,
// appendfsync everysec), so the run can crash it the way a machine does:
// SIGKILL, then a restart that replays its append-only file (the last
// second of acknowledged writes may be gone). It can also be restarted on
// a backup taken minutes earlier, as an operator restoring one would.
type redisServer struct {
	bin  string
	dir  string // the server's data directory (AOF)
	port int
	log  string

	// ops keeps the run's Redis faults apart: a crash, a backup and a
	// restore each have the server to themselves (a backup taken while a
	// crash has it down would fail, and the run would lose its restore).
	ops sync.Mutex

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// ownRedis reports whether the run starts its own Redis: CHAOS_REDIS=own,
// or unset with redis-server on the PATH. CHAOS_REDIS=shared uses
// TEST_REDIS_URL's server (no crashes or restores then).
func ownRedis() (string, bool) {
	switch os.Getenv("CHAOS_REDIS") {
	case "shared":
		return "", false
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", false
	}
	return bin, true
}

// startRedisServer starts redis-server on a free port with its data in
// dir, logging to logDir/redis.log, and waits until it answers.
func startRedisServer(t *testing.T, bin, dir, logDir string) *redisServer {
	t.Helper()
	s := &redisServer{bin: bin, dir: dir, port: freePort(t), log: filepath.Join(logDir, "redis.log")}
	if err := s.start(true); err != nil {
		t.Fatalf("chaos: start redis-server: %v", err)
	}
	t.Cleanup(func() { s.kill() })
	return s
}

func (s *redisServer) url() string { return "redis://127.0.0.1:" + strconv.Itoa(s.port) }

// start runs the server on its directory (replaying the AOF there, or
// loading dump.rdb when aof is false) and waits until it answers PING.
func (s *redisServer) start(aof bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	appendonly := "no"
	if aof {
		appendonly = "yes"
	}
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--appendonly", appendonly, "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction",
		"--daemonize", "no", "--protected-mode", "no")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(s.port), MaxRetries: -1})
	defer rdb.Close()
	for {
		err := rdb.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server exited at start (see %s)", s.log)
		case <-ctx.Done():
			return fmt.Errorf("redis-server did not answer within 60 s: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone: whatever the
// server had not yet written to its AOF is lost.
func (s *redisServer) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// crash kills the server with SIGKILL, keeps it down for down and starts
// it again from its append-only file.
func (s *redisServer) crash(down time.Duration) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	s.kill()
	time.Sleep(down)
	return s.start(true)
}

// backup makes a point-in-time copy of the dataset (BGSAVE, then the RDB
// file copied aside), as a nightly backup job would, and returns its path.
func (s *redisServer) backup(ctx context.Context, rdb *redis.Client, to string) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	// The server may be reloading its AOF after a crash, or rewriting it
	// (BGSAVE SCHEDULE then runs the save right after): errors are retried
	// for a while, as a backup job would. A save is done when the count of
	// saves since the start (rdb_saves) went up and none is running.
	var before int64
	var err error
	for range 600 {
		if before, _, err = rdbSaves(ctx, rdb); err == nil {
			break
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
	if err != nil {
		return fmt.Errorf("INFO persistence: %w", err)
	}
	if err := rdb.Do(ctx, "BGSAVE", "SCHEDULE").Err(); err != nil && !strings.Contains(err.Error(), "in progress") {
		return fmt.Errorf("BGSAVE SCHEDULE: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, status, err := rdbSaves(ctx, rdb)
		if err == nil && n > before {
			if status != "ok" {
				return fmt.Errorf("BGSAVE failed (rdb_last_bgsave_status %s; see the server's log)", status)
			}
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no save within 60 s (rdb_saves %d, before %d, err %v)", n, before, err)
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return ctx.Err()
		}
	}
	return copyFile(filepath.Join(s.dir, "dump.rdb"), to)
}

// rdbSaves reads how many RDB saves the server made since it started and
// the last one's status (INFO persistence), once no save is running.
func rdbSaves(ctx context.Context, rdb *redis.Client) (int64, string, error) {
	info, err := rdb.Info(ctx, "persistence").Result()
	if err != nil {
		return 0, "", err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	if fields["rdb_bgsave_in_progress"] != "0" {
		return 0, "", errors.New("a save is running")
	}
	n, err := strconv.ParseInt(fields["rdb_saves"], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("rdb_saves %q: %w", fields["rdb_saves"], err)
	}
	return n, fields["rdb_last_bgsave_status"], nil
}

// restore kills the server with SIGKILL, throws its data directory away,
// starts it on the backup and turns the append-only file on again (Redis
// rewrites it from the restored dataset).
func (s *redisServer) restore(ctx context.Context, backup string) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	s.kill()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return err
		}
	}
	if backup != "" { // none: the server comes back empty, its volume lost
		if err := copyFile(backup, filepath.Join(s.dir, "dump.rdb")); err != nil {
			return err
		}
	}
	if err := s.start(false); err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(s.port)})
	defer rdb.Close()
	if err := rdb.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		return err
	}
	for {
		info, err := rdb.Info(ctx, "persistence").Result()
		if err == nil && strings.Contains(info, "aof_enabled:1") && strings.Contains(info, "aof_rewrite_in_progress:0") &&
			!strings.Contains(info, "aof_rewrite_scheduled:1") {
			return nil
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return ctx.Err()
		}
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
