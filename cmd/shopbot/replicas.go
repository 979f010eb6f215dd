package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"shopbot/bot"
	"shopbot/state"
	"shopbot/state/redisstore"
)

// thisReplica is this process as the replica registry knows it.
func thisReplica(now time.Time) redisstore.Replica {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return redisstore.Replica{
		ID:      fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:])),
		Version: bot.Version, Gen: state.SchemaGen, MinPeer: state.MinPeerGen,
		Host: host, Started: now.UTC(),
	}
}

// joinReplicas registers this process in the replica registry before it
// touches anything else of the store, and keeps its entry alive until the
// returned leave is called (which removes it). A replica of a build it
// cannot run beside refuses the start (redisstore.IncompatibleError). One
// that has stopped renewing its entry (killed without leaving, its entry
// lapses after redisstore.ReplicaTTL) is waited for, up to that TTL: a
// build replacing every replica at once (an upgrade that cannot be
// rolling) starts as soon as the old ones are gone.
func joinReplicas(ctx context.Context, reg *redisstore.Replicas, log *slog.Logger) (leave func(), err error) {
	me := thisReplica(time.Now())
	for {
		others, err := reg.Join(ctx, me, time.Now())
		var inc *redisstore.IncompatibleError
		if errors.As(err, &inc) {
			wait := lapses(inc.Them, time.Now())
			if wait <= 0 {
				return nil, err
			}
			log.Warn("waiting for replicas of an incompatible version that stopped renewing their entries to lapse",
				"wait_ms", wait.Milliseconds(), "them", versions(inc.Them))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		log.Info("replica registered", "version", me.Version, "gen", me.Gen, "min_peer_gen", me.MinPeer, "others", versions(others))
		beatCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(redisstore.ReplicaBeat)
			defer t.Stop()
			for {
				select {
				case <-beatCtx.Done():
					return
				case <-t.C:
					if err := reg.Beat(beatCtx, me, time.Now()); err != nil && beatCtx.Err() == nil {
						log.Warn("renew this replica's registration", "err", err)
					}
				}
			}
		}()
		return func() {
			stop()
			<-done
			lctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := reg.Leave(lctx, me.ID); err != nil {
				log.Warn("unregister this replica", "err", err)
			}
		}, nil
	}
}

// lapses is how long until the last of list lapses when none of them has
// renewed its entry for two beats (killed replicas); 0 when one still
// beats.
func lapses(list []redisstore.Replica, now time.Time) time.Duration {
	var wait time.Duration
	for _, r := range list {
		if now.Sub(r.Seen) < 2*redisstore.ReplicaBeat {
			return 0
		}
		wait = max(wait, r.Seen.Add(redisstore.ReplicaTTL).Sub(now)+100*time.Millisecond)
	}
	return wait
}

// versions lists the versions of replicas, with how many run each:
// "1.4.0 (gen 1) x2, 1.5.0 (gen 2) x1".
func versions(list []redisstore.Replica) string {
	type key struct {
		version string
		gen     int
	}
	count := map[key]int{}
	var order []key
	for _, r := range list {
		k := key{r.Version, r.Gen}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s (gen %d) x%d", k.version, k.gen, count[k])
	}
	return strings.Join(parts, ", ")
}

// checkReplicas is `shopbot check`'s line about the running replicas: their
// versions, and whether this build would start beside them.
func checkReplicas(ctx context.Context, conn *redisstore.Conn) checkResult {
	r := checkResult{name: "replicas"}
	live, err := redisstore.NewReplicas(conn.Client, redisstore.DefaultPrefix).Live(ctx, time.Now())
	if err != nil {
		r.status, r.detail = "FAIL", err.Error()
		return r
	}
	me := thisReplica(time.Now())
	var excluded []redisstore.Replica
	for _, o := range live {
		if !redisstore.Compatible(me, o) {
			excluded = append(excluded, o)
		}
	}
	mine := fmt.Sprintf("this build: %s (gen %d, runs beside gen %d and later)", me.Version, me.Gen, me.MinPeer)
	switch {
	case len(live) == 0:
		r.status, r.detail = "ok", "none running; "+mine
	case len(excluded) > 0:
		r.status, r.detail = "warn", fmt.Sprintf("%d running: %s; %s would refuse to start beside %s", len(live), versions(live), mine, versions(excluded))
		r.notes = []string{"Stop the replicas of the versions it cannot run beside before starting it: this upgrade cannot be rolling (docs/operator.md, \"Upgrades\")."}
	default:
		r.status, r.detail = "ok", fmt.Sprintf("%d running: %s; %s starts beside them", len(live), versions(live), mine)
	}
	return r
}
