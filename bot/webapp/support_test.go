package webapp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/bottest"
	"shopbot/bot/referral"
	"shopbot/bot/storefront"
	"shopbot/bot/support"
	"shopbot/locales"
)

// withReferrals turns the wallet and the referral program on (10%).
func withReferrals(o *storefront.Options) {
	o.Checkout.Wallet = true
	o.Referral = referral.Options{Percent: decimal.NewFromInt(10)}
}

// withQuickSupport relays a buyer's messages to the staff at once.
func withQuickSupport(o *storefront.Options) {
	o.Support.Fold, o.Support.Tick = 20*time.Millisecond, 10*time.Millisecond
}

// The referral page is the chat's /referrals: the buyer's invite link and
// figures, and a Share that prepares the inline mode's invite card for the
// buyer (savePreparedInlineMessage) with that link, or Telegram's share
// link. Off, the app offers none of it.
func TestReferralPageAndShare(t *testing.T) {
	s := newAppShopWith(t, nil, withReferrals)
	data := s.initData(buyer, time.Now())
	if a := s.call("GET", "session", data, nil).ok(t); a.at("referrals") != true {
		t.Fatalf("session: %s", a.raw)
	}
	a := s.call("GET", "referral", data, nil).ok(t)
	link := a.str("link")
	if !strings.HasPrefix(link, "https://t.me/"+s.Fake.Bot().Username+"?start="+referral.StartPrefix) ||
		a.str("share_url") != referral.ShareURL(link, plainText(locales.T(locales.En, "ref.share_text"))) ||
		!strings.Contains(a.str("how"), "10%") || a.str("buyers") != plainText(locales.N(locales.En, "ref.buyers", 0)) {
		t.Fatalf("referral page: %s", a.raw)
	}
	id := s.call("POST", "referral/share", data, nil).ok(t).str("id")
	p, ok := s.Fake.PreparedMessage(id)
	if !ok || p.UserID != buyer || p.Result["type"] != "article" || !strings.Contains(mustJSON(t, p.Result), link) {
		t.Fatalf("prepared %q: %+v, %v", id, p, ok)
	}
	// Another buyer's share carries their own link.
	other := s.call("GET", "referral", s.initData(buyer+1, time.Now()), nil).ok(t)
	if other.str("link") == link {
		t.Fatalf("two buyers, one link: %s", link)
	}

	off := newAppShop(t, nil)
	data = off.initData(buyer, time.Now())
	if a := off.call("GET", "session", data, nil).ok(t); a.at("referrals") != false {
		t.Fatalf("session with referrals off: %s", a.raw)
	}
	for _, r := range []struct{ method, path string }{{"GET", "referral"}, {"POST", "referral/share"}} {
		if a := off.call(r.method, r.path, data, nil); a.status != http.StatusNotFound || a.str("error", "code") != "referrals_off" {
			t.Fatalf("%s %s with referrals off: %d %s", r.method, r.path, a.status, a.raw)
		}
	}
}

// Support from the app is the chat's: the terms are /terms' (TERMS_TEXT
// here, with its full terms' link); a message opens the buyer's ticket and
// reaches the staff with the buyer's link, relayed as one from the chat; the
// staff's answer comes to the chat and shows on the page; an empty message
// is refused with the chat's words; the chat's limit of Limit messages a
// Window counts the app's too (429 with Retry-After); the buyer closes the
// ticket and the staff hear of it.
func TestSupportAndTermsFromTheApp(t *testing.T) {
	s := newAppShopWith(t, nil, withQuickSupport, func(o *storefront.Options) {
		o.Support.TermsText, o.Support.TermsURL = "Codes are final.\nBe nice.", "https://shop.example/terms"
		o.Support.URL = "https://help.example"
	})
	data := s.initData(buyer, time.Now())
	en := func(key string, kv ...any) string { return plainText(locales.T(locales.En, key, kv...)) }
	a := s.call("GET", "terms", data, nil).ok(t)
	if a.str("text") != en("terms.title")+"\n\nCodes are final.\nBe nice." || a.str("url") != "https://shop.example/terms" {
		t.Fatalf("terms: %s", a.raw)
	}
	a = s.call("GET", "support", data, nil).ok(t)
	if a.at("open") != false || a.str("helpdesk") != "https://help.example" {
		t.Fatalf("support page: %s", a.raw)
	}
	if a := s.call("POST", "support", data, map[string]any{"text": "  "}); a.status != http.StatusUnprocessableEntity || a.str("error", "field") != "text" || a.str("error", "message") != en("support.text_or_photo") {
		t.Fatalf("an empty message: %d %s", a.status, a.raw)
	}
	a = s.call("POST", "support", data, map[string]any{"text": "Where is order #7?"}).ok(t)
	if a.at("open") != true || a.str("sent") != en("support.sent") || !strings.Contains(a.raw, "Where is order #7?") {
		t.Fatalf("sent: %s", a.raw)
	}
	relayed := s.WaitText(bottest.Admin, "Where is order #7?")
	if !strings.Contains(relayed.RawText, "tg://user?id=") {
		t.Fatalf("relayed: %q", relayed.RawText)
	}
	s.Press(s.b, bottest.Admin, relayed, locales.T(locales.En, "btn.support_reply"))
	s.SayIn(s.b, bottest.Admin, "It is on its way.")
	s.WaitText(buyer, "It is on its way.")
	a = s.call("GET", "support", data, nil).ok(t)
	thread := a.at("thread").([]any)
	if len(thread) != 2 || thread[1].(map[string]any)["staff"] != true || thread[1].(map[string]any)["text"] != "It is on its way." ||
		strings.Contains(a.raw, "from") || strings.Contains(a.raw, `"via"`) {
		t.Fatalf("the thread: %s", a.raw)
	}

	// The chat's limit: the app's messages count with the chat's.
	for i := 1; i < support.Limit; i++ {
		s.call("POST", "support", data, map[string]any{"text": "more " + strings.Repeat("!", i)}).ok(t)
	}
	a = s.call("POST", "support", data, map[string]any{"text": "one too many"})
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" || a.str("error", "field") != "text" || !strings.Contains(a.str("error", "message"), "10") {
		t.Fatalf("over the limit: %d %v %s", a.status, a.header, a.raw)
	}

	a = s.call("POST", "support/close", data, nil).ok(t)
	if a.at("open") != false {
		t.Fatalf("closed: %s", a.raw)
	}
	s.WaitText(bottest.Admin, "closed their support request")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
