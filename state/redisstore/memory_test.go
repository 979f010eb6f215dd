package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"shopbot/state/statetest"
)

func TestParseMemoryReadsTheEvictionFields(t *testing.T) {
	info := strings.Join([]string{
		"# Memory", "used_memory:1048576", "used_memory_human:1.00M", "maxmemory:2097152",
		"maxmemory_human:2.00M", "maxmemory_policy:allkeys-lru", "", "# Stats", "evicted_keys:42", "expired_keys:7",
	}, "\r\n")
	got := parseMemory(info)
	want := Memory{UsedBytes: 1 << 20, MaxBytes: 2 << 20, Policy: "allkeys-lru", EvictedKeys: 42}
	if got != want || !got.Known() {
		t.Fatalf("parseMemory = %+v, want %+v", got, want)
	}
}

// An embedded store answers INFO without a memory section: nothing is
// known, and that is no error.
func TestReadMemoryOfAServerThatDoesNotSay(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	got, err := ReadMemory(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Known() || got[0].Node != m.Addr() {
		t.Fatalf("ReadMemory on miniredis = %+v, want one unknown node %s", got, m.Addr())
	}
}

// TestReadMemorySeesEvictions fills a real redis-server that may evict
// (a 2 MB maxmemory with allkeys-lru) until it drops keys, and checks that
// ReadMemory reports the policy, the limit and the evictions.
func TestReadMemorySeesEvictions(t *testing.T) {
	s := statetest.StartServer(t, "--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru")
	ctx := context.Background()
	before, err := ReadMemory(ctx, s.Client)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 1 || before[0].Policy != "allkeys-lru" || before[0].MaxBytes != 2<<20 || before[0].EvictedKeys != 0 {
		t.Fatalf("before filling: %+v", before)
	}
	value := strings.Repeat("x", 10_000)
	for i := range 1_000 { // 10 MB into 2 MB
		if err := s.Client.Set(ctx, "fill:"+strconv.Itoa(i), value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := ReadMemory(ctx, s.Client)
	if err != nil {
		t.Fatal(err)
	}
	if after[0].EvictedKeys == 0 || after[0].UsedBytes == 0 || after[0].UsedBytes > 4*after[0].MaxBytes {
		t.Fatalf("after writing 10 MB into 2 MB: %+v, want evictions", after[0])
	}
}
