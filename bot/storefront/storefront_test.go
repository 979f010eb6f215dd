package storefront

import (
	"io"
	"log/slog"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/bot"
	"shopbot/bot/checkout"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state/statetest"
)

// TestFeaturesHandedToTheAdapter checks what the adapter is handed: a
// feature that is off is a nil interface (not a nil pointer in one, which
// the adapter would call), and the background work follows the options.
func TestFeaturesHandedToTheAdapter(t *testing.T) {
	r := statetest.New(t)
	newShop := func(mod func(*Options)) *Shop {
		opts := Options{Options: bot.Options{Token: "1:test", APIURL: "http://127.0.0.1:1", Prefix: r.Prefix,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
		if mod != nil {
			mod(&opts)
		}
		s, err := New(opts, r.Client, flows.NewEngine(nil, locales.En))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	off := newShop(nil).features(false)
	if off.Checkout != nil || off.Referral != nil {
		t.Errorf("payments and referrals off: handed checkout %v, referral %v; want nil", off.Checkout, off.Referral)
	}
	if off.Support == nil || off.Deliveries == nil {
		t.Error("support and redeliveries are always handed over")
	}
	if len(off.Background) != 4 { // broadcasts, reconciliation, upstream watch, support relays
		t.Errorf("background without upstream or payments: %d, want 4", len(off.Background))
	}

	s := newShop(func(o *Options) {
		o.Checkout = &checkout.Options{Stars: true, Wallet: true}
		o.Referral.Percent = decimal.NewFromInt(5)
	})
	on := s.features(true)
	if on.Checkout == nil || on.Referral == nil {
		t.Errorf("payments and referrals on: handed checkout %v, referral %v", on.Checkout, on.Referral)
	}
	if len(on.Background) != 7 { // and the fulfilment worker, the chat relay, the Stars sweep
		t.Errorf("background with upstream and payments: %d, want 7", len(on.Background))
	}
}
