package statetest

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// AssertSeveralMasters checks, on a real cluster only, that keys live on
// more than one master.
func AssertSeveralMasters(t *testing.T, r *Redis, keys func(func(string) bool)) {
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
