package bot_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot"
	adminside "shopbot/bot/admin" // the test's admin is a chat id
	"shopbot/bot/storefront"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/statetest"
)

// listenLocal opens a listener on a free loopback port.
func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveWebhook serves b's webhook listener, as Run does, on a loopback port
// and returns its base URL.
func serveWebhook(t *testing.T, b *storefront.Shop) string {
	t.Helper()
	ln := listenLocal(t)
	srv := b.NewHTTPServer()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func webhookBot(h *harness, limits bot.HTTPLimits) *storefront.Shop {
	return h.newBot(func(o *storefront.Options) {
		o.WebhookURL, o.WebhookSecret, o.HTTPLimits = "https://shop.example/hook", "s3cret", limits
	})
}

func postHook(t *testing.T, url, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/hook", strings.NewReader(body))
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "s3cret")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Webhook bodies that are not one update object with a positive integer
// update_id get 400 and nothing is stored; a body over the limit gets 413.
// A real update after them is still handled (none was stored as update 0).
func TestWebhookRejectsBodiesThatAreNotUpdates(t *testing.T) {
	h := newHarness(t)
	b := webhookBot(h, bot.HTTPLimits{MaxBodyBytes: 4096})
	url := serveWebhook(t, b)
	for _, body := range []string{
		`[]`, `[{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":5001,"type":"private"},"text":"/help"}}]`,
		`"update"`, `null`, `42`, `true`, `{}`, `{"message":{"message_id":1,"date":1,"chat":{"id":5001,"type":"private"},"text":"/help"}}`,
		`{"update_id":"7"}`, `{"update_id":0}`, `{"update_id":-3}`, `{"update_id":1.5}`, `{"update_id":null}`,
		`{"update_id":1} {"update_id":2}`, `not json`, ``,
	} {
		if code := postHook(t, url, body); code != http.StatusBadRequest {
			t.Errorf("%.60s: status %d, want 400", body, code)
		}
	}
	if code := postHook(t, url, `{"update_id":9,"x":"`+strings.Repeat("a", 5000)+`"}`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: status %d, want 413", code)
	}
	if n, err := b.Queue.Pending(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d chats queued from bodies that are not updates (%v)", n, err)
	}
	h.run(b)
	u := h.fake.SendCommand(chat, "help", "")
	if code, err := h.fake.DeliverWebhook(context.Background(), url+"/hook", "s3cret", u); err != nil || code != 200 {
		t.Fatalf("a real update: %d %v", code, err)
	}
	h.wait("sendMessage", 1)
}

// rawRequest writes a request head announcing a 100-byte body, then feeds the
// body one byte every 50 ms (5 s in all) until the server stops reading. It
// returns how long the server took to answer or close, and what it said.
func slowBody(t *testing.T, addr string, secret string) (time.Duration, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST /hook HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
	if secret != "" {
		head += "X-Telegram-Bot-Api-Secret-Token: " + secret + "\r\n"
	}
	start := time.Now()
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for range 100 {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return time.Since(start), strings.TrimSpace(line)
}

// A client sending its body one byte at a time is cut at the read timeout,
// with or without the secret, instead of holding the listener until it is
// done (5 s here, 25 s in the attack).
func TestWebhookSlowBodyIsCutAtTheReadTimeout(t *testing.T) {
	h := newHarness(t)
	b := webhookBot(h, bot.HTTPLimits{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(serveWebhook(t, b), "http://")
	for _, secret := range []string{"", "s3cret"} {
		took, status := slowBody(t, addr, secret)
		if took > 2*time.Second {
			t.Errorf("secret %q: the slow body held the connection %v (answer %q)", secret, took, status)
		}
		if status != "" && !strings.Contains(status, " 4") {
			t.Errorf("secret %q: answered %q", secret, status)
		}
		if secret == "" && !strings.Contains(status, " 401 ") {
			t.Errorf("without the secret: answered %q, want 401", status)
		}
	}
	if n, _ := b.Queue.Pending(context.Background()); n != 0 {
		t.Fatalf("%d chats queued from slow bodies", n)
	}
}

// An idle keep-alive connection is closed after the idle timeout.
func TestWebhookIdleConnectionIsClosed(t *testing.T) {
	h := newHarness(t)
	b := webhookBot(h, bot.HTTPLimits{IdleTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(serveWebhook(t, b), "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: shop\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := r.ReadByte(); err == nil {
		t.Fatal("the server sent more than the answer")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the idle connection stayed open %v", took)
	}
}

func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// /metrics is served on its own listener, not the webhook's, and after a
// purchase (and a failed one, refunded) it shows the business metrics, the
// store gauges read at scrape time, and the build info.
func TestMetricsOnTheirOwnListenerAfterAPurchase(t *testing.T) {
	s := newShop(t)
	s.Sim.SetBehavior(simcatalog.DemoGameKey, resellersim.Behavior{Mode: resellersim.Fail})
	web, met := listenLocal(t), listenLocal(t)
	b := s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins = s.Client, s.Cfg, []int64{admin}
		o.WebhookURL, o.WebhookSecret = "https://shop.example/hook", "s3cret"
		o.HTTPListener, o.MetricsListener = web, met
		o.Watch = &adminside.Watch{Account: s.Client, Low: decimal.NewFromInt(1), Every: time.Hour}
	})
	good := s.Paid(giftCards(1), state.PayStars)
	bad := s.Paid(state.Quote{Line: "keys", Category: simcatalog.DemoGame, Item: simcatalog.DemoGameKey, Quantity: 1}, state.PayStars)
	s.Run(b)
	s.WaitStatus(good.ID, state.OrderDelivered)
	s.WaitStatus(bad.ID, state.OrderRefunded)

	if code, _ := scrape(t, "http://"+web.Addr().String()+"/metrics"); code != http.StatusNotFound {
		t.Fatalf("the webhook listener answers /metrics with %d", code)
	}
	if code, _ := scrape(t, "http://"+web.Addr().String()+"/healthz"); code != 200 {
		t.Fatalf("the webhook listener's /healthz: %d", code)
	}
	code, body := scrape(t, "http://"+met.Addr().String()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`shopbot_orders{state="delivered"} 1`,
		`shopbot_orders{state="refunded"} 1`,
		`shopbot_orders{state="paid"} 0`,
		`shopbot_order_transitions_total{line="giftcards",state="delivered"} 1`,
		`shopbot_order_transitions_total{line="keys",state="refunded"} 1`,
		`shopbot_refunds_total{line="keys",method="stars"} 1`,
		`shopbot_fulfilment_seconds_count 1`,
		`shopbot_reconcile_findings{kind="orphans"} 0`,
		`shopbot_reconcile_findings{kind="disputes"} 0`,
		`shopbot_reconcile_findings{kind="needs_review"} 0`,
		`shopbot_reconcile_findings{kind="charge_reviews"} 0`,
		`shopbot_intake_chats_pending `,
		`shopbot_upstream_balance_usd `,
		`shopbot_build_info{goversion="go`,
		`shopbot_store_up 1`,
		`shopbot_orders_oldest_in_progress_seconds 0`,
		`shopbot_durability_syncs_total{mode="`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Redis's memory figures come from INFO, which the embedded store does
	// not answer with them.
	redisFigures := []string{`shopbot_redis_used_memory_bytes{node="`, `shopbot_redis_maxmemory_bytes{node="`,
		`shopbot_redis_evicted_keys_total{node="`, `shopbot_redis_maxmemory_policy{node="`}
	for _, want := range redisFigures {
		if got := strings.Contains(body, want); got != statetest.Real() {
			t.Errorf("/metrics has %s: %v, on a real Redis: %v", want, got, statetest.Real())
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}
