package bot

import "shopbot/bot/metrics"

// Version is the shop's version, stamped at build with
// -ldflags "-X shopbot/bot.Version=…"; "dev" otherwise.
var Version = "dev"

// NewMetrics registers the shop's metrics, plus the Go and process
// collectors and build info, on a new registry.
func NewMetrics() *metrics.Metrics { return metrics.New(Version) }
