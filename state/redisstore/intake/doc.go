// Package intake keeps the update intake in Redis (intake.go): the
// per-chat queues of Telegram updates, the chats' conversation documents
// and the leases that let one worker in any replica handle a chat at a
// time, sharded by chat over ChatShards cluster slots (keys.go); the
// failover tests under traffic (failover_test.go).
package intake
