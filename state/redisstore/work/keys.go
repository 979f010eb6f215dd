package work

import "hash/crc32"

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
