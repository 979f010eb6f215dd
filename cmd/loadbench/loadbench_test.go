package main

import (
	"bytes"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the floor's process, as the
// benchmark's own binary does.
func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "floor" {
		floorMain()
	}
	os.Exit(m.Run())
}

// The benchmark runs end to end with a few buyers: both bots answer every
// press, and the report has the figures and ratios. It needs real Redis
// (TEST_REDIS_URL; database 14 of that server is flushed).
func TestLoadbenchRunsBothBots(t *testing.T) {
	raw := os.Getenv("TEST_REDIS_URL")
	if raw == "" {
		t.Skip("TEST_REDIS_URL not set")
	}
	if testing.Short() {
		t.Skip("builds the shop")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/14"
	var out bytes.Buffer
	c := config{buyers: 5, presses: 3, think: 10 * time.Millisecond, redisURL: u.String(), bots: "floor,shop",
		broadcast: 20, timeout: 30 * time.Second, logDir: t.TempDir()}
	rs, err := measureAll(c)
	if err != nil {
		t.Fatal(err)
	}
	report(&out, c, rs)
	for _, r := range rs {
		if r.lost != 0 || r.updates != c.buyers*(c.presses+1) || r.problems != 0 {
			t.Fatalf("%s: %d answered, %d lost, %d schema violations\n%s", r.name, r.updates, r.lost, r.problems, out.String())
		}
	}
	for _, want := range []string{"| floor |", "| shop |", "shop / floor: throughput", "shop during a broadcast / shop"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, out.String())
		}
	}
}
