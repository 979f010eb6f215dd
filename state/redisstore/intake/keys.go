package intake

import "shopbot/state/redisstore"

// ChatShards is how many shards the update intake has: each is one hash
// slot holding its chats' queues, conversations, leases and ready set.
const ChatShards = 16

// chatShard is the shard of chat.
func chatShard(chat int64) int { return redisstore.Shard(itoa(chat), ChatShards) }
