package webapp_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"shopbot/bot/botapitest"
	"shopbot/bot/webapp/initdata"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
)

// The Mini App in a real browser: headless Chromium (Debian's chromium,
// which .ci/run installs) driven from Go over the DevTools protocol
// (chromedp), on a phone-sized screen, against the whole shop with the fake
// Bot API. Every wait is on the page's DOM (a mutation observer in the
// page), never a sleep. Screenshots of the main screens go to
// testdata/out/ (ignored by git), or to $SCREENSHOTS_DIR. Without a
// chromium binary the tests skip, unless SHOPBOT_BROWSER_TESTS=required
// (CI) makes that a failure.

// chromium finds the browser: $CHROME_PATH, else the usual names.
func chromium() string {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is one headless Chromium tab on the app.
type browser struct {
	t      *testing.T
	ctx    context.Context
	shots  string // where screenshots go
	mu     sync.Mutex
	errors []string // the page's uncaught exceptions and console errors
	opened int      // pages opened: each open is a new load, not a fragment change
}

// light and dark are Telegram theme parameters as a client passes them.
const (
	lightTheme = `{"bg_color":"#ffffff","text_color":"#222222","hint_color":"#8e8e93","link_color":"#2481cc","button_color":"#2481cc","button_text_color":"#ffffff","secondary_bg_color":"#efeff4"}`
	darkTheme  = `{"bg_color":"#17212b","text_color":"#f5f5f5","hint_color":"#708499","link_color":"#6ab3f3","button_color":"#5288c1","button_text_color":"#ffffff","secondary_bg_color":"#232e3c"}`
)

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium()
	if path == "" {
		msg := "no chromium binary found (Debian: apt-get install chromium, as .ci/run does; or set CHROME_PATH)"
		if os.Getenv("SHOPBOT_BROWSER_TESTS") == "required" {
			t.Fatal(msg + ", and SHOPBOT_BROWSER_TESTS=required")
		}
		t.Skip(msg + ": the browser tests are skipped")
	}
	shots := os.Getenv("SCREENSHOTS_DIR")
	if shots == "" {
		shots = filepath.Join("testdata", "out")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	chrome.once.Do(func() { chrome.start(path) })
	if chrome.err != nil {
		t.Fatalf("start chromium (%s): %v", path, chrome.err)
	}
	// A tab of its own in a browser context of its own: no cookies or
	// storage from another test's tab.
	ctx, cancel := chromedp.NewContext(chrome.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	b := &browser{t: t, ctx: ctx, shots: shots}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.errors = append(b.errors, fmt.Sprintf("%s (%s:%d)", msg, d.URL, d.LineNumber+1))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				b.errors = append(b.errors, "console.error: "+strings.Join(parts, " "))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	return b
}

// chrome is the one Chromium of the package's tests: the first browser
// test starts it, each test opens a tab in it (newBrowser), and TestMain
// stops it. Starting a browser takes seconds; a tab, a fraction of one.
var chrome sharedBrowser

type sharedBrowser struct {
	once sync.Once
	ctx  context.Context // the browser's
	stop context.CancelFunc
	err  error
}

func (c *sharedBrowser) start(path string) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(390, 844),
		chromedp.Flag("disable-gpu", true),
		// Nothing leaves the machine: Telegram's script (which only runs
		// inside Telegram anyway) fails at once instead of waiting for DNS.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	c.ctx, c.stop = ctx, func() { cancel(); cancelAlloc() }
	c.err = chromedp.Do(ctx) // starts the browser
}

// TestMain stops the package's Chromium, if a test started it.
func TestMain(m *testing.M) {
	code := m.Run()
	if chrome.stop != nil {
		chrome.stop()
	}
	os.Exit(code)
}

// open loads the app as Telegram would open it: the launch parameters
// (initData, theme) in the URL's fragment.
func (b *browser) open(base, initData, theme string) {
	b.t.Helper()
	b.opened++
	u := fmt.Sprintf("%s?open=%d#tgWebAppData=%s&tgWebAppVersion=8.0&tgWebAppThemeParams=%s", base, b.opened, url.QueryEscape(initData), url.QueryEscape(theme))
	b.do(chromedp.Navigate(u))
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v\npage errors: %v\npage: %s", err, b.pageErrors(), b.screenText())
	}
}

// until waits until the JavaScript condition holds, looking again on every
// change of the page's DOM.
func (b *browser) until(cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		b.t.Fatalf("waiting for %s: %v\npage errors: %v\npage: %s", cond, err, b.pageErrors(), b.screenText())
	}
}

// visible waits for an element matching the CSS selector to be shown.
func (b *browser) visible(sel string) {
	b.t.Helper()
	b.until(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.offsetParent !== null; })()`, sel))
}

func (b *browser) click(sel string) {
	b.t.Helper()
	for try := 1; ; try++ {
		b.visible(sel)
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return
		}
		// The page drew the element again between finding and clicking
		// it (a list re-rendered by a search or the live poll): find it
		// again.
		if try < 5 && (strings.Contains(err.Error(), "Could not find node") || strings.Contains(err.Error(), "detached")) {
			continue
		}
		b.t.Fatalf("browser: click %s: %v\npage errors: %v\npage: %s", sel, err, b.pageErrors(), b.screenText())
	}
}

// typeInto replaces an input's value by typing, then leaves it (the change
// event checks the answer).
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	b.visible(sel)
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = ''; e.dispatchEvent(new Event('input')); e.focus(); })()`, sel))
	b.do(chromedp.SendKeys(chromedp.CSS(sel), text))
	b.eval(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event('change'))`, sel))
}

func (b *browser) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return b.eval(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, sel))
}

func (b *browser) screenText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
	return v
}

func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// shot saves a screenshot of the viewport as name.png and prints its path.
// A screen showing a JavaScript null, undefined or NaN as text fails.
func (b *browser) shot(name string) {
	b.t.Helper()
	if bad := b.eval(`(document.body.innerText.match(/\b(null|undefined|NaN)\b/) || [''])[0]`); bad != "" {
		b.t.Errorf("%s: the screen shows %q: %s", name, bad, b.screenText())
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	b.t.Logf("screenshot: %s", abs)
}

// noPageErrors fails on any uncaught exception or console error of the
// page but the expected failure to load Telegram's script outside Telegram.
func (b *browser) noPageErrors() {
	b.t.Helper()
	for _, e := range b.pageErrors() {
		if !strings.Contains(e, "telegram.org") {
			b.t.Errorf("page error: %s", e)
		}
	}
}

// lastLink waits for the invoice link the shop made after n earlier ones.
func (s *appShop) lastLink(n int) botapitest.InvoiceLink {
	s.T.Helper()
	var links []botapitest.InvoiceLink
	if !s.Until(func() bool { links = s.Fake.InvoiceLinks(); return len(links) > n }) {
		s.T.Fatalf("no invoice link made (have %d)", len(links))
	}
	return links[len(links)-1]
}

// A buyer opens the app, browses, refuses and fixes a field, pays in Stars
// through Telegram (the fake's PayLink), sees the order delivered, then
// buys gift cards, is refused a quantity, pays and sees the codes: the same
// codes the chat got.
func TestBrowserPurchases(t *testing.T) {
	s := newAppShop(t, nil)
	b := newBrowser(t)
	en := func(key string, kv ...any) string { return locales.T(locales.En, key, kv...) }
	b.open(s.base, s.initData(buyer, time.Now()), lightTheme)

	b.visible(`.card[data-line="games"]`)
	if got := b.text("#title"); got != en("webapp.title") {
		t.Fatalf("title %q", got)
	}
	// The theme the client passed is the page's.
	if bg := b.eval(`getComputedStyle(document.body).backgroundColor`); bg != "rgb(255, 255, 255)" {
		t.Errorf("light background %s", bg)
	}
	b.shot("1-lines")

	// An in-game top-up: a refused player id, then an accepted one.
	b.click(`.card[data-line="games"]`)
	b.click(`.card[data-category="` + simcatalog.DemoTopUpCategory + `"]`)
	b.click(`.card[data-item="` + simcatalog.DemoTopUpOffer + `"]`)
	field := `input[name="f:player_id"]`
	b.typeInto(field, "51234x")
	b.until(`document.querySelector('.error[data-field="player_id"]').textContent.length > 0`)
	if v := b.eval(`document.querySelector('` + field + `').value`); v != "51234x" {
		t.Fatalf("the refused answer was lost: %q", v)
	}
	b.shot("2-field-refused")
	b.typeInto(field, " 5123456789 ")
	b.until(`document.querySelector('.error[data-field="player_id"]').textContent === '' && document.querySelector('` + field + `').value === '5123456789'`)
	b.click("#main") // Get the price
	b.visible("#quote")
	if total := b.text("#total"); !strings.Contains(total, "⭐") || !strings.Contains(total, "$") {
		t.Fatalf("total %q", total)
	}
	b.shot("3-quote")
	links := len(s.Fake.InvoiceLinks())
	b.click("#main") // Pay
	b.visible(`#status[data-status="awaiting_payment"]`)
	link := s.lastLink(links)
	if !strings.Contains(link.Description, "5123456789") {
		t.Fatalf("the invoice does not name the player: %+v", link)
	}
	if _, err := s.Fake.PayLink(context.Background(), buyer, link.URL, botapitest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	b.visible(`#status[data-status="delivered"]`)
	b.shot("4-topup-delivered")

	// Gift cards: a quantity over the stock is refused, then the codes.
	b.click("#main") // Buy something else
	b.click(`.card[data-line="giftcards"]`)
	b.click(`.card[data-category="` + simcatalog.DemoGiftCategory + `"]`)
	b.click(`.card[data-item="` + simcatalog.DemoGiftCardLowStock + `"]`)
	b.typeInto("#quantity", "4")
	b.click("#main")
	b.until(`document.querySelector('.error[data-field="quantity"]').textContent.length > 0`)
	b.shot("5-quantity-refused")
	b.typeInto("#quantity", "2")
	b.click("#main")
	b.visible("#quote")
	links = len(s.Fake.InvoiceLinks())
	b.click("#main")
	link = s.lastLink(links)
	if _, err := s.Fake.PayLink(context.Background(), buyer, link.URL, botapitest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	b.until(`document.querySelectorAll('.code code').length === 2`)
	codes := strings.Split(b.eval(`[...document.querySelectorAll('.code code')].map(c => c.textContent).join('\n')`), "\n")
	b.shot("6-codes")
	for _, c := range codes {
		s.WaitMessage(buyer, c) // the chat has them too
	}
	b.noPageErrors()
}

// A stale or replayed initData opens nothing: the page says to reopen the
// shop from the bot, and the API has served none of the buyer's data.
func TestBrowserRefusesStaleInitData(t *testing.T) {
	s := newAppShop(t, nil)
	b := newBrowser(t)
	old := s.initData(buyer, time.Now().Add(-initdata.DefaultMaxAge-time.Minute))
	b.open(s.base, old, darkTheme)
	b.until(`(document.querySelector('.fatal') || {}).textContent === ` + fmt.Sprintf("%q", locales.T(locales.En, "webapp.auth_failed")))
	if n := b.eval(`document.querySelectorAll('.card').length`); n != "0" {
		t.Fatalf("%s cards shown with a stale initData", n)
	}
	b.shot("7-stale-initdata")
	// Another bot's initData for the same user, fresh.
	b.open(s.base, initdata.SignUser("111:another-bot", initdata.User{ID: buyer, FirstName: "X"}, time.Now()), darkTheme)
	b.until(`!!document.querySelector('.fatal')`)
	b.noPageErrors()
}

// The dark theme and the Russian texts, on the phone-sized screen.
func TestBrowserDarkThemeAndLanguage(t *testing.T) {
	s := newAppShop(t, nil)
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), darkTheme)
	b.visible(`.card[data-line="giftcards"]`)
	if bg := b.eval(`getComputedStyle(document.body).backgroundColor`); bg != "rgb(23, 33, 43)" {
		t.Errorf("dark background %s", bg)
	}
	b.eval(`(() => { const l = document.querySelector('#lang'); l.value = 'ru'; l.dispatchEvent(new Event('change')); })()`)
	b.until(fmt.Sprintf(`document.querySelector('#title').textContent === %q`, locales.T(locales.Ru, "webapp.title")))
	b.click(`.card[data-line="keys"]`)
	b.visible(`.card[data-category="` + simcatalog.DemoGame + `"]`)
	b.shot("8-dark-ru-keys")
	if w := b.eval(`document.documentElement.scrollWidth <= window.innerWidth`); w != "true" {
		t.Errorf("the page is wider than the phone's screen")
	}
	// A link to a category (startapp=gc-<id>) opens it; Back goes to its line.
	link := initdata.Sign(s.Fake.Token(), map[string]string{
		"user": `{"id":5001,"first_name":"Buyer","language_code":"en"}`, "auth_date": strconv.FormatInt(time.Now().Unix(), 10),
		"start_param": "gc-" + simcatalog.DemoGiftCategory,
	})
	b.open(s.base, link, darkTheme)
	b.visible(`.card[data-item="` + simcatalog.DemoGiftCard + `"]`)
	b.click("#back")
	b.visible(`.card[data-category="` + simcatalog.DemoGiftCategory + `"]`)
	b.noPageErrors()
}

// The wallet in the browser: topped up in Stars through an invoice link,
// then gift cards paid from it (the codes on screen, with copy buttons,
// and in the chat), Stars for a recipient refused and then accepted, and
// both orders in My orders.
func TestBrowserWalletAndMyOrders(t *testing.T) {
	s := newAppShopWith(t, nil, withWallet)
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), lightTheme)

	b.click("#to-wallet")
	b.until(`(document.querySelector('#balance') || {}).textContent === '$0.00'`)
	links := len(s.Fake.InvoiceLinks())
	b.typeInto("#topup-usd", "50")
	b.click("#topup-go")
	b.visible(`#status[data-status="awaiting_payment"]`)
	link := s.lastLink(links)
	if _, err := s.Fake.PayLink(context.Background(), buyer, link.URL, botapitest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	b.until(`(document.querySelector('#balance') || {}).textContent === '$50.00'`)
	b.shot("9-wallet-topped-up")

	// Gift cards from the wallet: the codes at once.
	b.click("#back")
	b.click(`.card[data-line="giftcards"]`)
	b.click(`.card[data-category="` + simcatalog.DemoGiftCategory + `"]`)
	b.click(`.card[data-item="` + simcatalog.DemoGiftCard + `"]`)
	b.click("#main")
	b.visible("#quote")
	b.click("#pay-wallet")
	b.until(`document.querySelectorAll('.code code').length === 1 && document.querySelectorAll('.code button').length === 1`)
	code := b.text(".code code")
	s.WaitMessage(buyer, code)
	b.shot("10-wallet-codes")

	// Stars: a refused recipient, then an accepted one, paid from the wallet.
	b.click("#main") // Buy something else
	b.click(`.card[data-line="stars"]`)
	b.click(`.card[data-item="100"]`)
	field := `input[name="f:username"]`
	b.typeInto(field, "du__rov")
	b.until(`document.querySelector('.error[data-field="username"]').textContent.length > 0`)
	b.shot("11-stars-recipient-refused")
	b.typeInto(field, "@durov")
	b.until(`document.querySelector('.error[data-field="username"]').textContent === '' && document.querySelector('` + field + `').value === 'durov'`)
	b.click("#main")
	b.visible("#quote")
	b.click("#pay-wallet")
	b.visible(`#status[data-status="delivered"]`)

	// My orders: both, newest first; one opens with its codes.
	b.click("#main")
	b.click("#to-orders")
	b.until(`document.querySelectorAll('#orders .card').length === 2`)
	b.shot("12-my-orders")
	b.click(`#orders .card:last-child`)
	b.until(fmt.Sprintf(`(document.querySelector('.code code') || {}).textContent === %q`, code))
	b.noPageErrors()
}

// The search across the lines: a product found in game keys opens on its
// page, with its items.
func TestBrowserSearch(t *testing.T) {
	s := newAppShop(t, nil)
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), darkTheme)
	b.typeInto("#search-all", "elden")
	b.eval(`document.querySelector('#search-all').form.requestSubmit()`)
	sel := `.card[data-found="keys:` + simcatalog.DemoGame + `"]`
	b.visible(sel)
	b.shot("13-search")
	b.click(sel)
	b.visible(`.card[data-item="` + simcatalog.DemoGameKey + `"]`)
	b.noPageErrors()
}
