// Package sched keeps the durable job schedules in Redis (schedule.go):
// tracking, placing and refund retries, order chats' polling and the
// books' runs, each a schedule of named jobs any replica may claim under a
// lease, sharded by job name over Shards cluster slots.
package sched
