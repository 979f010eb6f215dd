package metrics

import (
	"context"
	"errors"
	"testing"

	"shopbot/state/redisstore"
)

// ObserveSync counts each durability wait under its mode and result: a
// wait not confirmed (ErrNotDurable) apart from other errors, and a node
// that could not be probed as mode "unknown".
func TestObserveSyncLabels(t *testing.T) {
	m := New("test")
	m.ObserveSync(redisstore.SyncWaitAOF, nil)
	m.ObserveSync(redisstore.SyncWaitAOF, nil)
	m.ObserveSync(redisstore.SyncWait, &redisstore.NotDurableError{Mode: redisstore.SyncWait, WantReplicas: 1})
	m.ObserveSync("", &redisstore.NotDurableError{Err: context.DeadlineExceeded})
	m.ObserveSync(redisstore.SyncNone, errors.New("state: Durability.Sync on Redis Cluster needs the key that was written"))
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "shopbot_durability_syncs_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			key := ""
			for _, l := range s.GetLabel() {
				key += l.GetName() + "=" + l.GetValue() + " "
			}
			got[key] = s.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"mode=waitaof result=confirmed ":     2,
		"mode=wait result=not_confirmed ":    1,
		"mode=unknown result=not_confirmed ": 1,
		"mode=none result=error ":            1,
	}
	if len(got) != len(want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("counted %v, want %v", got, want)
		}
	}
}
