// Package fulfil drives paid orders to delivered or refunded, exactly once:
// placement protocol v2 (place.go: placement slots, watermarks, adopting
// only what is provable), the quote an order was bought from (request.go),
// tracking and refunds (fulfil.go), delivery of codes and notices
// (deliver.go), the orphan scan that reports upstream orders nobody owns
// (orphans.go) and the admin operations on one order (admin.go). What each
// product line sends upstream, what the upstream echoes of it and the
// create call are bot/lines'. It reaches Telegram, admins and the order
// chat relay through the small interfaces in deps.go, never through the bot
// itself.
package fulfil
