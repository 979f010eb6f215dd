package redisstore

// SchemaVersion is part of every key, so an incompatible layout change can
// live beside the old one while it drains.
const SchemaVersion = "v1"

// DefaultPrefix is the key prefix used when none is configured.
const DefaultPrefix = "shopbot:" + SchemaVersion + ":"

// Key layout on Redis Cluster (README, "Redis"): every script declares
// every key it touches in KEYS, and every multi-key operation stays within
// one hash slot by design. The keys of one chat's intake share the hash
// tag of the chat's shard ("{c:<n>}", work.ChatShards of them), so the intake's
// ready set and leases are sharded with them and no slot carries all
// chats; the job schedule is sharded the same way ("{sched:<n>}"); a
// buyer's wallet has its own tag ("{wallet:<user>}"); the referral
// program shares the buyer registry's ("{users}"), so an invite is
// attributed only to a buyer the registry has not seen, in one script
// (records/referrals.go). What must stay
// atomic across every buyer (the order store's charge, quote and upstream
// indexes, the placement slots) keeps one tag, "{orders}".
