package bot_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"shopbot/bot/storefront"
)

// Every webhook delivery is counted by its outcome: accepted (stored,
// answered 200) or not_stored (Redis refused it, answered 503 so that
// Telegram delivers it again); the alert on webhook errors reads both.
func TestWebhookOutcomesAreCounted(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(func(o *storefront.Options) { o.WebhookURL, o.WebhookSecret = "https://shop.example/hook", "s3cret" })
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	msrv := httptest.NewServer(b.MetricsHandler())
	defer msrv.Close()
	// counts scrapes /metrics once (with Redis down, a scrape waits for
	// the store's gauges to time out) and reads the webhook counters.
	counts := func() (accepted, notStored float64) {
		resp, err := http.Get(msrv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		count := func(result string) float64 {
			m := regexp.MustCompile(`(?m)^shopbot_updates_total\{kind="webhook",result="` + result + `"\} (\S+)$`).FindSubmatch(body)
			if m == nil {
				return 0
			}
			n, _ := strconv.ParseFloat(string(m[1]), 64)
			return n
		}
		return count("accepted"), count("not_stored")
	}
	code, err := h.fake.DeliverWebhook(context.Background(), srv.URL+"/hook", "s3cret", h.fake.SendCommand(chat, "start", ""))
	if accepted, notStored := counts(); err != nil || code != http.StatusOK || accepted != 1 || notStored != 0 {
		t.Fatalf("a stored delivery: %d, %v; accepted %v, not_stored %v", code, err, accepted, notStored)
	}
	if h.rdb.Mini == nil {
		return // stopping a shared real Redis is not ours to do
	}
	h.rdb.Mini.Close()
	code, err = h.fake.DeliverWebhook(context.Background(), srv.URL+"/hook", "s3cret", h.fake.SendCommand(chat, "help", ""))
	if accepted, notStored := counts(); err != nil || code != http.StatusServiceUnavailable || accepted != 1 || notStored != 1 {
		t.Fatalf("a delivery with Redis down: %d, %v; accepted %v, not_stored %v", code, err, accepted, notStored)
	}
}
