// Package metrics holds the shop's Prometheus metrics on their own
// registry: updates and their latency, Bot API and upstream calls, order
// transitions, refunds, fulfilment time and the upstream balance, plus the
// store's gauges read on each scrape (AddStore). The Telegram adapter
// (package bot) builds and serves them.
package metrics
