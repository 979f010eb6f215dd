package bot

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the shop's Prometheus metrics, on their own registry.
type Metrics struct {
	Registry *prometheus.Registry
	Updates  *prometheus.CounterVec   // kind, result
	Latency  *prometheus.HistogramVec // kind
	BotAPI   *prometheus.CounterVec   // method, result
	Upstream *prometheus.CounterVec   // endpoint, status
	UpLat    *prometheus.HistogramVec // endpoint
	Queue    prometheus.Gauge
}

// NewMetrics registers the shop's metrics, plus the Go and process
// collectors, on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shopbot_updates_total", Help: "Telegram updates handled, by kind and result.",
		}, []string{"kind", "result"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shopbot_handler_seconds", Help: "Time to handle one update, by kind.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"kind"}),
		BotAPI: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shopbot_botapi_calls_total", Help: "Bot API calls, by method and result.",
		}, []string{"method", "result"}),
		Upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shopbot_upstream_calls_total", Help: "Reseller API calls, by endpoint and HTTP status (0: no response).",
		}, []string{"endpoint", "status"}),
		UpLat: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shopbot_upstream_seconds", Help: "Reseller API call latency, by endpoint.",
			Buckets: prometheus.DefBuckets,
		}, []string{"endpoint"}),
		Queue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shopbot_intake_chats_pending", Help: "Chats with updates waiting or in progress.",
		}),
	}
	m.Registry.MustRegister(m.Updates, m.Latency, m.BotAPI, m.Upstream, m.UpLat, m.Queue,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveUpstream records one reseller API call; it fits the reseller
// client's observer option.
func (m *Metrics) ObserveUpstream(endpoint string, status int, d time.Duration) {
	m.Upstream.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
	m.UpLat.WithLabelValues(endpoint).Observe(d.Seconds())
}
