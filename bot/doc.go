// Package bot is the Telegram side of the shop: update intake (long polling
// and webhook), per-chat dispatch, rendering flow screens into Bot API calls,
// outgoing rate limits, metrics and health endpoints.
package bot
