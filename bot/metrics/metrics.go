package metrics

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
	"shopbot/state/redisstore/records"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"shopbot/state"
)

// Metrics are the shop's Prometheus metrics, on their own registry.
type Metrics struct {
	Registry *prometheus.Registry
	Updates  *prometheus.CounterVec   // kind, result
	Latency  *prometheus.HistogramVec // kind
	BotAPI   *prometheus.CounterVec   // method, result
	Upstream *prometheus.CounterVec   // endpoint, status
	UpLat    *prometheus.HistogramVec // endpoint
	// Business metrics, counted by this process.
	Orders     *prometheus.CounterVec // line, state: orders entering a state
	Refunds    *prometheus.CounterVec // line, method: orders refunded
	Fulfilment prometheus.Histogram   // payment to delivery, seconds
	Balance    prometheus.Gauge       // upstream balance, USD, at the last account check
	// Syncs counts the waits for a money write or an acknowledged update
	// to be durable (redisstore.Durability), by mode and result.
	Syncs *prometheus.CounterVec // mode, result

	mu      sync.Mutex
	sources []storeSource // read on each scrape by the store collector
}

// storeSource is one bot's store, read when /metrics is scraped.
type storeSource struct {
	queue   *intake.Queue
	orders  *records.Orders
	reviews *records.ChargeReviews
	rdb     redisstore.Client // INFO on every master, for memory and evictions
}

// New registers the shop's metrics, plus the Go and process collectors
// and build info of version, on a new registry.
func New(version string) *Metrics {
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
		Orders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shopbot_order_transitions_total", Help: "Orders entering a state (paid on creation), by product line and state, counted by this process.",
		}, []string{"line", "state"}),
		Refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shopbot_refunds_total", Help: "Orders refunded, by product line and payment method, counted by this process.",
		}, []string{"line", "method"}),
		Fulfilment: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "shopbot_fulfilment_seconds", Help: "Time from payment to delivery of an order.",
			Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600, 3 * 3600, 12 * 3600, 86400},
		}),
		Balance: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shopbot_upstream_balance_usd", Help: "The upstream account balance in USD at the last account check (every minute).",
		}),
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shopbot_durability_syncs_total", Help: "Waits for a money write or an acknowledged update to be durable in Redis, by mode (none: the server's own settings are the guarantee; wait: WAIT for a replica; waitaof: WAITAOF, then WAIT when there is a replica; unknown: Redis could not be probed) and result (confirmed, not_confirmed: the step is retried later; error).",
		}, []string{"mode", "result"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shopbot_build_info", Help: "The running build: version (stamped at build) and Go version; always 1.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	m.Registry.MustRegister(m.Updates, m.Latency, m.BotAPI, m.Upstream, m.UpLat,
		m.Orders, m.Refunds, m.Fulfilment, m.Balance, m.Syncs, build, storeCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveUpstream records one reseller API call; it fits the reseller
// client's observer option.
func (m *Metrics) ObserveUpstream(endpoint string, status int, d time.Duration) {
	m.Upstream.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
	m.UpLat.WithLabelValues(endpoint).Observe(d.Seconds())
}

// ObserveSync counts one durability wait; it fits
// redisstore.WithSyncObserver.
func (m *Metrics) ObserveSync(mode redisstore.SyncMode, err error) {
	label := string(mode)
	if label == "" {
		label = "unknown"
	}
	result := "confirmed"
	switch {
	case errors.Is(err, redisstore.ErrNotDurable):
		result = "not_confirmed"
	case err != nil:
		result = "error"
	}
	m.Syncs.WithLabelValues(label, result).Inc()
}

// ObserveOrder counts an order's creation (from "") or change of status;
// it fits records.Orders.Observe.
func (m *Metrics) ObserveOrder(o *state.Order, from string) {
	m.Orders.WithLabelValues(o.Line, o.Status).Inc()
	switch o.Status {
	case state.OrderRefunded:
		m.Refunds.WithLabelValues(o.Line, o.PayMethod).Inc()
	case state.OrderDelivered:
		end := o.DeliveredAt
		if end.IsZero() {
			end = o.UpdatedAt
		}
		if !o.CreatedAt.IsZero() && !end.Before(o.CreatedAt) {
			m.Fulfilment.Observe(end.Sub(o.CreatedAt).Seconds())
		}
	}
}

// AddStore makes /metrics read a bot's store on each scrape: the intake
// queue, the orders, the charge reviews, and Redis's own memory figures
// (INFO on every master of rdb).
func (m *Metrics) AddStore(queue *intake.Queue, orders *records.Orders, reviews *records.ChargeReviews, rdb redisstore.Client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources = append(m.sources, storeSource{queue: queue, orders: orders, reviews: reviews, rdb: rdb})
}

var (
	descPending = prometheus.NewDesc("shopbot_intake_chats_pending", "Chats with updates waiting or in progress (read on scrape).", nil, nil)
	descOrders  = prometheus.NewDesc("shopbot_orders", "Orders in the store by current state (read on scrape).", []string{"state"}, nil)
	descFinding = prometheus.NewDesc("shopbot_reconcile_findings", "Reconciliation findings waiting for an admin (read on scrape): orphans (upstream orders nobody owns), disputes (upstream orders an order in review may own), needs_review (orders), charge_reviews (payments without an order).", []string{"kind"}, nil)
	descStoreUp = prometheus.NewDesc("shopbot_store_up", "1 when the store could be read for this scrape.", nil, nil)
	descOldest  = prometheus.NewDesc("shopbot_orders_oldest_in_progress_seconds", "Age since payment of the oldest order still on its way (paid, placing, placed or refunding; not in review), 0 when there is none (read on scrape). Admins are alerted about an order older than 30 minutes.", nil, nil)

	// Redis's own figures, from INFO on every master (read on scrape). The
	// shop needs maxmemory-policy noeviction: an evicted order is lost money.
	descRedisUsed    = prometheus.NewDesc("shopbot_redis_used_memory_bytes", "Redis used_memory of each master (read on scrape).", []string{"node"}, nil)
	descRedisMax     = prometheus.NewDesc("shopbot_redis_maxmemory_bytes", "Redis maxmemory of each master, 0 for no limit (read on scrape).", []string{"node"}, nil)
	descRedisEvicted = prometheus.NewDesc("shopbot_redis_evicted_keys_total", "Keys Redis evicted since the master started, per master (INFO evicted_keys, read on scrape); anything above 0 may be a lost order.", []string{"node"}, nil)
	descRedisPolicy  = prometheus.NewDesc("shopbot_redis_maxmemory_policy", "Always 1, labelled with each master's maxmemory-policy; the shop needs noeviction (read on scrape).", []string{"node", "policy"}, nil)
)

// storeCollector reads the store's gauges when /metrics is scraped, so they
// are current whether or not anything else looks at them.
type storeCollector struct{ m *Metrics }

func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPending
	ch <- descOrders
	ch <- descFinding
	ch <- descStoreUp
	ch <- descOldest
	ch <- descRedisUsed
	ch <- descRedisMax
	ch <- descRedisEvicted
	ch <- descRedisPolicy
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	sources := append([]storeSource(nil), c.m.sources...)
	c.m.mu.Unlock()
	if len(sources) == 0 {
		return
	}
	s := sources[0] // every bot of a registry shares one store
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	up := 1.0
	if n, err := s.queue.Pending(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(n))
	} else {
		up = 0
	}
	if st, err := s.orders.Stats(ctx); err == nil {
		for _, name := range state.OrderStatuses {
			ch <- prometheus.MustNewConstMetric(descOrders, prometheus.GaugeValue, float64(st.ByStatus[name]), name)
		}
		ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, float64(st.Orphans), "orphans")
		ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, float64(st.Disputed), "disputes")
		ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, float64(st.ByStatus[state.OrderNeedsReview]), "needs_review")
	} else {
		up = 0
	}
	if n, err := s.reviews.Len(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(descFinding, prometheus.GaugeValue, float64(n), "charge_reviews")
	} else {
		up = 0
	}
	if at, err := s.orders.OldestInProgress(ctx); err == nil {
		age := 0.0
		if !at.IsZero() {
			age = max(0, time.Since(at).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, age)
	} else {
		up = 0
	}
	if s.rdb != nil {
		// A server that does not describe its memory (the embedded store)
		// or refuses INFO has no such figures; that is not the store being
		// down, which the reads above tell.
		nodes, _ := redisstore.ReadMemory(ctx, s.rdb)
		for _, n := range nodes {
			if !n.Known() {
				continue
			}
			ch <- prometheus.MustNewConstMetric(descRedisUsed, prometheus.GaugeValue, float64(n.UsedBytes), n.Node)
			ch <- prometheus.MustNewConstMetric(descRedisMax, prometheus.GaugeValue, float64(n.MaxBytes), n.Node)
			ch <- prometheus.MustNewConstMetric(descRedisEvicted, prometheus.CounterValue, float64(n.EvictedKeys), n.Node)
			ch <- prometheus.MustNewConstMetric(descRedisPolicy, prometheus.GaugeValue, 1, n.Node, n.Policy)
		}
	}
	ch <- prometheus.MustNewConstMetric(descStoreUp, prometheus.GaugeValue, up)
}
