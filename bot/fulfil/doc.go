// Package fulfil drives paid orders to delivered or refunded, exactly once:
// the placement protocol (place.go: the protocol's steps, the intent and the
// create; slots.go: a kind's placement slot and its line of waiters;
// reconcile.go: listing above a watermark, reconciling an ambiguous create,
// adopting only what is provable), putting back what Redis lost from the
// host's journal (recover.go, journal.go), tracking and refunds
// (fulfil.go), delivery of codes and notices (deliver.go), the orphan
// scan's job (orphans.go; the scan itself is package orphans) and the admin
// operations on one order (admin.go). What each product line sends
// upstream, what the upstream echoes of it, the create call and what the
// item is called are bot/upstreamorder's. It reaches Telegram, admins and
// the order chat relay through the small interfaces in deps.go, never
// through the bot itself.
package fulfil
