//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/reseller/resellersim"
	"shopbot/state"
)

// faults injects the chaos while the buyers buy: SIGKILL of a random
// replica, upstream failures on order creation, and Redis rollbacks.
type faults struct {
	t   *testing.T
	cl  *cluster
	cr  *chaosRedis
	rs  *redisServer // the run's own Redis (nil: a shared server, no crashes or restores)
	sim *resellersim.Sim
	sh  *shoppers
	cfg chaosConfig

	mu     sync.Mutex // guards rng and the records below
	rng    *rand.Rand
	counts map[string]int
	notes  []string
	rolled int
	// restored is when Redis was restarted on an old backup (zero: never).
	restored time.Time
	// noRestore says why the restore on an old backup did not happen.
	noRestore string
}

// restoreFailed records why the restore did not happen, for the report.
func (f *faults) restoreFailed(format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.noRestore = why
	f.mu.Unlock()
	f.t.Errorf("chaos: %s", why)
}

func (f *faults) noRestoreWhy() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.noRestore
}

func (f *faults) restoredAt() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restored
}

func (f *faults) intn(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.IntN(n)
}

// jitter returns a duration uniform in [d/2, 3d/2).
func (f *faults) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(f.intn(int(d/time.Millisecond)+1))*time.Millisecond
}

func (f *faults) count(kind string) {
	f.mu.Lock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[kind]++
	f.mu.Unlock()
}

func (f *faults) faultCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.counts {
		out[k] = v
	}
	return out
}

func (f *faults) rollbacks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rolled
}

func (f *faults) rollbackNotes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.notes...)
}

// killLoop kills a random replica with SIGKILL every killEvery (jittered)
// and starts it again a moment later.
func (f *faults) killLoop(ctx context.Context) {
	if f.cfg.killEvery <= 0 {
		return
	}
	for sleepCtx(ctx, f.jitter(f.cfg.killEvery)) {
		slot := f.cl.kill(f.intn(1 << 30))
		if slot < 0 {
			continue
		}
		// Down for 0.2 to 1.5 s; the restart happens even when the load
		// has just ended.
		sleepCtx(ctx, time.Duration(200+f.intn(1300))*time.Millisecond)
		if err := f.cl.restart(); err != nil {
			f.t.Errorf("chaos: %v", err)
			return
		}
	}
}

// createPaths are the order-creating endpoints the buyers' lines use.
var createPaths = []string{"/gift-cards/order", "/top-ups/order"}

// upstreamLoop arms one upstream fault every faultGap (jittered). Each hits
// the next matching request, whichever replica and order it belongs to.
func (f *faults) upstreamLoop(ctx context.Context) {
	if f.cfg.faultGap <= 0 {
		return
	}
	for sleepCtx(ctx, f.jitter(f.cfg.faultGap)) {
		path := createPaths[f.intn(len(createPaths))]
		switch r := f.intn(100); {
		case r < 20: // a 5xx before anything is done: ambiguous to the shop, nothing created
			status := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[f.intn(3)]
			f.sim.FailNextOn(path, 1, status)
			f.count("create 5xx, not created")
		case r < 40: // created, then a 5xx
			status := []int{http.StatusBadGateway, http.StatusGatewayTimeout}[f.intn(2)]
			f.sim.FailCreateAfterExecute(1, status)
			f.count("create 5xx, created")
		case r < 60: // created, then the connection is cut
			f.sim.CutAfterCreate(1)
			f.count("create cut, created")
		case r < 80: // 429 on a create: provably nothing created
			f.sim.FailNextOn(path, 1, http.StatusTooManyRequests)
			f.count("create 429")
		case r < 92: // a 429 with a long Retry-After on the next request, then a 502 that created
			f.sim.RateLimitNext(1, time.Duration(5+f.intn(21))*time.Second)
			f.sim.FailCreateAfterExecute(1, http.StatusBadGateway)
			f.count("429 retry-after 5-25s, then create 502 created")
		default: // held past the client's timeout: ambiguous, nothing created
			f.sim.DelayNext(1, 20*time.Second)
			f.count("request held 20s (client timeout), not created")
		}
	}
}

// rollbackLoop rolls Redis back cfg.rollbacks times, spread over the
// load by the number of purchases paid: at each point it freezes every
// replica (SIGSTOP), dumps the prefix, thaws them, lets them work for 1 to
// 2 s, freezes them again, restores the dump (keys written since are
// deleted), closes their Redis connections and thaws them.
func (f *faults) rollbackLoop(ctx context.Context) {
	for k := 1; k <= f.cfg.rollbacks; k++ {
		at := int64(f.cfg.purchases) * int64(k) / int64(f.cfg.rollbacks+1)
		for f.sh.paid.Load() < at {
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return
			}
		}
		if err := f.rollbackOnce(ctx); err != nil {
			if ctx.Err() == nil {
				f.t.Errorf("chaos: rollback: %v", err)
			}
			return
		}
	}
}

func (f *faults) rollbackOnce(ctx context.Context) error {
	rctx := context.WithoutCancel(ctx) // never leave the replicas frozen
	f.cl.freeze()
	time.Sleep(100 * time.Millisecond) // let commands already sent land
	snap, err := f.cr.takeSnapshot(rctx)
	before := orderIDs(rctx, f.cr)
	f.cl.thaw()
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	sleepCtx(ctx, time.Duration(1000+f.intn(1000))*time.Millisecond)
	f.cl.freeze()
	time.Sleep(100 * time.Millisecond)
	lostWindow := time.Since(snap.at)
	after := orderIDs(rctx, f.cr)
	deleted, restored, err := f.cr.rollback(rctx, snap)
	var killed int
	if err == nil {
		killed, err = f.cr.killClients(rctx)
	}
	f.cl.thaw()
	if err != nil {
		return err
	}
	note := fmt.Sprintf("rollback %d at %s: lost the last %s of writes (%d keys written since deleted, %d restored, %d connections closed); %s",
		f.rollbacks()+1, snap.at.Add(lostWindow).UTC().Format("15:04:05.000"), lostWindow.Round(10*time.Millisecond), deleted, restored, killed, lostOrders(after, before))
	f.mu.Lock()
	f.rolled++
	f.notes = append(f.notes, note)
	f.mu.Unlock()
	f.t.Logf("chaos: %s", note)
	return nil
}

// orderIDs returns every order's status by id (for the rollback's note).
func orderIDs(ctx context.Context, cr *chaosRedis) map[int64]string {
	all, err := records.NewOrders(cr.rdb, redisstore.DefaultPrefix).List(ctx, 0, 1<<30, state.OrderFilter{})
	if err != nil {
		return nil
	}
	out := make(map[int64]string, len(all))
	for _, o := range all {
		out[o.ID] = o.Status
	}
	return out
}

// crashLoop kills the run's own Redis with SIGKILL cfg.crashes times,
// spread over the load by purchases paid (between the rollbacks), keeps it
// down 0.3 to 2 s and restarts it from its append-only file. Every
// replica's connections drop at once, and the writes of the last second
// before the kill may be gone (appendfsync everysec).
func (f *faults) crashLoop(ctx context.Context) {
	if f.rs == nil {
		return
	}
	for k := 1; k <= f.cfg.redisCrashes; k++ {
		at := int64(f.cfg.purchases) * int64(2*k-1) / int64(2*(f.cfg.redisCrashes+1))
		for f.sh.paid.Load() < at {
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return
			}
		}
		down := time.Duration(300+f.intn(1700)) * time.Millisecond
		killedAt := time.Now()
		if err := f.rs.crash(down); err != nil {
			f.t.Errorf("chaos: Redis crash %d: %v", k, err)
			return
		}
		f.note("redis crash", fmt.Sprintf("Redis crash %d at %s: SIGKILL with every replica's connections open, down %s, restarted from its AOF (everysec)",
			k, killedAt.UTC().Format("15:04:05.000"), down.Round(10*time.Millisecond)))
	}
}

// restoreLoop takes a backup of the run's own Redis once a sixth of the
// purchases are paid, and once two thirds are paid (or the load is over)
// and the backup is older than the replicas' journal window, kills Redis
// with SIGKILL and starts it on that backup: every order paid, placed or
// delivered since is gone from the store, and the journal no longer holds
// what happened before its window. ctx is the run's, not the load's: the
// restore happens even after the last purchase, before the shop settles.
func (f *faults) restoreLoop(ctx context.Context, loadDone <-chan struct{}) {
	if f.rs == nil || f.cfg.restores == 0 {
		return
	}
	wait := func(n int64) bool {
		for f.sh.paid.Load() < n {
			select {
			case <-ctx.Done():
				return false
			case <-loadDone:
				return true
			case <-time.After(200 * time.Millisecond):
			}
		}
		return true
	}
	if f.cfg.wipe {
		f.wipeRedis(ctx, wait)
		return
	}
	if !wait(int64(f.cfg.purchases) / 6) {
		return
	}
	path := filepath.Join(f.rs.dir, "..", "backup.rdb")
	if err := f.rs.backup(ctx, f.cr.rdb, path); err != nil {
		if ctx.Err() == nil {
			f.restoreFailed("back Redis up: %v", err)
		}
		return
	}
	backedUp := time.Now()
	f.t.Logf("chaos: Redis backed up at %s", backedUp.UTC().Format("15:04:05.000"))
	if !wait(int64(f.cfg.purchases)*2/3) || !sleepCtx(ctx, time.Until(backedUp.Add(f.cfg.journalKeep+15*time.Second))) {
		return
	}
	now := orderIDs(ctx, f.cr)
	f.mu.Lock()
	f.restored = time.Now()
	f.mu.Unlock()
	if err := f.rs.restore(context.WithoutCancel(ctx), path); err != nil {
		f.restoreFailed("restore Redis: %v", err)
		return
	}
	f.note("redis restore", fmt.Sprintf("Redis restored at %s on its backup of %s (%s old, journal window %s): %s",
		time.Now().UTC().Format("15:04:05.000"), backedUp.UTC().Format("15:04:05.000"), time.Since(backedUp).Round(time.Second),
		f.cfg.journalKeep, lostOrders(now, orderIDs(context.WithoutCancel(ctx), f.cr))))
}

// wipeRedis kills the run's Redis with SIGKILL a third of the way into
// the purchases and starts it with no data at all, as after its volume
// was lost: the shop must rebuild what Telegram's Star transactions, the
// upstream and its journal prove, and list the rest for an admin.
func (f *faults) wipeRedis(ctx context.Context, wait func(int64) bool) {
	if !wait(int64(f.cfg.purchases) / 3) {
		return
	}
	now := orderIDs(ctx, f.cr)
	f.mu.Lock()
	f.restored = time.Now()
	f.mu.Unlock()
	if err := f.rs.restore(context.WithoutCancel(ctx), ""); err != nil {
		f.restoreFailed("restart Redis empty: %v", err)
		return
	}
	f.note("redis restore", fmt.Sprintf("Redis came back empty at %s (its data lost): %s",
		time.Now().UTC().Format("15:04:05.000"), lostOrders(now, orderIDs(context.WithoutCancel(ctx), f.cr))))
}

// note counts a Redis fault of kind and keeps its description for the report.
func (f *faults) note(kind, text string) {
	f.count(kind)
	f.mu.Lock()
	f.notes = append(f.notes, text)
	f.mu.Unlock()
	f.t.Logf("chaos: %s", text)
}

// lostOrders says which orders of before a loss took away or moved back
// (after is what the store holds now).
func lostOrders(now, after map[int64]string) string {
	var gone, moved []string
	for id, st := range now {
		if old, ok := after[id]; !ok {
			gone = append(gone, fmt.Sprintf("#%d(%s)", id, st))
		} else if old != st {
			moved = append(moved, fmt.Sprintf("#%d(%s->%s)", id, st, old))
		}
	}
	sort.Strings(gone)
	sort.Strings(moved)
	clip := func(l []string) string {
		if len(l) > 8 {
			return strings.Join(l[:8], " ") + fmt.Sprintf(" +%d", len(l)-8)
		}
		return strings.Join(l, " ")
	}
	return fmt.Sprintf("orders undone: %d created [%s], %d moved back [%s]", len(gone), clip(gone), len(moved), clip(moved))
}
