// Package work keeps the bot's work in Redis: the update intake's queues,
// per-chat conversations and leases (intake.go, sharded by chat: keys.go),
// flood waits (floods.go), the catalog cache (cache.go), product images'
// file_ids (images.go), broadcasts (broadcast.go), order chats
// (orderchats.go), the checkout's payment bookkeeping (payments.go), admin
// alerts (alerts.go), support tickets (tickets.go), the books'
// reconciliation runs (reconcileruns.go), and the migration of the key
// layout (migrate.go), the job schedules' keys (package sched) included.
package work
