package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"shopbot/state/redisstore"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTPLimits bound the webhook listener's connections, so that slow or idle
// clients cannot hold it. Zero fields take the defaults.
type HTTPLimits struct {
	ReadHeaderTimeout time.Duration // default 5s
	ReadTimeout       time.Duration // the whole request, body included; default 10s
	WriteTimeout      time.Duration // from the end of the headers to the end of the answer; default 15s
	IdleTimeout       time.Duration // a keep-alive connection between requests; default 60s
	MaxBodyBytes      int64         // a larger webhook body gets 413; default 1 MiB
}

func (l HTTPLimits) withDefaults() HTTPLimits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.ReadHeaderTimeout, 5*time.Second)
	def(&l.ReadTimeout, 10*time.Second)
	def(&l.WriteTimeout, 15*time.Second)
	def(&l.IdleTimeout, 60*time.Second)
	if l.ReadHeaderTimeout > l.ReadTimeout {
		l.ReadHeaderTimeout = l.ReadTimeout
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = 1 << 20
	}
	return l
}

// Handler serves /healthz and, in webhook mode, the webhook at the path of
// WEBHOOK_URL. /metrics is not here: it has its own listener
// (MetricsHandler on METRICS_ADDR), so the public webhook port does not
// show the shop's internals.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", b.healthz)
	if b.opts.WebhookURL != "" {
		mux.HandleFunc(webhookPath(b.opts.WebhookURL), b.webhook)
	}
	for _, m := range b.mounts {
		mux.Handle(m.pattern, m.h)
	}
	return mux
}

// mount is a handler served at pattern on the HTTP listener.
type mount struct {
	pattern string
	h       http.Handler
}

// Mount serves h at pattern (a ServeMux pattern, such as "/app/") on the
// HTTP listener (HTTP_ADDR) beside /healthz and the webhook: the Mini App
// (package webapp), which storefront mounts. Call it before Run. The
// webhook's path and /healthz stay theirs (the more specific pattern wins
// in a ServeMux); the same pattern as theirs, or as an earlier mount, is
// refused.
func (b *Bot) Mount(pattern string, h http.Handler) error {
	taken := pattern == "/healthz" || (b.opts.WebhookURL != "" && webhookPath(b.opts.WebhookURL) == pattern)
	for _, m := range b.mounts {
		taken = taken || m.pattern == pattern
	}
	if taken {
		return fmt.Errorf("serve %s: the path is already served (the webhook, /healthz or another mount)", pattern)
	}
	b.mounts = append(b.mounts, mount{pattern, h})
	return nil
}

// MetricsHandler serves /metrics (and /healthz, for a probe on the private
// port). Gauges are refreshed by collectors on each scrape.
func (b *Bot) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(b.metrics.Registry, promhttp.HandlerOpts{Timeout: 10 * time.Second}))
	mux.HandleFunc("/healthz", b.healthz)
	return mux
}

func (b *Bot) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := redisstore.Ping(ctx, b.rdb); err != nil {
		http.Error(w, "redis: unavailable", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// NewHTTPServer returns the server for the webhook listener (Handler) with
// the timeouts of Options.HTTPLimits. Run uses it; tests serve it on their
// own listener.
func (b *Bot) NewHTTPServer() *http.Server {
	l := b.opts.HTTPLimits
	return &http.Server{
		Addr: b.opts.HTTPAddr, Handler: b.Handler(),
		ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
	}
}

// newMetricsServer returns the server for the metrics listener.
func (b *Bot) newMetricsServer() *http.Server {
	return &http.Server{
		Addr: b.opts.MetricsAddr, Handler: b.MetricsHandler(),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second,
	}
}

// listen opens ln, or addr when ln is nil; nil, nil when neither is set.
func listen(ln net.Listener, addr, what string) (net.Listener, error) {
	if ln != nil || addr == "" {
		return ln, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listener on %s: %w", what, addr, err)
	}
	return l, nil
}

// serveAll starts the webhook and metrics servers on their listeners and
// returns a function that shuts them down.
func (b *Bot) serveAll(errc chan<- error) (stop func(), err error) {
	type pair struct {
		srv *http.Server
		ln  net.Listener
	}
	var servers []pair
	closeAll := func() {
		for _, p := range servers {
			_ = p.ln.Close()
		}
	}
	web, err := listen(b.opts.HTTPListener, b.opts.HTTPAddr, "http")
	if err != nil {
		return nil, err
	}
	if web != nil {
		servers = append(servers, pair{b.NewHTTPServer(), web})
	}
	met, err := listen(b.opts.MetricsListener, b.opts.MetricsAddr, "metrics")
	if err != nil {
		closeAll()
		return nil, err
	}
	if met != nil {
		servers = append(servers, pair{b.newMetricsServer(), met})
	}
	for _, p := range servers {
		go func() {
			if err := p.srv.Serve(p.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("http server on %s: %w", p.ln.Addr(), err)
			}
		}()
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, p := range servers {
			_ = p.srv.Shutdown(ctx)
		}
	}, nil
}

func webhookPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}
