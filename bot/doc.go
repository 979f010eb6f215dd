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
// The adapter builds none of the shop's features: package storefront
// assembles them (checkout, fulfil, orderchat, support, admin, books,
// referral) over the Bot and hands it what it dispatches to and runs as
// Features (features.go), behind small interfaces. None of them imports
// this package.
package bot
