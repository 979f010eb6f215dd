// Package redisstore is how the shop reaches Redis and what it may trust of
// a write: the connection in its modes (embedded, single, Sentinel,
// Cluster: redis.go), durability waits and the persistence probe
// (durable.go), the key prefix (keys.go), the store's epoch (epoch.go),
// the canary that notices lost writes (canary.go), the rate limiter
// (ratelimit.go) and the small conversions the stores share (values.go).
//
// The stores themselves are in its packages: records (orders, quotes,
// wallets, promo codes, referrals, buyers: the Redis side of package
// state's records) and work (the bot's intake, conversations, schedules,
// caches, broadcasts, order chats).
package redisstore
