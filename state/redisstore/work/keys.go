package work

import (
	"context"
	"hash/crc32"

	"github.com/redis/go-redis/v9"
)

// ChatShards is how many shards the update intake has: each is one hash
// slot holding its chats' queues, conversations, leases and ready set.
const ChatShards = 16

// ScheduleShards is how many shards a job schedule has.
const ScheduleShards = 8

// shardOf picks the shard of s among n.
func shardOf(s string, n int) int {
	return int(crc32.ChecksumIEEE([]byte(s)) % uint32(n))
}

// chatShard is the shard of chat.
func chatShard(chat int64) int { return shardOf(itoa(chat), ChatShards) }

// sumCard adds up the sizes of the sorted sets of n shards (key names a
// shard's set), in one pipeline: how many entries a sharded set holds.
func sumCard(ctx context.Context, rdb redis.UniversalClient, n int, key func(shard int) string) (int64, error) {
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
