// Package state keeps everything the shop stores in Redis: the update intake
// queues, per-chat conversation documents and their leases, quotes, orders,
// wallets, the tracking schedule and the catalog cache.
package state
