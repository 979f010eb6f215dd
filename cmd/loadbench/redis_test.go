package main

import (
	"testing"
	"time"
)

// The counters read from INFO: commands, CPU (user and system, every
// thread) and each command's calls; the difference of two readings leaves
// out the earlier reading's own INFO.
func TestRedisCountersFromInfo(t *testing.T) {
	before := parseCounters("# Stats\r\ntotal_commands_processed:100\r\n# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\nused_cpu_sys_children:9.000000\r\n" +
		"# Commandstats\r\ncmdstat_get:calls=10,usec=30,usec_per_call=3.00\r\ncmdstat_info:calls=5,usec=50,usec_per_call=10.00\r\n")
	before.reads = 1
	after := parseCounters("total_commands_processed:131\r\nused_cpu_sys:1.600000\r\nused_cpu_user:2.300000\r\n" +
		"cmdstat_get:calls=30,usec=90\r\ncmdstat_client|list:calls=4,usec=8\r\ncmdstat_info:calls=6,usec=60\r\n")
	d := after.since(before)
	if d.ops != 30 || d.cpu != 150*time.Millisecond || d.calls["get"] != 20 || d.calls["client|list"] != 4 {
		t.Fatalf("since: %d commands, %v CPU, calls %v", d.ops, d.cpu, d.calls)
	}
	if got, want := d.top(2, 10), "get 2.00, client list 0.40"; got != want {
		t.Fatalf("top: %q, want %q", got, want)
	}
}

// Clients of other databases are counted, the benchmark's own and
// connections being set up are not.
func TestOtherClients(t *testing.T) {
	list := "id=1 addr=127.0.0.1:1 db=12 cmd=evalsha\n" +
		"id=2 addr=127.0.0.1:2 db=0 cmd=get\n" +
		"id=3 addr=127.0.0.1:3 db=0 cmd=hello\n" +
		"id=4 addr=127.0.0.1:4 db=14 cmd=flushdb\n"
	if n := otherClients(list, 12); n != 2 {
		t.Fatalf("%d other clients, want 2", n)
	}
}
