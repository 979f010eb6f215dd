package sched

import (
	"testing"

	"shopbot/state/redisstore"

	"shopbot/state/statetest"
)

// A job's due and token records share a slot; the jobs spread over
// Shards slots, named schedules apart from the default one.
func TestScheduleShardsSpreadOverSlots(t *testing.T) {
	r := statetest.New(t)
	s, named := NewSchedule(r.Client, r.Prefix), NewNamedSchedule(r.Client, r.Prefix, "chat")
	slots := map[int]bool{}
	for i := range 300 {
		job := "track:" + redisstore.Itoa(int64(i))
		for _, sc := range []*Schedule{s, named} {
			k := sc.jobKeys(job)
			if redisstore.KeySlot(k[0]) != redisstore.KeySlot(k[1]) {
				t.Fatalf("job %s: due and token records in different slots", job)
			}
			slots[redisstore.KeySlot(k[0])] = true
		}
	}
	if len(slots) != 2*Shards {
		t.Fatalf("jobs use %d slots, want %d", len(slots), 2*Shards)
	}
	statetest.AssertSeveralMasters(t, r, func(yield func(string) bool) {
		for n := range Shards {
			if !yield(s.keys(n)[0]) {
				return
			}
		}
	})
}
