package redisstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/statetest"
)

func replica(id, version string, gen, minPeer int, started time.Time) redisstore.Replica {
	return redisstore.Replica{ID: id, Version: version, Gen: gen, MinPeer: minPeer, Host: "host-" + id, Started: started}
}

// Builds run side by side when each speaks a generation the other runs
// beside; a newer build that changed what older ones would mishandle
// (MinPeer raised to its own generation) runs beside none of them, and an
// older one is not started again beside it.
func TestReplicasCompatibilityRule(t *testing.T) {
	t0 := time.Now()
	for _, tc := range []struct {
		name string
		a, b redisstore.Replica
		want bool
	}{
		{"same build", replica("a", "1.0", 1, 0, t0), replica("b", "1.0", 1, 0, t0), true},
		{"next generation that keeps older builds", replica("a", "1.0", 1, 0, t0), replica("b", "2.0", 2, 1, t0), true},
		{"a build from before the registry and this one", replica("a", "0.9", 0, 0, t0), replica("b", "1.0", 1, 0, t0), true},
		{"a generation that excludes older ones", replica("a", "1.0", 1, 0, t0), replica("b", "3.0", 3, 3, t0), false},
		{"an older build started beside it", replica("a", "3.0", 3, 3, t0), replica("b", "2.0", 2, 1, t0), false},
		{"two generations apart, kept", replica("a", "1.0", 1, 0, t0), replica("b", "3.0", 3, 1, t0), true},
	} {
		if got := redisstore.Compatible(tc.a, tc.b); got != tc.want || redisstore.Compatible(tc.b, tc.a) != tc.want {
			t.Errorf("%s: Compatible = %v, want %v both ways", tc.name, got, tc.want)
		}
	}
}

// A replica registers and sees the others; one that cannot run beside a
// live replica is refused with both versions named and is not registered;
// a replica gone without leaving stops counting after the TTL.
func TestReplicasJoinRefusesAnIncompatibleBuild(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	reg := redisstore.NewReplicas(r.Client, r.Prefix)
	now := time.Now()
	old := replica("old-1", "1.4.0", 1, 0, now.Add(-time.Hour))
	if others, err := reg.Join(ctx, old, now); err != nil || len(others) != 0 {
		t.Fatalf("first replica: %v %v", others, err)
	}
	next := replica("new-1", "1.5.0", 2, 1, now)
	others, err := reg.Join(ctx, next, now)
	if err != nil || len(others) != 1 || others[0].Version != "1.4.0" || !others[0].Seen.Equal(now.Truncate(time.Millisecond)) {
		t.Fatalf("compatible replica: %+v %v", others, err)
	}
	breaking := replica("new-2", "2.0.0", 3, 3, now)
	_, err = reg.Join(ctx, breaking, now)
	var inc *redisstore.IncompatibleError
	if !errors.As(err, &inc) || len(inc.Them) != 2 || inc.Them[0].ID != "old-1" || inc.Them[1].ID != "new-1" {
		t.Fatalf("incompatible replica: %v", err)
	}
	for _, want := range []string{"2.0.0", "1.4.0", "1.5.0", "schema generation 3", "schema generation 1", "Upgrades"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	live, err := reg.Live(ctx, now)
	if err != nil || len(live) != 2 || live[0].ID != "old-1" || live[1].ID != "new-1" {
		t.Fatalf("live %+v %v: the refused replica must not be registered", live, err)
	}
	// The old replica leaves cleanly; the 1.5.0 one is killed and its
	// entry is no longer renewed: the breaking build starts once its TTL
	// has run out, not before.
	if err := reg.Leave(ctx, "old-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Join(ctx, breaking, now.Add(redisstore.ReplicaBeat)); !errors.As(err, &inc) || len(inc.Them) != 1 || inc.Them[0].ID != "new-1" {
		t.Fatalf("beside a replica seen %s ago: %v", redisstore.ReplicaBeat, err)
	}
	gone := now.Add(redisstore.ReplicaTTL + time.Second)
	if _, err := reg.Join(ctx, breaking, gone); err != nil {
		t.Fatalf("after the killed replica's TTL: %v", err)
	}
	if live, _ := reg.Live(ctx, gone); len(live) != 1 || live[0].ID != "new-2" {
		t.Fatalf("live after the TTL: %+v", live)
	}
	// An older build started again beside it is refused in turn, and a
	// replica that beats keeps its entry.
	if _, err := reg.Join(ctx, replica("old-2", "1.4.0", 1, 0, gone), gone); !errors.As(err, &inc) || inc.Them[0].ID != "new-2" {
		t.Fatalf("an older build beside the breaking one: %v", err)
	}
	later := gone.Add(redisstore.ReplicaTTL)
	if err := reg.Beat(ctx, breaking, later); err != nil {
		t.Fatal(err)
	}
	if live, _ := reg.Live(ctx, later.Add(redisstore.ReplicaBeat)); len(live) != 1 || !live[0].Seen.Equal(later.Truncate(time.Millisecond)) {
		t.Fatalf("live after a beat: %+v", live)
	}
}
