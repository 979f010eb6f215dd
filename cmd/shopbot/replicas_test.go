package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/bot/botapitest"
	"shopbot/state"
	"shopbot/state/redisstore"
)

// registerAt puts a live replica of version into the registry of the Redis
// at redisURL.
func registerAt(t *testing.T, redisURL, id, version string, gen, minPeer int) {
	t.Helper()
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	reg := redisstore.NewReplicas(rdb, redisstore.DefaultPrefix)
	if err := reg.Beat(context.Background(), redisstore.Replica{ID: id, Version: version, Gen: gen, MinPeer: minPeer, Host: "other-host", Started: time.Now()}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// `shopbot check` names the versions running on the shop's Redis and says
// whether this build would start beside them.
func TestCheckReportsTheRunningVersions(t *testing.T) {
	getenv, _, _ := checkEnv(t, nil)
	registerAt(t, getenv("REDIS_URL"), "a", "1.4.0", state.SchemaGen, 0)
	registerAt(t, getenv("REDIS_URL"), "b", "1.4.0", state.SchemaGen, 0)
	code, out := runCheck(t, getenv, "--allow-volatile")
	if code != 0 || !strings.Contains(out, "ok    replicas  2 running: 1.4.0 (gen 1) x2; this build: dev (gen 1, runs beside gen 0 and later) starts beside them") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	registerAt(t, getenv("REDIS_URL"), "c", "9.0.0", state.SchemaGen+5, state.SchemaGen+5)
	code, out = runCheck(t, getenv, "--allow-volatile")
	if code != 0 || !strings.Contains(out, "warn  replicas  3 running: 1.4.0 (gen 1) x2, 9.0.0 (gen 6) x1; this build: dev (gen 1, runs beside gen 0 and later) would refuse to start beside 9.0.0 (gen 6) x1") ||
		!strings.Contains(out, "cannot be rolling") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// A build started while a replica it cannot run beside is live refuses to
// start, names both versions, and changes nothing of the store.
func TestServeRefusesToStartBesideAnIncompatibleVersion(t *testing.T) {
	const token = "424242:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCC-secret"
	getenv0, _, _ := checkEnv(t, nil)
	redisURL := getenv0("REDIS_URL")
	registerAt(t, redisURL, "newer", "9.0.0", state.SchemaGen+5, state.SchemaGen+5)
	fake := botapitest.NewT(t, botapitest.WithToken(token))
	var stderr syncBuffer
	code := run(context.Background(), nil, env(map[string]string{
		"TELEGRAM_TOKEN": token, "TELEGRAM_API_URL": fake.URL(), "HTTP_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0",
		"JOURNAL_DIR": t.TempDir(), "REDIS_URL": redisURL,
	}), strings.NewReader(""), &bytes.Buffer{}, &stderr)
	out := stderr.String()
	if code == 0 || !strings.Contains(out, "refusing to start") || !strings.Contains(out, "9.0.0") ||
		!strings.Contains(out, "version dev (schema generation 1") || !strings.Contains(out, "Upgrades") {
		t.Fatalf("exit %d, stderr:\n%s", code, out)
	}
	if n := len(fake.Calls()); n != 0 {
		t.Fatalf("the refused build made %d Bot API calls", n)
	}
	opt, _ := redis.ParseURL(redisURL)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if n, err := rdb.Exists(context.Background(), redisstore.DefaultPrefix+redisstore.StoreEpochKey).Result(); err != nil || n != 0 {
		t.Fatalf("the refused build touched the store (epoch written: %d, %v)", n, err)
	}
}
