package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/botapitest/types"
	"shopbot/reseller/resellersim"
)

// The shop as main wires it: the reseller client from RESELLER_BASE_URL and
// RESELLER_API_KEY, the cached catalog, the markup and the Stars rate from
// the environment, and every line registered.
func TestServeWiresTheProductLines(t *testing.T) {
	const token = "424242:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-secret"
	fake := botapitest.NewT(t, botapitest.WithToken(token))
	sim := resellersim.New(resellersim.Config{APIKey: goodKey, Seed: 1})
	up := httptest.NewServer(sim)
	defer up.Close()
	getenv := env(map[string]string{
		"TELEGRAM_TOKEN": token, "TELEGRAM_API_URL": fake.URL(), "HTTP_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0",
		"RESELLER_BASE_URL": up.URL + "/api/v1", "MARKUP_PERCENT": "20", "STARS_USD_RATE": "0.01",
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, getenv, strings.NewReader(""), &bytes.Buffer{}, &stderr) }()
	wait := func(n int) types.Message {
		t.Helper()
		wctx, wcancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer wcancel()
		if _, err := fake.WaitFor(wctx, "sendMessage", n); err != nil {
			t.Fatalf("waiting for message %d: %v\n%s", n, err, stderr.String())
		}
		m, _ := fake.LastMessage(77)
		return m
	}
	fake.SendCommand(77, "start", "premium")
	wait(1)
	fake.SendText(77, "@durov")
	m := wait(2)
	if _, err := fake.PressButton(77, m.MessageID, m.ReplyMarkup.Buttons()[0].Text); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ = fake.LastMessage(77); strings.Contains(m.Text, "Please check your order") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// 3 months cost 11.99 upstream in the simulator: +20% = 14.388 -> 14.39 USD = 1439 Stars.
	if !strings.Contains(m.Text, "Telegram Premium for 3 months") || !strings.Contains(m.Text, "1,439") {
		t.Fatalf("confirmation = %q", m.Text)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), goodKey) {
		t.Fatal("the upstream key reached the logs")
	}
}
