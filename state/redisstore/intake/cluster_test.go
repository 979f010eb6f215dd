package intake

import (
	"testing"

	"shopbot/state/redisstore"

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
	statetest.AssertSeveralMasters(t, r, func(yield func(string) bool) {
		for sh := range ChatShards {
			if !yield(q.ready(sh)) {
				return
			}
		}
	})
}
