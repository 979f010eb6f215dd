// Package work keeps the bot's work in Redis beside the update intake
// (package intake) and the job schedules (package sched): flood waits
// (floods.go), the catalog cache (cache.go), product images' file_ids
// (images.go), broadcasts (broadcast.go), order chats (orderchats.go), the
// checkout's payment bookkeeping (payments.go), admin alerts (alerts.go),
// support tickets (tickets.go), the books' reconciliation runs
// (reconcileruns.go), the admin console's one-time links (links.go), and
// the migration of the key layout (migrate.go), the intake's and the
// schedules' keys included.
package work
