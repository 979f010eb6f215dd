// Package bot is the shop's Telegram adapter, and the only package that
// speaks go-telegram: update intake (long polling and webhook, intake.go),
// per-chat dispatch on workers (dispatch.go), each update turned into the
// typed event it means and handed to whoever takes that kind (handler.go:
// flow events to the engine, payments to checkout, an admin's reply to
// support), rendering flow replies into Bot API calls (handler.go; the live
// menu as text or a photo, screen.go, with its image from package images), the
// calls the features make behind their small interfaces (messages.go,
// stars.go), outgoing pacing and retries (api.go, tgcall.go), and the
// metrics (package metrics) and health endpoints (http.go).
//
// bot.New also assembles the shop's features from their own options
// (wire.go): checkout (payments), fulfil (paid orders to delivered),
// orderchat (the operator chat relay), support (tickets), admin
// (reports, orders, credit, broadcasts, alerts) and referral (invite links
// and rewards). None of them imports this package.
package bot
