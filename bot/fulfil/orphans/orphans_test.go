package orphans_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shopbot/bot/fulfil/orphans"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

type alerts struct {
	mu   sync.Mutex
	keys []string
}

func (a *alerts) Raise(_ context.Context, key, _ string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keys = append(a.keys, key)
	return true, nil
}

func (a *alerts) Clear(context.Context, string) (bool, error) { return false, nil }

func (a *alerts) Mark(ctx context.Context, key string) (bool, error) { return a.Raise(ctx, key, "") }

func (a *alerts) Tell(context.Context, string) {}

// An upstream order nobody claims is reported once, only after it stayed
// unclaimed for After; what the upstream held before the first scan is
// history the shop never owned; AllClaimed answers for the charges the
// sweep weighs.
func TestUnclaimedUpstreamOrderIsReportedOnceAfterItsTime(t *testing.T) {
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	up, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	r := statetest.New(t)
	ctx := context.Background()
	now := time.Now()
	al := &alerts{}
	s := &orphans.Scan{
		Orders: records.NewOrders(r.Client, r.Prefix), Up: up, Alerts: al, Lang: locales.En,
		Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, After: 10 * time.Minute,
	}
	buy := func() *reseller.Order {
		t.Helper()
		o, err := up.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	before := buy() // before the shop's first scan: not the shop's
	if _, known, _ := s.AllClaimed(ctx, now); known {
		t.Fatal("AllClaimed known before any scan")
	}
	if err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if all, known, err := s.AllClaimed(ctx, now); err != nil || !known || !all {
		t.Fatalf("after the first scan: all %v known %v err %v", all, known, err)
	}
	orphan := buy()
	if err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	// A charge paid a minute before the unclaimed order showed up: that
	// order may be its purchase. One paid after it was first seen: not.
	if all, known, _ := s.AllClaimed(ctx, now.Add(-time.Minute)); all || !known {
		t.Fatalf("an unclaimed order after the charge: all %v known %v", all, known)
	}
	if all, known, _ := s.AllClaimed(ctx, now.Add(time.Minute)); !all || !known {
		t.Fatalf("an unclaimed order older than the charge: all %v known %v", all, known)
	}
	if len(al.keys) != 0 {
		t.Fatalf("reported before its time: %v", al.keys)
	}
	now = now.Add(11 * time.Minute)
	for range 2 {
		if err := s.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(al.keys) != 1 || !strings.HasSuffix(al.keys[0], ":"+itoa(orphan.Number)) {
		t.Fatalf("alerts %v, want one for upstream %d", al.keys, orphan.Number)
	}
	if ok, _ := s.Orders.IsOrphan(ctx, before.Number); ok {
		t.Fatalf("the order from before the first scan (%d) was reported", before.Number)
	}
	if all, known, _ := s.AllClaimed(ctx, now); !all || !known {
		t.Fatalf("after the report: all %v known %v", all, known)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
