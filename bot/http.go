package bot

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /healthz, /metrics and, in webhook mode, the webhook at
// the path of WEBHOOK_URL.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := b.rdb.Ping(ctx).Err(); err != nil {
			http.Error(w, "redis: unavailable", http.StatusServiceUnavailable)
			return
		}
		if n, err := b.Queue.Pending(ctx); err == nil {
			b.metrics.Queue.Set(float64(n))
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(b.metrics.Registry, promhttp.HandlerOpts{}))
	if b.opts.WebhookURL != "" {
		mux.HandleFunc(webhookPath(b.opts.WebhookURL), b.webhook)
	}
	return mux
}

func webhookPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}
