package work

import (
	"context"
	"errors"
	"testing"
	"time"

	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"

	"github.com/redis/go-redis/v9"

	"shopbot/state/statetest"
)

// An upgrade keeps what the single-slot layout stored: buyers, broadcasts,
// scheduled jobs (default and named schedules), queued updates and
// conversations; a chat that was leased is ready again. A second run
// moves nothing. (On a cluster there is no legacy layout to move.)
func TestMigrateLayoutKeepsLegacyState(t *testing.T) {
	r := statetest.New(t)
	if statetest.Cluster() {
		t.Skip("the legacy layout only ever ran on one server")
	}
	ctx := context.Background()
	p, c := r.Prefix, r.Client
	now := time.Now()
	c.ZAdd(ctx, p+"users:started", redis.Z{Score: 1, Member: "7"}, redis.Z{Score: 2, Member: "8"})
	c.HSet(ctx, p+"users:blocked", "8", 5)
	c.HSet(ctx, p+"broadcast:1", "status", "running", "pos", 1)
	c.Set(ctx, p+"broadcast:seq", 1, 0)
	c.SAdd(ctx, p+"broadcast:active", "1")
	c.ZAdd(ctx, p+"{sched}:due", redis.Z{Score: float64(now.UnixMilli()), Member: "order:42"})
	c.HSet(ctx, p+"{sched}:tok", "order:42", "old-worker")
	c.ZAdd(ctx, p+"{sched:chat}:due", redis.Z{Score: float64(now.Add(time.Hour).UnixMilli()), Member: "chat:9"})
	c.RPush(ctx, p+"{chats}:q:1001", "501\n{\"update_id\":501}", "502\n{\"update_id\":502}")
	c.HSet(ctx, p+"{chats}:conv:1001", "rev", 4, "doc", `{"v":1}`)
	c.ZAdd(ctx, p+"{chats}:ready", redis.Z{Score: float64(now.Add(20 * time.Second).UnixMilli()), Member: "1001"})
	c.HSet(ctx, p+"{chats}:lease", "1001", "old-worker")
	// A conversation the new version wrote already wins over the old one.
	c.HSet(ctx, p+"{chats}:conv:1002", "rev", 1, "doc", `{"old":true}`)
	q := intake.NewQueue(c, p)
	c.HSet(ctx, q.ConvKey(1002), "rev", 9, "doc", `{"new":true}`)

	rep, err := MigrateLayout(ctx, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chats != 1 || rep.Jobs != 2 || rep.Keys < 8 {
		t.Fatalf("report %+v", rep)
	}
	u := records.NewUsers(c, p)
	if ids, _ := u.Buyers(ctx, 0, 10); len(ids) != 2 {
		t.Fatalf("buyers after migration: %v", ids)
	}
	if b, _ := u.Blocked(ctx, 8); !b {
		t.Fatal("the blocked buyer was forgotten")
	}
	if j, err := NewBroadcasts(c, p).Get(ctx, "1"); err != nil || j.Pos != 1 {
		t.Fatalf("broadcast after migration: %+v %v", j, err)
	}
	if _, ok, _ := sched.NewSchedule(c, p).Due(ctx, "order:42"); !ok {
		t.Fatal("the order job was lost")
	}
	if at, ok, _ := sched.NewNamedSchedule(c, p, "chat").Due(ctx, "chat:9"); !ok || at.Before(now.Add(59*time.Minute)) {
		t.Fatalf("the chat job: %v %v", at, ok)
	}
	cl, err := q.Claim(ctx, time.Now())
	if err != nil || cl == nil || cl.Chat != 1001 || cl.UpdateID != 501 || cl.Rev != 4 {
		t.Fatalf("claim after migration: %+v %v", cl, err)
	}
	if rev, doc, _ := q.Conversation(ctx, 1002); rev != 9 || string(doc) != `{"new":true}` {
		t.Fatalf("conversation 1002: %d %s", rev, doc)
	}
	for _, k := range []string{"users:started", "broadcast:1", "{sched}:due", "{sched:chat}:due", "{chats}:q:1001", "{chats}:ready", "{chats}:lease", "{chats}:conv:1002"} {
		if c.Exists(ctx, p+k).Val() != 0 {
			t.Errorf("legacy key %s left behind", k)
		}
	}
	again, err := MigrateLayout(ctx, c, p)
	if err != nil || again != (MigrateReport{}) {
		t.Fatalf("second run: %+v %v", again, err)
	}
	// Without the marker (a crash before it was set) a run finds nothing
	// left to move either.
	c.Del(ctx, p+migrateDone)
	if again, err := MigrateLayout(ctx, c, p); err != nil || again != (MigrateReport{}) {
		t.Fatalf("run without the marker: %+v %v", again, err)
	}
}

// Two replicas starting together: the second waits while the first
// migrates (the lock), returns once the first is done without moving
// anything itself, and gives up with an error when its context ends first.
func TestMigrateLayoutWaitsForAnotherReplica(t *testing.T) {
	r := statetest.New(t)
	if statetest.Cluster() {
		t.Skip("no migration on a cluster")
	}
	ctx := context.Background()
	r.Client.Set(ctx, r.Prefix+migrateLock, "1", time.Minute)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := MigrateLayout(short, r.Client, r.Prefix); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with the lock held past the deadline: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		rep, err := MigrateLayout(ctx, r.Client, r.Prefix)
		if err == nil && rep != (MigrateReport{}) {
			err = errors.New("the waiting replica moved keys too")
		}
		done <- err
	}()
	// The first replica finishes.
	r.Client.Set(ctx, r.Prefix+migrateDone, "now", 0)
	r.Client.Del(ctx, r.Prefix+migrateLock)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting replica never returned")
	}
}
