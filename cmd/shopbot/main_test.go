package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/botapitest"
)

// syncBuffer is a bytes.Buffer safe for the logger and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The whole program: it starts on the embedded store with a warning, serves
// /start, and on SIGTERM (a cancelled context) exits 0 well within 10 s.
func TestServeStartsAndShutsDownGracefully(t *testing.T) {
	const token = "424242:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-secret"
	fake := botapitest.NewT(t, botapitest.WithToken(token))
	getenv := env(map[string]string{
		"TELEGRAM_TOKEN": token, "TELEGRAM_API_URL": fake.URL(), "HTTP_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0",
		"JOURNAL_DIR": t.TempDir(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, getenv, strings.NewReader(""), &bytes.Buffer{}, &stderr) }()

	fake.SendCommand(77, "start", "")
	wctx, wcancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer wcancel()
	if _, err := fake.WaitFor(wctx, "sendMessage", 1); err != nil {
		t.Fatalf("no menu: %v\n%s", err, stderr.String())
	}
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit within 10 s")
	}
	t.Logf("shutdown took %v", time.Since(start))
	logs := stderr.String()
	if !strings.Contains(logs, "NOT DURABLE") {
		t.Errorf("no warning about the embedded store:\n%s", logs)
	}
	if strings.Contains(logs, token) || strings.Contains(logs, goodKey) {
		t.Errorf("a secret reached the logs:\n%s", logs)
	}
}

// A token the Bot API rejects stops the program with a clear error that
// does not repeat the token.
func TestServeWithRejectedTokenExplainsWithoutTheToken(t *testing.T) {
	const token = "424242:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB-secret"
	fake := botapitest.NewT(t) // expects a different token: 401
	var stderr syncBuffer
	code := run(context.Background(), nil, env(map[string]string{
		"TELEGRAM_TOKEN": token, "TELEGRAM_API_URL": fake.URL(), "HTTP_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0",
		"JOURNAL_DIR": t.TempDir(),
	}), strings.NewReader(""), &bytes.Buffer{}, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "getMe") || strings.Contains(stderr.String(), token) {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

// Durations in JSON logs are milliseconds under a key that says so, never
// nanoseconds: a time.Duration that reaches the logger is converted.
func TestLogDurationsAreMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "info")
	log.Info("x", "wait", 1500*time.Millisecond, "retry_after_s", 3.0, "took_ms", 2*time.Second)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if got["wait_ms"] != 1500.0 || got["retry_after_s"] != 3.0 || got["took_ms"] != 2000.0 {
		t.Fatalf("durations logged as %s", buf.String())
	}
	if _, ok := got["wait"]; ok {
		t.Fatalf("a duration under a key without its unit: %s", buf.String())
	}
}
