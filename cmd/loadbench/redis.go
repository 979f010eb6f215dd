package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/state/redisstore"
)

// endpoint is the Redis deployment the bots use: -cluster's Redis Cluster
// when given, else -redis's one server.
func (c config) endpoint() redisstore.Endpoint {
	if c.clusterURL != "" {
		return redisstore.Endpoint{Mode: redisstore.ModeCluster, URL: c.clusterURL}
	}
	return redisstore.Endpoint{Mode: redisstore.ModeSingle, URL: c.redisURL}
}

// openRedis connects to the bots' Redis as the shop does
// (redisstore.NewClient) and pings it, every master of a cluster.
func openRedis(ctx context.Context, e redisstore.Endpoint) (redis.UniversalClient, error) {
	rdb, where, err := redisstore.NewClient(e)
	if err != nil {
		return nil, fmt.Errorf("redis (%s): %w", e.Mode, err)
	}
	if err := redisstore.Ping(ctx, rdb); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("redis %s at %s: %w (start redis-server, or pass -redis or -cluster)", e.Mode, where, err)
	}
	return rdb, nil
}

// forEachMaster calls fn with each master: every master of a cluster, the
// server otherwise.
func forEachMaster(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("unexpected redis client %T", rdb)
}

// benchPrefixes are the key prefixes the bots write: the shop's and the
// floor's (floor.go).
var benchPrefixes = []string{redisstore.DefaultPrefix, "floor:"}

// clearRedis empties the bots' Redis before a run: one server's database
// is flushed (-redis names one the benchmark may flush); on a cluster,
// which has only database 0, the keys of benchPrefixes are deleted from
// every master and nothing else is touched.
func clearRedis(ctx context.Context, rdb redis.UniversalClient) error {
	if c, ok := rdb.(*redis.Client); ok {
		return c.FlushDB(ctx).Err()
	}
	return forEachMaster(ctx, rdb, func(ctx context.Context, m *redis.Client) error {
		for _, p := range benchPrefixes {
			iter := m.Scan(ctx, 0, p+"*", 1000).Iterator()
			var keys []string
			for iter.Next(ctx) {
				keys = append(keys, iter.Val())
			}
			if err := iter.Err(); err != nil {
				return err
			}
			// One key a command: the keys of one master's batch may sit in
			// different slots.
			pipe := m.Pipeline()
			for _, k := range keys {
				pipe.Unlink(ctx, k)
			}
			if len(keys) == 0 {
				continue
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// redisCounters is what the bots' Redis did so far, summed over its
// masters: the commands it processed, its CPU (every thread's user and
// system time) and the calls of each command.
type redisCounters struct {
	ops     int64
	cpu     time.Duration
	calls   map[string]int64
	masters map[string]redisCounters // each master's ops and CPU, by address
	reads   int64                    // the INFO commands of this reading
	// others is how many clients of the server's other databases were
	// connected at either reading (one server only: a cluster has one
	// database). Their commands are in the counters too.
	others int
}

// readCounters reads INFO stats, cpu and commandstats from every master.
// They are the servers' own: another client of the same server adds to
// them, so the benchmark wants a Redis of its own.
func readCounters(ctx context.Context, rdb redis.UniversalClient) (redisCounters, error) {
	var mu sync.Mutex
	sum := redisCounters{calls: map[string]int64{}}
	err := forEachMaster(ctx, rdb, func(ctx context.Context, m *redis.Client) error {
		info, err := m.Info(ctx, "stats", "cpu", "commandstats").Result()
		if err != nil {
			return err
		}
		one := parseCounters(info)
		if _, ok := rdb.(*redis.Client); ok {
			list, err := m.ClientList(ctx).Result()
			if err != nil {
				return err
			}
			one.others = otherClients(list, m.Options().DB)
		}
		mu.Lock()
		defer mu.Unlock()
		if _, ok := rdb.(*redis.ClusterClient); ok {
			if sum.masters == nil {
				sum.masters = map[string]redisCounters{}
			}
			sum.masters[m.Options().Addr] = redisCounters{ops: one.ops, cpu: one.cpu}
		}
		sum.ops += one.ops
		sum.reads++
		sum.others += one.others
		sum.cpu += one.cpu
		for k, v := range one.calls {
			sum.calls[k] += v
		}
		return nil
	})
	return sum, err
}

// parseCounters reads one server's INFO text.
func parseCounters(info string) redisCounters {
	r := redisCounters{calls: map[string]int64{}}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case k == "total_commands_processed":
			r.ops, _ = strconv.ParseInt(v, 10, 64)
		case k == "used_cpu_user" || k == "used_cpu_sys":
			s, _ := strconv.ParseFloat(v, 64)
			r.cpu += time.Duration(s * float64(time.Second))
		case strings.HasPrefix(k, "cmdstat_"):
			// cmdstat_get:calls=12,usec=30,...
			calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
			n, _ := strconv.ParseInt(calls, 10, 64)
			r.calls[strings.TrimPrefix(k, "cmdstat_")] = n
		}
	}
	return r
}

// otherClients counts the clients of CLIENT LIST's text connected to
// another database than db. A connection still being set up (its last
// command HELLO or AUTH, before its SELECT) is on database 0 for a moment
// and is not counted.
func otherClients(list string, db int) int {
	n := 0
	for _, line := range strings.Split(list, "\n") {
		other, setup := false, false
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "db="); ok && v != strconv.Itoa(db) {
				other = true
			}
			if v, ok := strings.CutPrefix(f, "cmd="); ok && (v == "hello" || v == "auth" || v == "NULL") {
				setup = true
			}
		}
		if other && !setup {
			n++
		}
	}
	return n
}

// shared warns when other databases' clients were connected: the
// counters are the server's, and include their commands.
func (r redisCounters) shared() string {
	if r.others == 0 {
		return ""
	}
	return fmt.Sprintf(" (warning: %d clients of other databases of this Redis were connected, and their commands are in these figures: use a Redis of the benchmark's own)", r.others)
}

// since is what Redis did between earlier and r, but for earlier's own
// INFO commands (a server counts a command once it has run, so r's are
// not in r).
func (r redisCounters) since(earlier redisCounters) redisCounters {
	d := redisCounters{ops: r.ops - earlier.ops - earlier.reads, cpu: r.cpu - earlier.cpu, calls: map[string]int64{},
		others: max(r.others, earlier.others)}
	for k, v := range r.calls {
		if n := v - earlier.calls[k]; n > 0 {
			d.calls[k] = n
		}
	}
	for addr, m := range r.masters {
		if d.masters == nil {
			d.masters = map[string]redisCounters{}
		}
		e := earlier.masters[addr]
		d.masters[addr] = redisCounters{ops: m.ops - e.ops - 1, cpu: m.cpu - e.cpu}
	}
	return d
}

// busiestCPU is the CPU of the master that used the most (the server's
// own for one server).
func (r redisCounters) busiestCPU() time.Duration {
	if len(r.masters) == 0 {
		return r.cpu
	}
	var most time.Duration
	for _, m := range r.masters {
		most = max(most, m.cpu)
	}
	return most
}

// split lists the masters by address with their share of the commands
// and their CPU per unit of per.
func (r redisCounters) split(per int) string {
	addrs := make([]string, 0, len(r.masters))
	for a := range r.masters {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	var parts []string
	for _, a := range addrs {
		m := r.masters[a]
		share := 0.0
		if r.ops > 0 {
			share = 100 * float64(m.ops) / float64(r.ops)
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%% %v", a, share, (m.cpu/time.Duration(max(per, 1))).Round(time.Microsecond)))
	}
	return strings.Join(parts, ", ")
}

// plus is r and o together (runs pooled).
func (r redisCounters) plus(o redisCounters) redisCounters {
	sum := redisCounters{ops: r.ops + o.ops, cpu: r.cpu + o.cpu, calls: map[string]int64{}, others: max(r.others, o.others)}
	for k, v := range r.calls {
		sum.calls[k] += v
	}
	for k, v := range o.calls {
		sum.calls[k] += v
	}
	for _, ms := range []map[string]redisCounters{r.masters, o.masters} {
		for a, m := range ms {
			if sum.masters == nil {
				sum.masters = map[string]redisCounters{}
			}
			s := sum.masters[a]
			sum.masters[a] = redisCounters{ops: s.ops + m.ops, cpu: s.cpu + m.cpu}
		}
	}
	return sum
}

// top is the n commands called most, each with its calls per unit of per
// ("evalsha 3.1, get 1.0").
func (r redisCounters) top(n int, per float64) string {
	if per == 0 {
		return ""
	}
	names := make([]string, 0, len(r.calls))
	for k := range r.calls {
		if k != "info" { // the benchmark's own reads of the counters
			names = append(names, k)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if r.calls[a] != r.calls[b] {
			return int(r.calls[b] - r.calls[a])
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", strings.ReplaceAll(k, "|", " "), float64(r.calls[k])/per))
	}
	return strings.Join(parts, ", ")
}

// redisInfo says which Redis the bots use and how it keeps writes: its
// mode, masters, version and AOF settings (the purchase mode's codes wait
// for their claim to be 3 s old unless every write survives a crash).
func redisInfo(ctx context.Context, rdb redis.UniversalClient) string {
	var mu sync.Mutex
	seen := map[string]int{}
	masters := 0
	_ = forEachMaster(ctx, rdb, func(ctx context.Context, m *redis.Client) error {
		v := "?"
		if info, err := m.Info(ctx, "server").Result(); err == nil {
			for _, l := range strings.Split(info, "\n") {
				if s, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
					v = s
				}
			}
		}
		get := func(k string) string {
			cfg, err := m.ConfigGet(ctx, k).Result()
			if err != nil {
				return "?"
			}
			return cfg[k]
		}
		s := fmt.Sprintf("%s, appendonly %s, appendfsync %s", v, get("appendonly"), get("appendfsync"))
		mu.Lock()
		seen[s]++
		masters++
		mu.Unlock()
		return nil
	})
	var kinds []string
	for s := range seen {
		kinds = append(kinds, s)
	}
	slices.Sort(kinds)
	desc := strings.Join(kinds, "; ")
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return fmt.Sprintf("Cluster of %d masters, %s", masters, desc)
	}
	return desc
}
