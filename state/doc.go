// Package state holds the shop's records and their rules, and no storage:
// the order, its statuses and the lifecycle table (CanMove, Terminal,
// Transition), quotes, the wallet's ledger entries and top-ups, promo
// codes, referral outcomes and rewards, charges listed for review, admin
// credits, what an order brought (margin.go), and the errors callers test
// with errors.Is. It also keeps the host's journal of paid orders and
// placement attempts (journal.go: files, not Redis).
//
// The Redis store that keeps these records is beside it, in
// state/redisstore and its packages; state imports none of them, nor
// go-redis (layers_test.go checks).
package state
