// Command loadbench measures the shop under many buyers, beside a floor:
// a go-telegram/bot bot that only answers and does one Redis GET/SET per
// update. Both run as their own processes, built as shipped, in webhook
// mode behind the same fake Bot API server and the same real Redis, one
// after the other in one run; simulated buyers press menu buttons with a
// think time. It prints throughput, latency and CPU per update for both
// and their ratios.
//
//	go run ./cmd/loadbench                          # 1,000 buyers, 1 s think, 12 presses
//	go run ./cmd/loadbench -buyers 200 -think 0     # as fast as the bot answers
//	go run ./cmd/loadbench -bots shop -broadcast 5000 -rounds 3  # browsing with and without a photo broadcast to 5,000
//	go run ./cmd/loadbench -webapp                  # the Mini App's API beside the chat
//	go run ./cmd/loadbench -bots= -purchases 200    # payment to codes, 200 purchases
//	go run ./cmd/loadbench -bots= -replicas 1,2,4 -buyers 400 -think 0  # 1, 2 and 4 shop processes on one Redis
//	go run ./cmd/loadbench -bots= -replicas 1,2,4 -cluster 'redis://127.0.0.1:7001?addr=127.0.0.1:7002'  # on a Redis Cluster
//
// It needs a Redis it may flush (-redis, default database 15 of the local
// server; or -cluster, whose shop and floor keys it deletes) and the go
// tool (it builds the shop). Its Redis figures are the servers' own
// counters (INFO), so another client of the same server adds to them.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// lines is how many product-line buttons the floor's menu has, like the
// shop's main menu.
const lines = 8

type config struct {
	buyers, presses int
	think           time.Duration
	redisURL        string
	journalRoot     string // where each run's journal directory is made (measureAll)
	broadcast       int
	rounds          int // -broadcast: runs without and with it, alternating, pooled
	bots            string
	profile         string
	timeout         time.Duration
	logDir          string
	webapp          bool
	purchases       int           // the purchase mode (purchase.go): paid purchases to time
	purchaseBuyers  int           // buyers purchasing at once
	clusterURL      string        // a Redis Cluster instead of redisURL
	replicas        []int         // the replica mode (replicas.go): counts of shop processes
	idle            time.Duration // the replica mode: the replicas' idle window before the buyers
}

func main() {
	if os.Getenv(roleEnv) == "floor" {
		floorMain()
	}
	var c config
	flag.IntVar(&c.buyers, "buyers", 1000, "simulated buyers")
	flag.IntVar(&c.presses, "presses", 12, "button presses per buyer (after /start)")
	flag.DurationVar(&c.think, "think", time.Second, "mean think time between a buyer's answer and their next press (0: press at once)")
	flag.StringVar(&c.redisURL, "redis", "redis://127.0.0.1:6379/15", "Redis the bots use; it is flushed")
	flag.IntVar(&c.broadcast, "broadcast", 0, "also run the shop while it broadcasts a photo with a button to this many other buyers, and compare browsing with and without it")
	flag.IntVar(&c.rounds, "rounds", 1, "with -broadcast: measure without and with the broadcast this many times each, alternating which goes first, and pool them")
	flag.StringVar(&c.bots, "bots", "floor,shop", "which bots to run, in order")
	flag.StringVar(&c.profile, "cpuprofile", "", "write the shop's CPU profile of its run to this file")
	flag.DurationVar(&c.timeout, "timeout", 60*time.Second, "a press unanswered for this long counts as lost")
	flag.StringVar(&c.logDir, "logs", "", "keep the bots' logs in this folder (default: a temporary one)")
	flag.BoolVar(&c.webapp, "webapp", false, "also run the shop with the Mini App on, the buyers browsing its API, and compare with the chat")
	flag.IntVar(&c.purchases, "purchases", 0, "also time this many paid purchases from the payment to the codes (the shop as shipped and a baseline); -bots= for these alone")
	flag.IntVar(&c.purchaseBuyers, "purchase-buyers", 10, "buyers purchasing at once in the purchase mode")
	flag.StringVar(&c.clusterURL, "cluster", "", "a Redis Cluster the bots use instead of -redis (redis://host:port?addr=host:port...); the benchmark deletes its shopbot:v1: and floor: keys")
	replicas := flag.String("replicas", "", "also run the shop as this many replicas behind one webhook, each count in turn (1,2,4), and compare them with the first")
	flag.DurationVar(&c.idle, "idle", 3*time.Second, "with -replicas and -purchases: how long the shop idles before the buyers come, to count its background work (Redis commands, CPU)")
	flag.Parse()
	var err error
	if c.replicas, err = parseReplicas(*replicas); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// roleEnv set to "floor" makes this program the floor bot: the benchmark
// starts itself again as the floor's process.
const roleEnv = "LOADBENCH_ROLE"

func floorMain() {
	if err := runFloor(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
