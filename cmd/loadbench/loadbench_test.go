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
// press (the shop's Mini App every request), the broadcast run sends its
// photo to the broadcast's buyers while the others browse, the purchase
// mode's buyers get their codes, and the report has the figures and
// ratios. It needs real Redis
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
		broadcast: 20, rounds: 2, webapp: true, timeout: 30 * time.Second, logDir: t.TempDir(), purchases: 2, purchaseBuyers: 2}
	m, err := measureAll(c)
	if err != nil {
		t.Fatal(err)
	}
	report(&out, c, m.results)
	reportPurchases(&out, c, m.redis, m.purchases)
	for _, r := range m.results {
		runs := 1
		if strings.HasPrefix(r.name, "shop") && r.name != appLabel {
			runs = c.rounds // pooled
		}
		if r.lost != 0 || r.updates != runs*c.buyers*(c.presses+1) || r.problems != 0 {
			t.Fatalf("%s: %d answered, %d lost, %d schema violations\n%s", r.name, r.updates, r.lost, r.problems, out.String())
		}
		// The floor does a GET and a SET per update; the counters are the
		// server's, which other clients only add to.
		if r.name == "floor" && r.redisOpsPer() < 2 {
			t.Fatalf("floor: %.2f Redis commands per update, want at least its GET and SET\n%s", r.redisOpsPer(), out.String())
		}
		// The broadcast run sends the admin's photo to its buyers while
		// they browse.
		if strings.HasPrefix(r.name, "shop+broadcast") && r.broadcast == 0 {
			t.Fatalf("%s: no broadcast photo went out during the run\n%s", r.name, out.String())
		}
	}
	for _, r := range m.purchases {
		if r.paid != c.purchases || r.failed != 0 || r.reads < int64(2*r.paid) {
			t.Fatalf("%s: %d paid, %d failed, %d status reads\n%s", r.name, r.paid, r.failed, r.reads, out.String())
		}
	}
	for _, want := range []string{"| floor |", "| shop |", "| " + appLabel + " |", "shop / floor: throughput", "shop during a broadcast / shop", "p99 of each round, without / with the broadcast", "Mini App API request / chat update",
		"| shop purchases (as shipped) |", "shipped / baseline: payment to codes"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// The replica mode runs the shop as 1 and 2 processes behind one webhook
// with a few buyers: every press is answered, each replica gets updates,
// Redis's commands are counted, and the report has each count and the
// ratio to the first. It needs real Redis (TEST_REDIS_URL; database 11 of
// that server is flushed); with LOADBENCH_CLUSTER_URL, a Redis Cluster
// whose shopbot:v1: and floor: keys it may delete (not
// TEST_REDIS_CLUSTER_URL: cmd/shopbot's tests use those keys there), it
// runs on that cluster too.
func TestLoadbenchReplicas(t *testing.T) {
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
	u.Path = "/11"
	setups := []struct{ name, redis, cluster string }{{"one server", u.String(), ""}}
	if cl := os.Getenv("LOADBENCH_CLUSTER_URL"); cl != "" {
		setups = append(setups, struct{ name, redis, cluster string }{"cluster", "", cl})
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			c := config{buyers: 4, presses: 3, redisURL: s.redis, clusterURL: s.cluster, replicas: []int{1, 2},
				idle: 10 * time.Millisecond, timeout: 30 * time.Second, logDir: t.TempDir()}
			m, err := measureAll(c)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			reportReplicas(&out, c, m.redis, m.replicas)
			if len(m.replicas) != 2 {
				t.Fatalf("%d results for 2 counts of replicas\n%s", len(m.replicas), out.String())
			}
			for i, r := range m.replicas {
				if r.replicas != c.replicas[i] || r.lost != 0 || r.updates != c.buyers*(c.presses+1) || r.problems != 0 {
					t.Fatalf("%s: %d answered, %d lost, %d schema violations\n%s", r.name, r.updates, r.lost, r.problems, out.String())
				}
				if r.redis.ops < int64(r.updates) {
					t.Fatalf("%s: %d Redis commands for %d updates\n%s", r.name, r.redis.ops, r.updates, out.String())
				}
				if s.cluster != "" && len(r.redis.masters) < 2 {
					t.Fatalf("%s: counters of %d masters on a cluster\n%s", r.name, len(r.redis.masters), out.String())
				}
			}
			for _, want := range []string{"| 1 | ", "| 2 | ", "2 replicas / 1: throughput", "Redis commands per update, 2 replicas: ", "updates per core-second of the busiest master"} {
				if !strings.Contains(out.String(), want) {
					t.Fatalf("report lacks %q:\n%s", want, out.String())
				}
			}
			t.Log(out.String())
		})
	}
}
