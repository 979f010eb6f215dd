package settings_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/state/redisstore/work"
)

const admin = bottest.Admin

// TestMarketingOffIsHonouredByBroadcasts: three buyers; one turns news
// and offers off with /settings (the screen says so, in their language),
// another turns it off and on again. The admin's preview counts two
// buyers; the broadcast reaches those two, never the one who turned it
// off, and its report counts that buyer as skipped.
func TestMarketingOffIsHonouredByBroadcasts(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) { o.Admins = []int64{admin} })
	h.Run(b)
	ctx := context.Background()
	const off, flip, on = int64(7001), int64(7002), int64(7003)
	for _, id := range []int64{off, flip, on} {
		if err := b.Users.Started(ctx, id, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	press := func(chat int64, key string) {
		t.Helper()
		m := h.WaitText(chat, locales.T(locales.En, "settings.title"))
		if _, err := h.Fake.PressButton(chat, m.MessageID, locales.T(locales.En, key)); err != nil {
			t.Fatal(err)
		}
	}
	h.Fake.SendCommand(off, "settings", "")
	if m := h.WaitText(off, locales.T(locales.En, "settings.title")); !strings.Contains(m.RawText, locales.T(locales.En, "settings.marketing", "state", locales.T(locales.En, "settings.on"))) {
		t.Fatalf("/settings of a new buyer: %q", m.RawText)
	}
	press(off, "settings.btn_marketing_off")
	h.WaitText(off, locales.T(locales.En, "settings.marketing", "state", locales.T(locales.En, "settings.off")))
	h.Fake.SendCommand(flip, "settings", "")
	press(flip, "settings.btn_marketing_off")
	h.WaitText(flip, locales.T(locales.En, "settings.marketing", "state", locales.T(locales.En, "settings.off")))
	press(flip, "settings.btn_marketing_on")
	h.WaitText(flip, locales.T(locales.En, "settings.marketing", "state", locales.T(locales.En, "settings.on")))
	h.Idle(b)
	if o, _ := b.Users.MarketingOff(ctx, off); !o {
		t.Fatal("the first buyer's choice was not kept")
	}

	h.Fake.SendCommand(admin, "broadcast", "")
	h.WaitText(admin, locales.T(locales.En, "bc.compose"))
	h.Fake.SendText(admin, "Winter sale")
	preview := h.WaitText(admin, "it reaches <b>2</b> buyers now")
	if !strings.Contains(preview.RawText, locales.T(locales.En, "bc.apart", "optout", 1, "blocked", 0)) {
		t.Fatalf("preview = %q", preview.RawText)
	}
	if _, err := h.Fake.PressButton(admin, preview.MessageID, locales.N(locales.En, "btn.bc_send", 2)); err != nil {
		t.Fatal(err)
	}
	jobs := work.NewBroadcasts(h.Rdb.Client, h.Rdb.Prefix)
	if !h.UntilWithin(30*time.Second, func() bool { j, err := jobs.Get(ctx, "1"); return err == nil && j.Status == work.BroadcastDone }) {
		t.Fatal("the broadcast never finished")
	}
	h.WaitText(admin, locales.T(locales.En, "bc.skipped_optout", "n", 1))
	for chat, want := range map[int64]bool{off: false, flip: true, on: true} {
		got := false
		for _, m := range h.Fake.MessagesIn(chat) {
			if strings.Contains(m.RawText, "Winter sale") {
				got = true
			}
		}
		if got != want {
			t.Errorf("buyer %d got the broadcast: %v, want %v", chat, got, want)
		}
	}
	h.NoViolations()
}
