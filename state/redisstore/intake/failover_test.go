package intake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/state/statetest"
)

// The failover tests: buyers write state concurrently (updates accepted
// for Telegram, paid orders, wallet credits, each confirmed durable the
// way the shop confirms it) while the master holding their keys fails
// over. Afterwards nothing that was acknowledged is missing, no charge has
// two orders, and the client found the new master by itself.

const (
	failoverBuyers = 100
	failoverSteps  = 10  // steps every buyer makes at least
	failoverMax    = 400 // steps no buyer goes beyond
	// failoverThink is a buyer's pause between steps, so the traffic spans
	// the failover (which takes seconds) at a load two cores carry.
	failoverThink = 100 * time.Millisecond
)

// failoverAcks is what the buyers were told succeeded.
type failoverAcks struct {
	mu      sync.Mutex
	updates map[int64][]int64 // chat -> update ids accepted
	orders  map[string]int64  // charge -> order id created and synced
	credits map[int64]int     // user -> credits confirmed
	retries atomic.Int64      // operations that failed and were retried
	done    atomic.Int64      // operations acknowledged
}

// runFailoverTraffic runs the buyers; failover runs once a third of their
// operations are acknowledged, while they go on. It returns when every
// buyer is done and failover has returned.
func runFailoverTraffic(t *testing.T, r *statetest.Redis, failover func(context.Context) error) *failoverAcks {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	d := redisstore.NewDurability(r.Client, r.Prefix, redisstore.WithSyncTimeout(time.Second))
	q := NewQueue(r.Client, r.Prefix)
	q.Durable = d
	orders := records.NewOrders(r.Client, r.Prefix)
	wallets := records.NewWallets(r.Client, r.Prefix)
	wallets.Durable = d
	acks := &failoverAcks{updates: map[int64][]int64{}, orders: map[string]int64{}, credits: map[int64]int{}}

	// retry runs op until it succeeds: a failover shows as refused
	// connections, READONLY, timeouts and ErrNotDurable for a moment.
	retry := func(what string, op func() error) {
		for {
			err := op()
			if err == nil {
				acks.done.Add(1)
				return
			}
			if ctx.Err() != nil {
				t.Errorf("%s: still failing at the deadline: %v", what, err)
				return
			}
			acks.retries.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond): // back off between attempts
			}
		}
	}

	// The failover starts once every buyer could have made two steps and
	// the buyers go on until it is over.
	var over atomic.Bool
	failed := make(chan error, 1)
	go func() {
		for acks.done.Load() < failoverBuyers*2*3 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond) // poll the buyers' progress
		}
		err := failover(ctx)
		over.Store(true)
		failed <- err
	}()

	var wg sync.WaitGroup
	for b := range failoverBuyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := int64(5_000_000 + b)
			for k := 0; k < failoverMax && (k < failoverSteps || !over.Load()); k++ {
				if k > 0 {
					select { // think
					case <-ctx.Done():
						return
					case <-time.After(failoverThink):
					}
				}
				up := user*1000 + int64(k)
				retry("accept", func() error {
					_, err := q.Accept(ctx, []Update{{ID: up, Chat: user, Body: []byte(`{"n":` + itoa(up) + `}`)}}, time.Now())
					return err
				})
				acks.mu.Lock()
				acks.updates[user] = append(acks.updates[user], up)
				acks.mu.Unlock()

				charge := fmt.Sprintf("ch-%d-%d", user, k)
				var id int64
				retry("create order", func() error {
					o, _, err := orders.CreatePaid(ctx, &state.Order{ChargeID: charge, QuoteID: "q-" + charge, UserID: user, ChatID: user,
						Line: "giftcards", PayMethod: state.PayStars, Stars: 100, ShopUSD: decimal.RequireFromString("1.30")})
					if err != nil {
						return err
					}
					id = o.ID
					return d.SyncWritten(ctx, orders.KeyOf(o.ID))
				})
				acks.mu.Lock()
				acks.orders[charge] = id
				acks.mu.Unlock()

				retry("credit", func() error {
					_, _, err := wallets.Credit(ctx, user, decimal.RequireFromString("1.25"), "cr-"+charge, "", "test")
					return err
				})
				acks.mu.Lock()
				acks.credits[user]++
				acks.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := <-failed; err != nil {
		t.Fatalf("failover: %v", err)
	}
	t.Logf("%d operations acknowledged, %d attempts retried during the failover", acks.done.Load(), acks.retries.Load())
	return acks
}

// checkFailoverAcks reads everything back from the new master.
func checkFailoverAcks(t *testing.T, r *statetest.Redis, acks *failoverAcks) {
	t.Helper()
	ctx := t.Context()
	q := NewQueue(r.Client, r.Prefix)
	for chat, ids := range acks.updates {
		vals, err := r.Client.LRange(ctx, q.chatKeys(chat)[2], 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		have := map[int64]int{}
		for _, v := range vals {
			id, _ := strconv.ParseInt(v[:strings.IndexByte(v, '\n')], 10, 64)
			have[id]++
		}
		for _, id := range ids {
			if have[id] != 1 {
				t.Errorf("chat %d: acknowledged update %d is queued %d times", chat, id, have[id])
			}
		}
	}
	orders := records.NewOrders(r.Client, r.Prefix)
	all, err := orders.List(ctx, 0, 1<<20, state.OrderFilter{})
	if err != nil {
		t.Fatal(err)
	}
	perCharge := map[string]int{}
	for _, o := range all {
		perCharge[o.ChargeID]++
	}
	for charge, id := range acks.orders {
		o, err := orders.ByCharge(ctx, charge)
		switch {
		case err != nil:
			t.Errorf("charge %s: acknowledged order %d is gone: %v", charge, id, err)
		case o.ID != id:
			t.Errorf("charge %s: acknowledged order %d, found order %d", charge, id, o.ID)
		}
		if perCharge[charge] != 1 {
			t.Errorf("charge %s has %d orders", charge, perCharge[charge])
		}
	}
	if len(all) != len(acks.orders) {
		t.Errorf("%d orders for %d charges", len(all), len(acks.orders))
	}
	w := records.NewWallets(r.Client, r.Prefix)
	for user, n := range acks.credits {
		bal, err := w.Balance(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		if want := decimal.RequireFromString("1.25").Mul(decimal.NewFromInt(int64(n))); !bal.Equal(want) {
			t.Errorf("user %d: balance %s after %d acknowledged credits of 1.25", user, bal, n)
		}
	}
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("timed out waiting for " + what)
		}
		time.Sleep(50 * time.Millisecond) // poll
	}
	return nil
}

// role is the first word of ROLE on addr ("master", "slave"), and whether
// a replica's link to its master is up.
func role(ctx context.Context, addr string) (string, bool) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second})
	defer c.Close()
	r, err := c.Do(ctx, "ROLE").Slice()
	if err != nil || len(r) == 0 {
		return "", false
	}
	name, _ := r[0].(string)
	if name == "slave" && len(r) >= 4 {
		st, _ := r[3].(string)
		return name, st == "connected"
	}
	return name, name == "master"
}

// TestSentinelFailoverUnderTraffic asks the sentinel to fail the master
// over (SENTINEL FAILOVER) while 100 buyers write. Needs
// TEST_REDIS_SENTINEL_URL (.ci/redis-ha.sh).
func TestSentinelFailoverUnderTraffic(t *testing.T) {
	e, _ := statetest.Endpoint()
	if e.Mode != statetest.ModeSentinel {
		t.Skip("needs TEST_REDIS_SENTINEL_URL")
	}
	o, err := redisstore.ParseSentinelURL(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: o.SentinelAddrs[0]})
	defer sc.Close()
	master := func(ctx context.Context) string {
		a, err := sc.GetMasterAddrByName(ctx, o.MasterName).Result()
		if err != nil || len(a) != 2 {
			return ""
		}
		return a[0] + ":" + a[1]
	}
	r := statetest.New(t)
	before := master(t.Context())
	if before == "" {
		t.Fatal("the sentinel names no master")
	}
	var after string
	acks := runFailoverTraffic(t, r, func(ctx context.Context) error {
		// The replica is in sync and known to the sentinel (a previous
		// failover may have just turned the old master into it).
		if err := waitUntil(ctx, 30*time.Second, "a replica the sentinel can promote", func() bool {
			reps, err := sc.Replicas(ctx, o.MasterName).Result()
			if err != nil {
				return false
			}
			for _, rep := range reps {
				if rep["master-link-status"] == "ok" && !strings.Contains(rep["flags"], "down") && !strings.Contains(rep["flags"], "disconnected") {
					return true
				}
			}
			return false
		}); err != nil {
			return err
		}
		if err := sc.Failover(ctx, o.MasterName).Err(); err != nil {
			return fmt.Errorf("SENTINEL FAILOVER: %w", err)
		}
		return waitUntil(ctx, 30*time.Second, "the sentinel to name a new master", func() bool {
			after = master(ctx)
			r, _ := role(ctx, after)
			return after != before && after != "" && r == "master"
		})
	})
	t.Logf("master %s -> %s", before, after)
	checkFailoverAcks(t, r, acks)
	// The old master rejoins as a replica, ready for the next failover.
	if err := waitUntil(t.Context(), 30*time.Second, "the old master to replicate the new one", func() bool {
		r, up := role(t.Context(), before)
		return r == "slave" && up
	}); err != nil {
		t.Error(err)
	}
}

// TestClusterFailoverUnderTraffic fails over (CLUSTER FAILOVER on its
// replica) the master holding a buyer's chat shard while 100 buyers write.
// Needs TEST_REDIS_CLUSTER_URL with a replica per master (.ci/redis-ha.sh).
func TestClusterFailoverUnderTraffic(t *testing.T) { clusterFailover(t, "") }

// TestClusterTakeoverUnderTraffic is the master lost without notice: the
// replica takes over (CLUSTER FAILOVER TAKEOVER) without the master's
// agreement, and the old master goes on acknowledging writes until it
// hears of it; those writes are lost when it turns replica. Nothing the
// shop acknowledged may be among them.
func TestClusterTakeoverUnderTraffic(t *testing.T) { clusterFailover(t, "TAKEOVER") }

func clusterFailover(t *testing.T, how string) {
	if !statetest.Cluster() {
		t.Skip("needs TEST_REDIS_CLUSTER_URL")
	}
	r := statetest.New(t)
	cc := r.Client.(*redis.ClusterClient)
	q := NewQueue(r.Client, r.Prefix)
	key := q.chatKeys(5_000_000)[0]
	slot := redisstore.KeySlot(key)
	shards, err := cc.ClusterShards(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var master, replica string
	for _, sh := range shards {
		owns := false
		for _, s := range sh.Slots {
			owns = owns || int(s.Start) <= slot && slot <= int(s.End)
		}
		if !owns {
			continue
		}
		for _, n := range sh.Nodes {
			addr := n.IP + ":" + strconv.Itoa(int(n.Port))
			switch {
			case n.Role == "master":
				master = addr
			case n.Health == "online":
				replica = addr
			}
		}
	}
	if master == "" || replica == "" {
		t.Fatalf("slot %d: master %q, replica %q: the cluster needs a replica per master", slot, master, replica)
	}
	acks := runFailoverTraffic(t, r, func(ctx context.Context) error {
		if err := waitUntil(ctx, 30*time.Second, "the replica's link to its master", func() bool {
			r, up := role(ctx, replica)
			return r == "slave" && up
		}); err != nil {
			return err
		}
		rc := redis.NewClient(&redis.Options{Addr: replica})
		defer rc.Close()
		args := []any{"CLUSTER", "FAILOVER"}
		if how != "" {
			args = append(args, how)
		}
		if err := rc.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("CLUSTER FAILOVER %s on %s: %w", how, replica, err)
		}
		return waitUntil(ctx, 30*time.Second, "the replica to take over", func() bool {
			r, _ := role(ctx, replica)
			return r == "master"
		})
	})
	m, err := cc.MasterForKey(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slot %d: master %s -> %s; the client now writes to %s", slot, master, replica, m.Options().Addr)
	checkFailoverAcks(t, r, acks)
	if err := waitUntil(t.Context(), 30*time.Second, "the old master to replicate the new one", func() bool {
		r, up := role(t.Context(), master)
		return r == "slave" && up
	}); err != nil {
		t.Error(err)
	}
}
