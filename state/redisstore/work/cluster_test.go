package work

import (
	"shopbot/state/redisstore"
	"testing"

	"github.com/redis/go-redis/v9"

	"shopbot/state/statetest"
)

// The intake's keys of one chat share one slot (its scripts touch them
// together), and the chats spread over ChatShards slots; on a real cluster
// those slots live on more than one master.
func TestIntakeShardsSpreadOverSlots(t *testing.T) {
	r := statetest.New(t)
	q := NewQueue(r.Client, r.Prefix)
	slots := map[int]bool{}
	for chat := int64(1); chat <= 500; chat++ {
		keys := q.chatKeys(chat)
		for _, k := range keys[1:] {
			if redisstore.KeySlot(k) != redisstore.KeySlot(keys[0]) {
				t.Fatalf("chat %d: %s and %s are in different slots", chat, k, keys[0])
			}
		}
		if redisstore.KeySlot(q.tag(chatShard(chat))+"seen:77") != redisstore.KeySlot(keys[0]) {
			t.Fatalf("chat %d: seen ids outside the chat's slot", chat)
		}
		slots[redisstore.KeySlot(keys[0])] = true
	}
	if len(slots) != ChatShards {
		t.Fatalf("500 chats use %d slots, want %d", len(slots), ChatShards)
	}
	assertSeveralMasters(t, r, func(yield func(string) bool) {
		for sh := range ChatShards {
			if !yield(q.ready(sh)) {
				return
			}
		}
	})
}

// A job's due and token records share a slot; the jobs spread over
// ScheduleShards slots, named schedules apart from the default one.
func TestScheduleShardsSpreadOverSlots(t *testing.T) {
	r := statetest.New(t)
	s, named := NewSchedule(r.Client, r.Prefix), NewNamedSchedule(r.Client, r.Prefix, "chat")
	slots := map[int]bool{}
	for i := range 300 {
		job := "track:" + itoa(int64(i))
		for _, sc := range []*Schedule{s, named} {
			k := sc.jobKeys(job)
			if redisstore.KeySlot(k[0]) != redisstore.KeySlot(k[1]) {
				t.Fatalf("job %s: due and token records in different slots", job)
			}
			slots[redisstore.KeySlot(k[0])] = true
		}
	}
	if len(slots) != 2*ScheduleShards {
		t.Fatalf("jobs use %d slots, want %d", len(slots), 2*ScheduleShards)
	}
	assertSeveralMasters(t, r, func(yield func(string) bool) {
		for n := range ScheduleShards {
			if !yield(s.keys(n)[0]) {
				return
			}
		}
	})
}

// assertSeveralMasters checks, on a real cluster only, that keys live on
// more than one master.
func assertSeveralMasters(t *testing.T, r *statetest.Redis, keys func(func(string) bool)) {
	t.Helper()
	cc, ok := r.Client.(*redis.ClusterClient)
	if !ok {
		return
	}
	masters := map[string]bool{}
	for k := range keys {
		m, err := cc.MasterForKey(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		masters[m.Options().Addr] = true
	}
	if len(masters) < 2 {
		t.Fatalf("the shards all live on %v", masters)
	}
}
