package redisstore

import (
	"context"
	"hash/crc32"

	"github.com/redis/go-redis/v9"
)

// SchemaVersion is part of every key, so an incompatible layout change can
// live beside the old one while it drains.
const SchemaVersion = "v1"

// DefaultPrefix is the key prefix used when none is configured.
const DefaultPrefix = "shopbot:" + SchemaVersion + ":"

// Key layout on Redis Cluster (docs/design.md, "Key layout"): every script declares
// every key it touches in KEYS, and every multi-key operation stays within
// one hash slot by design. The keys of one chat's intake share the hash
// tag of the chat's shard ("{c:<n>}", intake.ChatShards of them), so the intake's
// ready set and leases are sharded with them and no slot carries all
// chats; the job schedule is sharded the same way ("{sched:<n>}"); a
// buyer's wallet has its own tag ("{wallet:<user>}"); the referral
// program shares the buyer registry's ("{users}"), so an invite is
// attributed only to a buyer the registry has not seen, in one script
// (records/referrals.go). What must stay
// atomic across every buyer (the order store's charge, quote and upstream
// indexes, the placement slots) keeps one tag, "{orders}".

// Shard picks the shard of s among n: the intake's chats
// (intake.ChatShards) and the schedules' jobs (sched.Shards). Every
// sharded key is named by it, so it never changes.
func Shard(s string, n int) int {
	return int(crc32.ChecksumIEEE([]byte(s)) % uint32(n))
}

// SumCard adds up the sizes of the sorted sets of n shards (key names a
// shard's set), in one pipeline: how many entries a sharded set holds.
func SumCard(ctx context.Context, rdb redis.UniversalClient, n int, key func(shard int) string) (int64, error) {
	cmds := make([]*redis.IntCmd, n)
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for sh := range n {
			cmds[sh] = p.ZCard(ctx, key(sh))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var total int64
	for _, c := range cmds {
		total += c.Val()
	}
	return total, nil
}
