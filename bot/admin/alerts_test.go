package admin_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	adminside "shopbot/bot/admin" // its const admin is the admin's chat
	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
)

func simReseller(t *testing.T, key string) (*reseller.Client, *resellersim.Sim) {
	sim := resellersim.New(resellersim.Config{APIKey: "k"})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, err := reseller.New(srv.URL+"/api/v1", key, reseller.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	return c, sim
}

// alertsTo counts the messages to chatID that contain part.
func alertsTo(h *bottest.Harness, chatID int64, part string) int {
	n := 0
	for _, m := range h.Fake.MessagesIn(chatID) {
		if strings.Contains(m.RawText, part) {
			n++
		}
	}
	return n
}

// Each alert is sent once per occurrence, not on every poll; the low
// balance alerts again only after it recovered and dropped again.
func TestAlertDeduplication(t *testing.T) {
	h := bottest.New(t)
	client, sim := simReseller(t, "k")
	watch := &adminside.Watch{Account: client, Low: decimal.RequireFromString("50"), Every: time.Hour}
	b := h.NewBot(func(o *storefront.Options) { o.Admins, o.Watch = []int64{admin, admin + 1}, watch })
	bottest.FakePace(b.API) // several alerts to one admin: paced on a fake clock
	ctx := context.Background()
	low := "Low upstream balance"

	sim.SetBalance(decimal.RequireFromString("12.5"))
	for range 3 {
		b.Alerts.CheckUpstream(ctx)
	}
	if n := alertsTo(h, admin, low); n != 1 || alertsTo(h, admin+1, low) != 1 {
		t.Fatalf("low balance alerted %d times", n)
	}
	if !strings.Contains(h.Fake.MessagesIn(admin)[0].RawText, "$12.50") {
		t.Fatalf("alert text: %q", h.Fake.MessagesIn(admin)[0].RawText)
	}
	sim.SetBalance(decimal.RequireFromString("500"))
	b.Alerts.CheckUpstream(ctx)
	b.Alerts.CheckUpstream(ctx)
	if n := alertsTo(h, admin, "back to"); n != 1 {
		t.Fatalf("recovery noted %d times", n)
	}
	sim.SetBalance(decimal.RequireFromString("10"))
	b.Alerts.CheckUpstream(ctx)
	b.Alerts.CheckUpstream(ctx)
	if n := alertsTo(h, admin, low); n != 2 {
		t.Fatalf("after recovering and dropping again: %d low-balance alerts, want 2", n)
	}

	sim.SetAccountStatus(resellersim.StatusBlocked)
	b.Alerts.CheckUpstream(ctx)
	b.Alerts.CheckUpstream(ctx)
	if n := alertsTo(h, admin, "blocked"); n != 1 {
		t.Fatalf("blocked account alerted %d times", n)
	}
	// Two processes polling the same condition still alert once.
	other := h.NewBot(func(o *storefront.Options) { o.Admins, o.Watch = []int64{admin}, watch })
	other.Alerts.CheckUpstream(ctx)
	if n := alertsTo(h, admin, "blocked"); n != 1 {
		t.Fatalf("a second process alerted again: %d", n)
	}
}

func TestAlertWhenUpstreamKeyRejected(t *testing.T) {
	h := bottest.New(t)
	client, _ := simReseller(t, "wrong-key")
	b := h.NewBot(func(o *storefront.Options) {
		o.Admins, o.Watch = []int64{admin}, &adminside.Watch{Account: client, Low: decimal.RequireFromString("50"), Every: time.Hour}
	})
	b.Alerts.CheckUpstream(context.Background())
	b.Alerts.CheckUpstream(context.Background())
	want := locales.T(locales.En, "alert.key_rejected")
	if m := h.Fake.MessagesIn(admin); len(m) != 1 || m[0].RawText != want {
		t.Fatalf("admin got %+v", m)
	}
}
