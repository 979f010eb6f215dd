package support_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/bot/support"
	"shopbot/locales"
)

// TestSupportFloodFromOneBuyerIsLimitedAndFolded: one buyer sends 1,000
// support messages at once to a shop with 3 admins. The buyer is told of
// the limit once; the support.Limit messages taken reach each admin at
// once (not at the end of the fold) as one relay holding every one of them
// (nothing taken is lost) and nothing else; 3 relay records are kept, and
// nothing waits to be relayed after.
func TestSupportFloodFromOneBuyerIsLimitedAndFolded(t *testing.T) {
	h := bottest.New(t)
	admins := []int64{9001, 9002, 9003}
	b := h.NewBot(func(o *storefront.Options) {
		o.Admins = admins
		o.Support.Fold = time.Hour // never ends in the test: the limit sends the relay
	})
	h.Run(b)
	h.Command(b, supportBuyer, "support", "")
	text := func(i int) string { return fmt.Sprintf("flood #%04d", i) }
	for i := 1; i <= 1000; i++ {
		h.Fake.SendText(supportBuyer, text(i))
	}
	ctx := context.Background()
	if !h.UntilWithin(2*time.Minute, func() bool { n, err := b.Queue.Pending(ctx); return err == nil && n == 0 }) {
		t.Fatal("the buyer's updates never drained")
	}
	relays := func(admin int64) []string {
		var out []string
		for _, m := range h.Fake.MessagesIn(admin) {
			if strings.Contains(m.RawText, "Support request") {
				out = append(out, m.RawText)
			}
		}
		return out
	}
	for _, admin := range admins {
		h.WaitText(admin, text(support.Limit))
	}
	// Nothing is left to relay: no message waits and no relay is scheduled.
	if !h.Until(func() bool {
		n, err := h.Rdb.Client.Exists(ctx, h.Rdb.Prefix+"support:p:501", h.Rdb.Prefix+"support:f:501").Result()
		return err == nil && n == 0
	}) {
		t.Fatal("messages still wait for a relay")
	}
	for _, admin := range admins {
		got := relays(admin)
		if len(got) != 1 {
			t.Fatalf("admin %d got %d relays, want 1", admin, len(got))
		}
		for i := 1; i <= support.Limit; i++ {
			if !strings.Contains(got[0], text(i)) {
				t.Errorf("admin %d's relay lacks %q", admin, text(i))
			}
		}
		if strings.Contains(got[0], text(support.Limit+1)) {
			t.Errorf("admin %d's relay holds a message over the limit", admin)
		}
	}
	limited := strings.SplitN(locales.N(locales.En, "support.rate_limited", 1, "limit", support.Limit), ":", 2)[0]
	if n := len(texts(h, supportBuyer, limited)); n != 1 {
		t.Fatalf("the buyer was told of the limit %d times, want 1", n)
	}
	if n := len(texts(h, supportBuyer, en("support.sent"))); n != support.Limit {
		t.Fatalf("the buyer was told %d messages were sent, want %d", n, support.Limit)
	}
	// A relay's record is written once its message is sent: wait for it.
	var keys []string
	var err error
	if !h.Until(func() bool {
		keys, err = h.Rdb.Client.Keys(ctx, h.Rdb.Prefix+"support:m:*").Result()
		return err == nil && len(keys) >= len(admins)
	}) || len(keys) != len(admins) {
		t.Fatalf("%d relay records (%v), want %d", len(keys), err, len(admins))
	}
	h.NoViolations()
}

// texts are the bot's messages in chat that contain sub.
func texts(h *bottest.Harness, chat int64, sub string) []string {
	var out []string
	for _, m := range h.Fake.MessagesIn(chat) {
		if strings.Contains(m.RawText, sub) {
			out = append(out, m.RawText)
		}
	}
	return out
}
