package webapp_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/bottest"
	"shopbot/bot/referral"
	"shopbot/bot/support"
	"shopbot/bot/webapp/initdata"
	"shopbot/locales"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// More of the Mini App in the browser: every product line bought at least
// once across the browser tests (this file and browser_test.go: in-game
// top-ups, gift cards and Stars there; game keys, Premium, store top-ups,
// store gifts and services here), a promo code refused then applied, a
// wallet payment, support and the terms, the referral page's Share inside
// Telegram, and a category of 150 cards measured.

// en is a text of the page in English (plain text, as the page shows it).
func en(key string, kv ...any) string { return plainText(locales.T(locales.En, key, kv...)) }

// choose opens line from the first screen, its category (none for a line
// of one category) and its item.
func (b *browser) choose(line, category, item string) {
	b.t.Helper()
	b.click(`.card[data-line="` + line + `"]`)
	if category != "" {
		b.click(`.card[data-category="` + category + `"]`)
	}
	b.click(`.card[data-item="` + item + `"]`)
}

// fill answers field with value and waits for the shop's check to take it
// as want.
func (b *browser) fill(field, value, want string) {
	b.t.Helper()
	sel := `[name="f:` + field + `"]`
	b.typeInto(sel, value)
	b.until(fmt.Sprintf(`(document.querySelector('.error[data-field=%q]') || {}).textContent === '' && (document.querySelector(%q) || {}).value === %q`, field, sel, want))
}

// fitsPhone fails when the screen is wider than the phone's.
func (b *browser) fitsPhone(screen string) {
	b.t.Helper()
	if w := b.eval(`document.documentElement.scrollWidth <= window.innerWidth`); w != "true" {
		b.t.Errorf("%s: the page is wider than the phone's screen", screen)
	}
}

// payStars presses Pay on the quote shown and pays its invoice link as the
// buyer in Telegram (the fake's PayLink); it returns the quote's id.
func (s *appShop) payStars(b *browser) string {
	s.T.Helper()
	b.visible("#quote")
	quote := b.eval(`document.querySelector('#quote').dataset.quote`)
	links := len(s.Fake.InvoiceLinks())
	b.click("#main")
	b.visible(`#status[data-status="awaiting_payment"]`)
	link := s.lastLink(links)
	if _, err := s.Fake.PayLink(context.Background(), buyer, link.URL, botapitest.PayOptions{}); err != nil {
		s.T.Fatal(err)
	}
	return quote
}

// fundWallet tops the buyer's wallet up by usd through the app's API and
// Telegram's payment.
func (s *appShop) fundWallet(usd string) {
	s.T.Helper()
	data := s.initData(buyer, time.Now())
	link := s.call("POST", "wallet/topup", data, map[string]any{"usd": usd}).ok(s.T).str("link")
	if _, err := s.Fake.PayLink(context.Background(), buyer, link, botapitest.PayOptions{}); err != nil {
		s.T.Fatal(err)
	}
	want := decimal.RequireFromString(usd).StringFixed(2)
	if !s.Until(func() bool { return s.call("GET", "wallet", data, nil).str("balance") == want }) {
		s.T.Fatal("the top-up was never credited")
	}
}

// A game key with a promo code: an unknown code is refused with the chat's
// words beside the box (the code typed and the total stay), a good one
// makes a new quote at the lower price with the price before it; paid in
// Stars, the key is on the page and in the chat.
func TestBrowserPromoCodeAndGameKey(t *testing.T) {
	s := newAppShop(t, nil)
	if err := s.b.Promos.Add(context.Background(), &state.Promo{Code: "TEN", Percent: decimal.NewFromInt(10), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), lightTheme)
	b.choose("keys", simcatalog.DemoGame, simcatalog.DemoGameKey)
	b.visible(".hero img.thumb") // the game's image, through the shop
	b.click("#main")
	b.visible("#quote")
	total := b.text("#total")

	b.typeInto("#promo", "NOPE")
	b.click("#promo-go")
	b.until(fmt.Sprintf(`(document.querySelector('.error[data-field="promo"]') || {}).textContent === %q`, en("promo.unknown", "code", "NOPE")))
	if v, tt := b.eval(`document.querySelector('#promo').value`), b.text("#total"); v != "NOPE" || tt != total {
		t.Fatalf("after a refused code: the box holds %q, the total %q (was %q)", v, tt, total)
	}
	b.shot("14-promo-refused")
	b.fitsPhone("the quote")

	b.typeInto("#promo", "ten")
	b.click("#promo-go")
	b.until(fmt.Sprintf(`!!document.querySelector('#total') && document.querySelector('#total').textContent !== %q && document.body.innerText.includes(%q)`, total, en("webapp.promo_applied", "code", "TEN")))
	b.shot("15-promo-applied")
	q := s.payStars(b)
	b.until(`document.querySelectorAll('.code code').length === 1`)
	key := b.text(".code code")
	s.WaitMessage(buyer, key)
	o, err := s.Orders.ByQuote(context.Background(), q)
	if err != nil || o.PromoCode != "TEN" || o.Line != "keys" {
		t.Fatalf("the order: %+v, %v", o, err)
	}
	b.shot("16-key-delivered")
	b.noPageErrors()
}

// Premium paid in Stars, a store top-up paid from the wallet (its login
// refused, then taken), a store gift paid in Stars: each delivered, in the
// dark theme.
func TestBrowserPremiumStoreTopUpAndGift(t *testing.T) {
	s := newAppShopWith(t, nil, withWallet)
	s.fundWallet("50")
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), darkTheme)

	// Premium: three months for @durov, paid in Stars.
	b.choose("premium", "", "3")
	b.fill("username", "@durov", "durov")
	b.click("#main")
	b.visible("#quote")
	b.shot("17-premium-quote")
	s.payStars(b)
	b.visible(`#status[data-status="delivered"]`)

	// A store top-up: a login the store refuses, then one it takes, paid
	// from the wallet.
	b.click("#main") // Buy something else
	b.choose("topup", "", "USD")
	b.fill("amount", "12,50", "12.50")
	b.typeInto(`[name="f:store_login"]`, "some_INVALID_user")
	b.click("#main")
	b.until(`((document.querySelector('.error[data-field="store_login"]') || {}).textContent || '').length > 0`)
	if v := b.eval(`document.querySelector('[name="f:store_login"]').value`); v != "some_INVALID_user" {
		t.Fatalf("the refused login was lost: %q", v)
	}
	b.shot("18-topup-login-refused")
	b.fill("store_login", "gaben", "gaben")
	b.click("#main")
	b.visible("#pay-wallet")
	b.click("#pay-wallet")
	b.visible(`#status[data-status="delivered"]`)
	b.shot("19-topup-from-wallet")

	// A store gift: a game found by its name, an edition, the invite link.
	b.click("#main")
	b.click(`.card[data-line="gifts"]`)
	app := strconv.Itoa(simcatalog.DemoStoreApp)
	b.click(`.card[data-category="` + app + `"]`)
	b.click(`#items .card:not(:disabled)`)
	b.fill("invite_url", "https://s.team/p/abcd-efgh/XYZ", "https://s.team/p/abcd-efgh/XYZ")
	b.click("#main")
	s.payStars(b)
	b.visible(`#status[data-status="delivered"]`)
	b.shot("20-gift-delivered")
	b.fitsPhone("an order")

	list, err := s.Orders.ListByUser(context.Background(), buyer, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range list {
		if o.Status != state.OrderDelivered {
			t.Errorf("order %d (%s): %s", o.ID, o.Line, o.Status)
		}
		got[o.Line] = o.PayMethod
	}
	if len(got) != 3 || got["premium"] != state.PayStars || got["topup"] != state.PayWallet || got["gifts"] != state.PayStars {
		t.Fatalf("the buyer's orders by line and payment: %v", got)
	}
	b.noPageErrors()
}

// A manual service followed live: paid, "being processed" while the
// upstream's operator works, then delivered on the page without a reload
// once the operator completes it. Help with this order opens support with
// the order's number typed.
func TestBrowserServiceFollowedLive(t *testing.T) {
	s := newAppShop(t, nil)
	s.Sim.SetBehavior(simcatalog.DemoManualOfferNoChat, resellersim.Behavior{Mode: resellersim.Stay}) // until its operator completes it
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), lightTheme)
	b.choose("services", simcatalog.DemoManualServiceNoChat, simcatalog.DemoManualOfferNoChat)
	trade := "https://steamcommunity.com/tradeoffer/new/?partner=1&token=abc"
	b.fill("trade_url", trade, trade)
	b.click("#main")
	q := s.payStars(b)
	b.visible(`#status[data-status="placed"]`)
	b.shot("21-service-processing")
	var o *state.Order
	if !s.Until(func() bool {
		var err error
		o, err = s.Orders.ByQuote(context.Background(), q)
		return err == nil && o.UpstreamNumber != 0
	}) {
		t.Fatal("the service was never placed upstream")
	}
	if err := s.Sim.CompleteOrder(int(o.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	b.visible(`#status[data-status="delivered"]`)
	b.shot("22-service-delivered")
	b.click("#order-help")
	want := en("webapp.order_help_text", "order", o.ID) + " "
	b.until(fmt.Sprintf(`(document.querySelector('#support-text') || {}).value === %q`, want))
	b.noPageErrors()
}

// Support and the terms in the browser, in the dark theme: the terms are
// the chat's; a message reaches the staff, whose answer shows on the page;
// over the chat's limit the reason is beside the box and what was typed
// stays.
func TestBrowserSupportAndTerms(t *testing.T) {
	s := newAppShopWith(t, nil, withQuickSupport)
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), darkTheme)
	b.click("#to-terms")
	b.until(fmt.Sprintf(`(document.querySelector('#terms .terms') || {}).textContent === %q`, en("terms.text")))
	b.shot("23-terms")
	b.fitsPhone("the terms")
	b.click("#terms-support")
	b.typeInto("#support-text", "My key does not work")
	b.click("#support-send")
	b.until(fmt.Sprintf(`(document.querySelector('#support-status') || {}).textContent === %q`, en("support.sent")))
	relayed := s.WaitText(bottest.Admin, "My key does not work")
	s.Press(s.b, bottest.Admin, relayed, locales.T(locales.En, "btn.support_reply"))
	s.SayIn(s.b, bottest.Admin, "Send us a screenshot, please.")
	s.WaitText(buyer, "Send us a screenshot, please.")
	b.click("#back")
	b.click("#terms-support")
	b.until(`document.querySelector('#thread .msg[data-staff="true"]') && document.querySelector('#thread .msg[data-staff="true"]').textContent.includes('Send us a screenshot, please.')`)
	b.shot("24-support-answered")

	// The chat's limit, reached from the chat and the app alike.
	data := s.initData(buyer, time.Now())
	for i := 1; i < support.Limit; i++ {
		s.call("POST", "support", data, map[string]any{"text": "again " + strings.Repeat("?", i)}).ok(t)
	}
	b.typeInto("#support-text", "Are you there?")
	b.click("#support-send")
	b.until(`((document.querySelector('.error[data-field="text"]') || {}).textContent || '').length > 0`)
	if v := b.eval(`document.querySelector('#support-text').value`); v != "Are you there?" {
		t.Fatalf("the refused message was lost: %q", v)
	}
	b.shot("25-support-limited")
	b.noPageErrors()
}

// fakeTelegram is a stand-in for Telegram's WebApp object (the page's
// script from telegram.org does not load in the tests), of the client
// version given: it records what the page asks of Telegram in window.__tg,
// and counts it on the root element (a change of the DOM, which the
// tests' waits look again on). Version 8.0 has shareMessage; older ones do
// not.
func fakeTelegram(initData, version string) string {
	share := ""
	if version >= "8.0" {
		share = `shareMessage(id, cb) { window.__tgCall('shareMessage', id); },`
	}
	return fmt.Sprintf(`window.__tg = [];
window.__tgCall = (...c) => { window.__tg.push(c); document.documentElement.setAttribute('data-tg-calls', String(window.__tg.length)); };
window.Telegram = { WebApp: {
  initData: %q, initDataUnsafe: {}, platform: 'android', version: %q, themeParams: {}, colorScheme: 'light',
  isVersionAtLeast(v) { return parseFloat(this.version) >= parseFloat(v); },
  ready() {}, expand() {},
  BackButton: { show() {}, hide() {}, onClick() {} },
  MainButton: { setText(t) { this.text = t; }, onClick() {}, offClick() {}, enable() {}, show() {}, hide() {}, showProgress() {}, hideProgress() {} },
  %s
  openTelegramLink(u) { window.__tgCall('openTelegramLink', u); },
  openLink(u) { window.__tgCall('openLink', u); },
  openInvoice(u) { window.__tgCall('openInvoice', u); },
} };`, initData, version, share)
}

// openInTelegram loads the app in a new tab of b as a Telegram client of
// version opens it.
func (b *browser) openInTelegram(base, initData, version string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeTelegram(initData, version)}); err != nil {
		b.t.Fatal(err)
	}
	b.opened++
	b.do(chromedp.Navigate(fmt.Sprintf("%s?open=%d", base, b.opened)))
}

// The referral page's Share: inside a Telegram client with shareMessage
// (8.0) it sends the shop's invite card, prepared for the buyer with their
// link (savePreparedInlineMessage); in an older client it opens
// Telegram's share link; in a browser it is that link. With referrals off
// the page has no referral button.
func TestBrowserReferralShare(t *testing.T) {
	s := newAppShopWith(t, nil, withReferrals)
	data := s.initData(buyer, time.Now())
	b := newBrowser(t)
	b.openInTelegram(s.base, data, "8.0")
	b.click("#to-invite")
	b.visible("#share")
	link := b.text("#ref-link")
	if !strings.Contains(link, "?start="+referral.StartPrefix) {
		t.Fatalf("the link %q", link)
	}
	b.shot("26-referral")
	b.fitsPhone("the referral page")
	b.click("#share")
	b.until(`window.__tg.some((c) => c[0] === 'shareMessage')`)
	id := b.eval(`window.__tg.find((c) => c[0] === 'shareMessage')[1]`)
	p, ok := s.Fake.PreparedMessage(id)
	if !ok || p.UserID != buyer || !strings.Contains(mustJSON(t, p.Result), link) {
		t.Fatalf("shared %q: %+v %v", id, p, ok)
	}

	shareURL := referral.ShareURL(link, en("ref.share_text"))
	old := newBrowser(t)
	old.openInTelegram(s.base, data, "7.10")
	old.click("#to-invite")
	old.click("#share")
	old.until(fmt.Sprintf(`window.__tg.some((c) => c[0] === 'openTelegramLink' && c[1] === %q)`, shareURL))

	web := newBrowser(t)
	web.open(s.base, data, lightTheme)
	web.click("#to-invite")
	web.visible("#share")
	if href := web.eval(`document.querySelector('#share').href`); href != shareURL {
		t.Fatalf("the share link in a browser: %q, want %q", href, shareURL)
	}
	for _, x := range []*browser{b, old, web} {
		x.noPageErrors()
	}

	off := newAppShop(t, nil)
	nob := newBrowser(t)
	nob.open(off.base, off.initData(buyer, time.Now()), lightTheme)
	nob.visible("#to-support")
	if n := nob.eval(`document.querySelectorAll('#to-invite').length`); n != "0" {
		t.Fatal("a referral button while referrals are off")
	}
}

// A tampered initData (the user id swapped for another's) opens nothing.
func TestBrowserRefusesTamperedInitData(t *testing.T) {
	s := newAppShop(t, nil)
	b := newBrowser(t)
	data := s.initData(buyer, time.Now())
	swapped := strings.Replace(data, "%22id%22%3A"+strconv.FormatInt(buyer, 10), "%22id%22%3A"+strconv.FormatInt(buyer+1, 10), 1)
	if swapped == data {
		t.Fatalf("no user id to swap in %s", data)
	}
	b.open(s.base, swapped, lightTheme)
	b.until(`(document.querySelector('.fatal') || {}).textContent === ` + fmt.Sprintf("%q", en("webapp.auth_failed")))
	if n := b.eval(`document.querySelectorAll('.card').length`); n != "0" {
		t.Fatalf("%s cards shown with a tampered initData", n)
	}
	b.noPageErrors()
}

// A start link to the app's pages opens them (startapp=support, terms); one
// to nothing the app knows shows its first screen.
func TestBrowserStartLinks(t *testing.T) {
	s := newAppShop(t, nil)
	b := newBrowser(t)
	start := func(param string) string {
		return initdata.Sign(s.Fake.Token(), map[string]string{
			"user":      fmt.Sprintf(`{"id":%d,"first_name":"Buyer","language_code":"en"}`, buyer),
			"auth_date": strconv.FormatInt(time.Now().Unix(), 10), "start_param": param,
		})
	}
	b.open(s.base, start("support"), lightTheme)
	b.visible("#support-text")
	b.open(s.base, start("terms"), lightTheme)
	b.visible("#terms .terms")
	b.open(s.base, start("no-such-thing"), lightTheme)
	b.visible(`.card[data-line="giftcards"]`)
	b.noPageErrors()
}
