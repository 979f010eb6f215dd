//go:build linux

package main

import (
	"context"
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
	s.kill()
	time.Sleep(down)
	return s.start(true)
}

// backup makes a point-in-time copy of the dataset (BGSAVE, then the RDB
// file copied aside), as a nightly backup job would, and returns its path.
func (s *redisServer) backup(ctx context.Context, rdb *redis.Client, to string) error {
	before, err := rdb.LastSave(ctx).Result()
	if err != nil {
		return err
	}
	if err := rdb.BgSave(ctx).Err(); err != nil && !strings.Contains(err.Error(), "in progress") {
		return err
	}
	for {
		at, err := rdb.LastSave(ctx).Result()
		if err == nil && at > before {
			break
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return ctx.Err()
		}
	}
	return copyFile(filepath.Join(s.dir, "dump.rdb"), to)
}

// restore kills the server with SIGKILL, throws its data directory away,
// starts it on the backup and turns the append-only file on again (Redis
// rewrites it from the restored dataset).
func (s *redisServer) restore(ctx context.Context, backup string) error {
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
	if err := copyFile(backup, filepath.Join(s.dir, "dump.rdb")); err != nil {
		return err
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
