// Package records keeps the shop's records in Redis: orders and their
// indexes, placement slots and orphan marks (orders.go, slots.go,
// stats.go), quotes, wallets and their top-ups (wallet.go,
// wallettopups.go), promo codes, referrals, the buyer registry (users.go),
// the charge review list and the admin credit audit. The records and their
// rules are package state's; every money movement here is exactly once, by
// a ledger ref or a Lua script keyed by the charge or the order.
package records
