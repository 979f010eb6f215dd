package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"io"

	"shopbot/bot/botapitest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
	"shopbot/state/redisstore/work"
)

// The console in a real browser: headless Chromium driven over the
// DevTools protocol (chromedp), as the Mini App's browser tests drive it
// (bot/webapp/browser_test.go: the same helpers, the same gating by
// SHOPBOT_BROWSER_TESTS, screenshots in testdata/out/ or $SCREENSHOTS_DIR),
// one test per role. Every wait is on the page's DOM, never a sleep.

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
	t.Cleanup(func() { cancel(); cancelAlloc() })
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
func (b *browser) shot(name string) {
	b.t.Helper()
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

// openConsole opens the console as user with theme and waits until it
// has its session.
func (s *consoleShop) openConsole(b *browser, user int64, theme string) {
	b.t.Helper()
	b.open(s.base, s.initData(user), theme)
	b.until(`document.body.dataset.ready === 'yes'`)
}

// status makes an API request from the page as its user (the page's own
// initData) and returns its status: what a hand-made request gets.
func (b *browser) status(method, path, body string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	js := fmt.Sprintf(`(async () => {
		const data = new URLSearchParams(location.hash.slice(1)).get('tgWebAppData');
		const r = await fetch('api/' + %q, { method: %q, headers: { 'X-Telegram-Init-Data': data, 'Content-Type': 'application/json' }, body: %s });
		return String(r.status);
	})()`, path, method, body)
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("fetch %s %s: %v", method, path, err)
	}
	return v
}

// message makes an API request from the page as its user, in the page's
// language, and returns the error message of its answer ("" if none).
func (b *browser) message(method, path, body string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	js := fmt.Sprintf(`(async () => {
		const data = new URLSearchParams(location.hash.slice(1)).get('tgWebAppData');
		const headers = { 'X-Telegram-Init-Data': data, 'Content-Type': 'application/json', 'X-Shop-Lang': document.documentElement.lang };
		const r = await fetch('api/' + %q, { method: %q, headers, body: %s });
		const j = await r.json();
		return (j.error && j.error.message) || '';
	})()`, path, method, body)
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("fetch %s %s: %v", method, path, err)
	}
	return v
}

// The owner finds a placed order, refunds it (the upstream order is read
// again first, by fulfil's refund), sees a new paid order appear without a
// reload, and reads the refund in the audit log; the books in the dark
// theme.
func TestBrowserConsoleOwnerRefundsAnOrder(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)

	s.openConsole(b, owner, lightTheme)
	b.visible(`#orders [data-ref="` + o.Ref() + `"]`)
	b.shot("console-1-owner-orders")
	b.typeInto(`#q`, fmt.Sprint(o.ID))
	b.click(`#search`)
	b.click(`#orders [data-ref="` + o.Ref() + `"]`)
	b.visible(`#actions [data-action="refund"]`)
	b.shot("console-2-owner-order")
	reads := s.Polls.Load()
	b.eval(`window.confirm = () => true`)
	b.click(`#actions [data-action="refund"]`)
	b.until(`document.querySelector('#notice').textContent === 'Refund: done.'`)
	if s.Polls.Load() == reads {
		t.Error("the refund did not read the upstream order again")
	}
	if err := s.Sim.FailOrder(int(placed.UpstreamNumber), "cancelled by the shop"); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(o.ID, state.OrderRefunded)
	if n := s.StarRefunds(o.ChargeID); n != 1 {
		t.Fatalf("%d refunds", n)
	}

	// A new paid order appears on the list without a reload.
	b.click(`#tabs [data-tab="orders"]`)
	b.visible(`#orders [data-ref="` + o.Ref() + `"]`)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{})
	fresh := s.Paid(shoptest.GiftCards(1), state.PayStars)
	b.visible(`#orders [data-ref="` + fresh.Ref() + `"]`)

	b.click(`#tabs [data-tab="audit"]`)
	b.visible(`#audit tr[data-action="refund"]`)
	if row := b.text(`#audit tr[data-action="refund"]`); !strings.Contains(row, "order "+fmt.Sprint(o.ID)) || !strings.Contains(row, "console") || !strings.Contains(row, "owner") {
		t.Fatalf("the audit row of the refund: %q", row)
	}
	b.shot("console-3-owner-audit")

	b.open(s.base, s.initData(owner), darkTheme)
	b.until(`document.body.dataset.ready === 'yes'`)
	b.click(`#tabs [data-tab="books"]`)
	b.visible(`#chart-daily svg`)
	b.visible(`#upstream-balance`)
	if fill := b.eval(`getComputedStyle(document.querySelector('#chart-daily .ch-text')).fill`); fill == "rgb(0, 0, 0)" {
		t.Errorf("the chart's text is black on the dark theme")
	}
	b.shot("console-4-owner-books-dark")
	b.noPageErrors()
}

// A support agent answers a buyer's ticket from the inbox (the buyer gets
// it in the chat), sees no refund on an order, and a refund made by hand
// is refused (403) and changes nothing; the audit log shows the answer.
func TestBrowserConsoleSupportRepliesAndIsRefusedARefund(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	s.Sim.SetBehavior(simcatalog.DemoGiftCard, resellersim.Behavior{Mode: resellersim.Stay})
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	placed := s.WaitStatus(o.ID, state.OrderPlaced)
	s.Command(s.b, buyer, "support", "")
	s.SayIn(s.b, buyer, "Where is my gift card?")
	s.WaitText(agent, "Where is my gift card?")

	s.openConsole(b, agent, lightTheme)
	if b.eval(`!!document.querySelector('#tabs [data-tab="books"]') || !!document.querySelector('#tabs [data-tab="wallet"]')`) != "false" {
		t.Fatal("the support agent's console offers the books or the credit")
	}
	b.click(`#tabs [data-tab="tickets"]`)
	b.visible(`#tickets .item.unread[data-buyer="5001"]`)
	b.shot("console-5-support-inbox")
	b.click(`#tickets [data-buyer="5001"]`)
	b.visible(`#thread`)
	if !strings.Contains(b.text(`#thread`), "Where is my gift card?") {
		t.Fatalf("the thread: %q", b.text(`#thread`))
	}
	b.typeInto(`#reply-text`, "It is on its way.")
	b.click(`#reply`)
	s.WaitText(buyer, "It is on its way.")
	b.until(`document.querySelector('#thread').textContent.includes('It is on its way.')`)
	b.shot("console-6-support-thread")

	b.click(`#tabs [data-tab="orders"]`)
	b.click(`#orders [data-ref="` + o.Ref() + `"]`)
	b.visible(`#actions [data-action="run"]`)
	if b.eval(`!!document.querySelector('#actions [data-action="refund"]')`) != "false" {
		t.Fatal("the support agent's order page offers a refund")
	}
	if got := b.status("POST", "orders/"+o.Ref()+"/refund", `JSON.stringify({from: 'placed'})`); got != "403" {
		t.Fatalf("the support agent's refund by hand: %s", got)
	}
	if got, _ := s.Orders.Get(t.Context(), o.ID); got.Status != state.OrderPlaced {
		t.Fatalf("the refused refund moved the order to %s", got.Status)
	}
	b.click(`#tabs [data-tab="audit"]`)
	b.visible(`#audit tr[data-action="ticket.reply"]`)
	if row := b.text(`#audit tr[data-action="ticket.reply"]`); !strings.Contains(row, "support") || !strings.Contains(row, "buyer 5001") {
		t.Fatalf("the audit row of the answer: %q", row)
	}
	if b.eval(`!!document.querySelector('#audit tr[data-action="refund"]')`) != "false" {
		t.Fatal("a refund is in the audit log")
	}
	b.noPageErrors()
	// The order is still the buyer's: it is delivered, not refunded.
	if err := s.Sim.CompleteOrder(int(placed.UpstreamNumber)); err != nil {
		t.Fatal(err)
	}
	s.WaitDelivered(o.ID)
}

// An accountant downloads the orders CSV through a signed link (no
// initData: the link is the key, for a few minutes), has no credit in the
// console, and a credit made by hand is refused (403).
func TestBrowserConsoleAccountantDownloadsCSVAndIsRefusedACredit(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitDelivered(o.ID)

	s.openConsole(b, accountant, lightTheme)
	if b.eval(`!!document.querySelector('#tabs [data-tab="wallet"]') || !!document.querySelector('#tabs [data-tab="growth"]')`) != "false" {
		t.Fatal("the accountant's console offers the credit or the growth tools")
	}
	b.click(`#tabs [data-tab="books"]`)
	b.visible(`#chart-daily svg`)
	b.click(`#export-make`)
	b.visible(`#export-download`)
	b.shot("console-7-accountant-books")
	href := b.eval(`document.querySelector('#export-download').href`)
	u, err := url.Parse(href)
	if err != nil || !strings.Contains(u.Path, "/admin/api/download/") {
		t.Fatalf("the download link %q", href)
	}
	res, err := http.Get(href)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") || !strings.Contains(string(body), o.ChargeID) {
		t.Fatalf("the download: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if got := b.status("POST", "credit", `JSON.stringify({user: 5001, amount: '5.00'})`); got != "403" {
		t.Fatalf("the accountant's credit by hand: %s", got)
	}
	if bal, _ := s.Wallets.Balance(t.Context(), buyer); !bal.IsZero() {
		t.Fatalf("the refused credit left a balance of %s", bal)
	}
	b.click(`#tabs [data-tab="audit"]`)
	b.visible(`#audit`)
	if b.eval(`!!document.querySelector('#audit tr[data-action="credit"]')`) != "false" {
		t.Fatal("a credit is in the audit log")
	}
	b.noPageErrors()
}

// An owner whose Telegram is in Russian gets the console in Russian: the
// tabs, the order page (its statuses, labels and actions), the server's
// refusals and the charts' titles; the language picker switches it to
// Ukrainian and back to English, and the page remembers the choice.
func TestBrowserConsoleInRussian(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	o := s.Paid(shoptest.GiftCards(1), state.PayStars)
	s.WaitDelivered(o.ID)

	b.open(s.base, s.initDataIn(owner, "ru"), lightTheme)
	b.until(`document.body.dataset.ready === 'yes'`)
	if got := b.eval(`document.documentElement.lang`); got != "ru" {
		t.Fatalf("the page's language: %q", got)
	}
	if got := b.text(`#tabs [data-tab="orders"]`); got != "Заказы" {
		t.Fatalf("the orders tab reads %q", got)
	}
	if got := b.text(`#tabs [data-tab="audit"]`); got != "Журнал действий" {
		t.Fatalf("the audit tab reads %q", got)
	}
	if got := b.eval(`document.querySelector('#search').textContent + ' | ' + document.querySelector('#q').placeholder`); !strings.HasPrefix(got, "Найти | № заказа") {
		t.Fatalf("the search form reads %q", got)
	}
	b.click(`#orders [data-ref="` + o.Ref() + `"]`)
	b.visible(`#actions [data-action="resend"]`)
	if got := b.text(`#order-title`); got != fmt.Sprintf("Заказ №%d · ✅ выполнен", o.ID) {
		t.Fatalf("the order's title reads %q", got)
	}
	if got := b.text(`#actions [data-action="resend"]`); got != "Отправить снова" {
		t.Fatalf("the resend button reads %q", got)
	}
	if page := b.text(`main`); !strings.Contains(page, "покупатель") || !strings.Contains(page, "История") {
		t.Fatalf("the order page is not in Russian: %q", page)
	}
	b.shot("console-8-owner-order-ru")
	// A refusal is worded in the page's language by the server.
	if got := b.message("GET", "orders?status=nope", "undefined"); got != "Неизвестный статус." {
		t.Fatalf("the refusal reads %q", got)
	}
	b.click(`#tabs [data-tab="books"]`)
	b.visible(`#chart-daily svg`)
	if got := b.text(`#chart-daily figcaption`); got != "Выручка, затраты и маржа по дням (USD)" {
		t.Fatalf("the chart's title reads %q", got)
	}
	b.shot("console-9-owner-books-ru")

	// Switched to Ukrainian: the page is redrawn, and stays so when opened again.
	b.eval(`(() => { const l = document.querySelector('#lang'); l.value = 'uk'; l.dispatchEvent(new Event('change')); })()`)
	b.until(`document.querySelector('#tabs [data-tab="orders"]').textContent === 'Замовлення'`)
	b.visible(`#chart-daily svg`)
	if got := b.text(`#chart-daily figcaption`); got != "Виручка, витрати й маржа по днях (USD)" {
		t.Fatalf("the chart's title in Ukrainian reads %q", got)
	}
	b.open(s.base, s.initDataIn(owner, "ru"), lightTheme)
	b.until(`document.body.dataset.ready === 'yes'`)
	if got := b.text(`#tabs [data-tab="orders"]`); got != "Замовлення" {
		t.Fatalf("opened again, the orders tab reads %q", got)
	}
	b.eval(`(() => { const l = document.querySelector('#lang'); l.value = 'en'; l.dispatchEvent(new Event('change')); })()`)
	b.until(`document.querySelector('#tabs [data-tab="orders"]').textContent === 'Orders'`)
	b.noPageErrors()
}

// The owner resolves an order in review by adopting the upstream order
// that is its purchase: the number is checked and shown to confirm (it
// matches the order), then adopted, and the order is delivered. A support
// agent's page of the same order has no adopt button, and an adoption made
// by hand is refused (403).
func TestBrowserConsoleOwnerAdoptsAnUpstreamOrder(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	o, ours := s.inReview()

	s.openConsole(b, agent, lightTheme)
	b.typeInto(`#q`, fmt.Sprint(o.ID))
	b.click(`#search`)
	b.click(`#orders [data-ref="` + o.Ref() + `"]`)
	b.visible(`#order-title`)
	if b.eval(`!!document.querySelector('#actions [data-action="adopt"]')`) != "false" {
		t.Fatal("the support agent's page offers to adopt")
	}
	if got := b.status("POST", "orders/"+o.Ref()+"/adopt", fmt.Sprintf(`JSON.stringify({number: '%d'})`, ours)); got != "403" {
		t.Fatalf("the support agent's adoption by hand: %s", got)
	}

	s.openConsole(b, owner, lightTheme)
	b.typeInto(`#q`, fmt.Sprint(o.ID))
	b.click(`#search`)
	b.click(`#orders [data-ref="` + o.Ref() + `"]`)
	b.click(`#actions [data-action="adopt"]`)
	b.typeInto(`#adopt-number`, "99999")
	b.click(`#adopt-check`)
	b.until(`document.querySelector('#notice').textContent.includes('no order #99999')`)
	b.typeInto(`#adopt-number`, fmt.Sprint(ours))
	b.click(`#adopt-check`)
	b.visible(`#adopt-yes`)
	if what := b.text(`#adopt-what`); !strings.Contains(what, fmt.Sprintf("Upstream order #%d: type gift_card", ours)) {
		t.Fatalf("the confirmation reads %q", what)
	}
	if match := b.text(`#adopt-match`); !strings.Contains(match, "matches") {
		t.Fatalf("the match reads %q", match)
	}
	b.shot("console-10-owner-adopt")
	if got, _ := s.Orders.Get(t.Context(), o.ID); got.Status != state.OrderNeedsReview {
		t.Fatalf("the order moved to %s before the owner confirmed", got.Status)
	}
	b.click(`#adopt-yes`)
	b.until(`document.querySelector('#notice').textContent === 'Adopt an upstream order: done.'`)
	if got := s.WaitDelivered(o.ID); got.UpstreamNumber != ours {
		t.Fatalf("delivered with upstream %d", got.UpstreamNumber)
	}
	b.click(`#tabs [data-tab="audit"]`)
	b.visible(`#audit tr[data-action="adopt"]`)
	if row := b.text(`#audit tr[data-action="adopt"]`); !strings.Contains(row, "owner") || !strings.Contains(row, "console") {
		t.Fatalf("the audit row of the adoption: %q", row)
	}
	b.noPageErrors()
}

// A support agent answers a ticket with a photo chosen in the console: the
// buyer gets it (sendPhoto, with the text as its caption), and the thread
// shows it beside the photo the buyer sent; a file that is no picture is
// refused with the reason.
func TestBrowserConsoleSupportAnswersWithAPhoto(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	s.openTicket("The card is rejected")
	s.Fake.SendPhotoData(buyer, "look", botapitest.TestJPEG(120, 90, color.RGBA{R: 210, G: 60, B: 60, A: 255}))
	s.WaitText(agent, "look")
	dir := t.TempDir()
	pic := botapitest.TestJPEG(320, 200, color.RGBA{R: 40, G: 150, B: 220, A: 255})
	good, notes := filepath.Join(dir, "steps.jpg"), filepath.Join(dir, "notes.jpg")
	if err := os.WriteFile(good, pic, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("plain text, not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}

	s.openConsole(b, agent, lightTheme)
	b.click(`#tabs [data-tab="tickets"]`)
	b.click(`#tickets [data-buyer="5001"]`)
	b.until(`(() => { const i = document.querySelector('#thread img.photo'); return !!i && i.complete && i.naturalWidth === 120; })()`)

	b.do(chromedp.SetUploadFiles(`#reply-photo`, []string{notes}))
	b.click(`#reply`)
	b.until(`document.querySelector('#notice').textContent.includes('JPEG or PNG')`)

	b.typeInto(`#reply-text`, "Type the code as on this picture")
	b.do(chromedp.SetUploadFiles(`#reply-photo`, []string{good}))
	b.click(`#reply`)
	sent := s.WaitText(buyer, "Type the code as on this picture")
	if sent.Method != "sendPhoto" || !bytes.Equal(sent.FileData, pic) {
		t.Fatalf("the buyer got %s with %d bytes", sent.Method, len(sent.FileData))
	}
	b.until(`(() => { const i = document.querySelectorAll('#thread img.photo'); return i.length === 2 && i[1].complete && i[1].naturalWidth === 320; })()`)
	b.shot("console-11-support-photo")
	s.NoViolations()
	b.noPageErrors()
}

// selectValue picks value in a <select> as a user would (its change event).
func (b *browser) selectValue(sel, value string) {
	b.t.Helper()
	b.visible(sel)
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('change')); })()`, sel, value))
}

// The owner composes a broadcast to the buyers of a product line with a
// button into the shop: the audience's size is shown as it is picked, an
// audience and a button the server cannot read are refused beside the form
// (what was typed stays, nothing is sent), the preview shows the message
// with its button, and once confirmed exactly the line's buyers who did not
// turn news off get it with the tagged button; the list shows its results,
// the opens included. In Tokyo's time zone, a broadcast scheduled for 10:00
// on the page is scheduled for 01:00 UTC and listed at 10:00 (Asia/Tokyo).
func TestBrowserConsoleOwnerBroadcastsToALinesBuyers(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	ctx := t.Context()
	now := time.Now()
	users := s.b.Users
	for id, line := range map[int64]string{601: "giftcards", 602: "giftcards", 603: "keys", 604: "", 605: "giftcards"} {
		if err := users.Started(ctx, id, now); err != nil {
			t.Fatal(err)
		}
		if err := users.Bought(ctx, id, line, "en", now); err != nil {
			t.Fatal(err)
		}
	}
	if err := users.SetMarketingOff(ctx, 605, true, now); err != nil {
		t.Fatal(err)
	}
	const text = "Steam cards are 10% off today"
	jobs := work.NewBroadcasts(s.Rdb.Client, s.Rdb.Prefix)

	s.openConsole(b, owner, lightTheme)
	b.click(`#tabs [data-tab="growth"]`)
	b.visible(`#bc-text`)
	// An audience the server cannot read is refused beside the form.
	b.selectValue(`#bc-audience`, "recent")
	b.typeInto(`#bc-days`, "0")
	b.until(`document.querySelector('#bc-error').textContent === 'That audience is not one this shop has.'`)
	b.selectValue(`#bc-audience`, "line")
	b.selectValue(`#bc-line`, "giftcards")
	b.until(`document.querySelector('#bc-reach').textContent === 'Buyers who bought 💳 Gift cards: this will reach 2 buyers now (of 3; not counted: 1 turned news off, 0 blocked the bot)'`)
	if b.eval(`document.querySelector('#bc-error').hidden`) != "true" {
		t.Fatal("the refusal stays shown")
	}

	// A button the server cannot read: refused beside the form, kept.
	b.typeInto(`#bc-text`, text)
	b.typeInto(`#bc-label-1`, "Steam cards")
	b.typeInto(`#bc-target-1`, "steam please")
	b.click(`#bc-send`)
	b.click(`#bc-confirm-send`)
	b.until(`document.querySelector('#bc-error').textContent.includes('Not understood')`)
	if got := b.eval(`[document.querySelector('#bc-text').value, document.querySelector('#bc-target-1').value, document.querySelector('#bc-audience').value, document.querySelector('#bc-line').value].join('|')`); got != text+"|steam please|line|giftcards" {
		t.Fatalf("after the refusal the form holds %q", got)
	}
	b.shot("console-12-owner-broadcast-refused")
	if j, err := jobs.Get(ctx, "1"); !errors.Is(err, work.ErrBroadcastNotFound) {
		t.Fatalf("the refused broadcast made a job: %+v %v", j, err)
	}

	b.typeInto(`#bc-target-1`, "gc-steam-us")
	b.click(`#bc-send`)
	b.visible(`#bc-preview .bc-button`)
	if got := b.text(`#bc-preview`); got != text+"Steam cards" {
		t.Fatalf("the preview reads %q", got)
	}
	if got := b.text(`#bc-summary`); !strings.Contains(got, "this will reach 2 buyers now") || !strings.HasSuffix(got, "Goes at once") {
		t.Fatalf("the preview's summary reads %q", got)
	}
	if w := b.eval(`(() => { const r = document.querySelector('#broadcast').getBoundingClientRect().right; return [...document.querySelectorAll('#broadcast *')].every((e) => e.getBoundingClientRect().right <= r + 1); })()`); w != "true" {
		t.Errorf("the broadcast form is wider than its section (the phone's screen)")
	}
	b.shot("console-13-owner-broadcast-preview")
	b.click(`#bc-confirm-send`)
	b.until(`document.querySelector('#notice').textContent === 'Broadcast: done.'`)
	b.visible(`#bc-list [data-bc="1"][data-status="done"]`)
	if got := b.text(`#bc-list [data-bc="1"] .bc-counts`); got != "sent 2 · blocked 0 · failed 0 · skipped (news off) 1 · opened the shop 0" {
		t.Fatalf("the results read %q", got)
	}
	if got := b.text(`#bc-list [data-bc="1"] .bc-who`); got != "Buyers who bought 💳 Gift cards" {
		t.Fatalf("the audience reads %q", got)
	}

	// Exactly the line's buyers who take news got it, with the tagged button.
	got := map[string]bool{}
	for _, c := range s.Fake.Calls() {
		if c.Params["text"] != text {
			continue
		}
		chat := fmt.Sprint(c.Params["chat_id"])
		if c.Method != "sendMessage" || c.ErrorCode != 0 || got[chat] {
			t.Fatalf("%s to %s (error %d), twice: %v", c.Method, chat, c.ErrorCode, got[chat])
		}
		got[chat] = true
		markup, _ := json.Marshal(c.Params["reply_markup"])
		if !strings.Contains(string(markup), `"text":"Steam cards"`) || !strings.Contains(string(markup), "?start=bc1_gc-steam-us") {
			t.Fatalf("the message to %s has the buttons %s", chat, markup)
		}
	}
	if len(got) != 2 || !got["601"] || !got["602"] {
		t.Fatalf("the broadcast went to %v", got)
	}

	// A buyer opens the shop through the button: the list counts it.
	s.Command(s.b, 601, "start", "bc1_gc-steam-us")
	b.click(`#tabs [data-tab="growth"]`)
	b.until(`(document.querySelector('#bc-list [data-bc="1"] .bc-counts') || {}).textContent === 'sent 2 · blocked 0 · failed 0 · skipped (news off) 1 · opened the shop 1'`)
	b.eval(`document.querySelector('#bc-list').scrollIntoView()`)
	b.shot("console-14-owner-broadcast-results")

	// Scheduled on the admin's wall clock in Tokyo (UTC+9, no summer time).
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"})
		return err
	}))
	jst := time.FixedZone("JST", 9*3600)
	day := time.Now().In(jst).AddDate(0, 0, 2)
	at := time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, jst)
	s.openConsole(b, owner, lightTheme)
	b.click(`#tabs [data-tab="growth"]`)
	b.typeInto(`#bc-text`, "Weekend sale")
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector('#bc-at'); e.value = %q; e.dispatchEvent(new Event('change')); })()`, at.Format("2006-01-02T15:04")))
	b.click(`#bc-send`)
	local := at.Format("2006-01-02 15:04") + " (Asia/Tokyo)"
	if got := b.text(`#bc-summary`); !strings.HasSuffix(got, "Goes at "+local) {
		t.Fatalf("the scheduled preview's summary reads %q", got)
	}
	if got := b.text(`#bc-confirm-send`); got != "Schedule" {
		t.Fatalf("the confirm button reads %q", got)
	}
	b.click(`#bc-confirm-send`)
	b.visible(`#bc-list [data-bc="2"][data-status="scheduled"]`)
	if got := b.text(`#bc-list [data-bc="2"] .bc-who`); got != "All buyers · goes at "+local {
		t.Fatalf("the scheduled row reads %q", got)
	}
	j, err := jobs.Get(ctx, "2")
	if err != nil || j == nil || j.Status != work.BroadcastScheduled || !j.At.Equal(at) {
		t.Fatalf("the scheduled job: %+v %v (want at %s)", j, err, at.UTC())
	}
	b.click(`#bc-list [data-stop="2"]`)
	b.visible(`#bc-list [data-bc="2"][data-status="cancelled"]`)
	s.NoViolations()
	b.noPageErrors()
}

// The owner opens the Charges page: the Star payments waiting for review
// with their totals, buyer, Stars, date, reason and item, as /charges
// shows them. The first press of Refund only asks; confirmed, the payment
// is refunded once, leaves the list and is in the audit log. One that
// another owner settled from the chat meanwhile is said to be resolved
// before, as a notice, not an error, and moves nothing. An accountant sees
// the list without a button (a payment listed meanwhile joins it without
// a reload), and a refund made by hand is refused (403).
func TestBrowserConsoleOwnerRefundsAChargeForReview(t *testing.T) {
	s := newConsoleShop(t, nil)
	b := newBrowser(t)
	s.sweepDone()
	s.listCharge("stxBROWSE1", buyer, 500, paidAt, state.ReviewQuoteGone, "Apple Gift Card 10 USD")
	s.listCharge("stxBROWSE2", buyer, 700, paidAt.Add(time.Hour), state.ReviewBeforeStore, "")
	s.listCharge("stxBROWSE3", buyer, 300, paidAt.Add(2*time.Hour), state.ReviewBeforeStore, "")
	row := func(id string) string { return `#charges [data-charge="` + id + `"]` }

	s.openConsole(b, owner, lightTheme)
	b.click(`#tabs [data-tab="charges"]`)
	b.visible(row("stxBROWSE1"))
	if got := b.text(`#charges-waiting`); got != "Waiting for review: 3 · 1,500\u00a0⭐ (≈ $19.50)" {
		t.Fatalf("the totals read %q", got)
	}
	if got := b.text(row("stxBROWSE1")); !strings.Contains(got, "500\u00a0⭐ (≈ $6.50) · buyer 5001") || !strings.Contains(got, "paid 2026-11-20 09:30 UTC") ||
		!strings.Contains(got, "Why: its offer is no longer stored") || !strings.Contains(got, "💳 Gift cards: Apple Gift Card 10 USD") {
		t.Fatalf("the first payment reads %q", got)
	}
	if got := b.eval(`[...document.querySelectorAll('#charges [data-charge]')].map((e) => e.dataset.charge).join(' ')`); got != "stxBROWSE1 stxBROWSE2 stxBROWSE3" {
		t.Fatalf("the list's order: %q", got)
	}
	b.shot("console-15-owner-charges")

	b.click(row("stxBROWSE1") + ` [data-action="refund"]`)
	b.visible(row("stxBROWSE1") + ` [data-confirm="refund"]`)
	if got := b.text(row("stxBROWSE1") + ` .charge-question`); !strings.Contains(got, "500\u00a0⭐ go back to buyer 5001") {
		t.Fatalf("the question reads %q", got)
	}
	if n := s.StarRefunds("stxBROWSE1"); n != 0 {
		t.Fatalf("the first press refunded %d times", n)
	}
	b.shot("console-16-owner-charge-confirm")
	b.click(row("stxBROWSE1") + ` [data-confirm="refund"]`)
	b.until(`document.querySelector('#notice').textContent.startsWith('✅ Refunded, and the buyer was told.')`)
	b.until(`!document.querySelector('#charges [data-charge="stxBROWSE1"]')`)
	if n := s.StarRefunds("stxBROWSE1"); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	s.WaitText(buyer, "has been refunded")
	if got := b.text(`#charges-waiting`); got != "Waiting for review: 2 · 1,000\u00a0⭐ (≈ $13.00)" {
		t.Fatalf("the totals after the refund read %q", got)
	}

	// Another owner settles the second payment from the chat while this
	// owner is asked to confirm its refund (an open confirmation is not
	// redrawn by the live poll).
	b.click(row("stxBROWSE2") + ` [data-action="refund"]`)
	b.visible(row("stxBROWSE2") + ` [data-confirm="refund"]`)
	if _, err := s.b.Books().ResolveCharge(t.Context(), state.Actor{ID: owner, Role: "owner", Via: state.ViaChat}, "stxBROWSE2", state.ChargeSettled); err != nil {
		t.Fatal(err)
	}
	b.click(row("stxBROWSE2") + ` [data-confirm="refund"]`)
	b.until(`document.querySelector('#notice').textContent.startsWith('ℹ️ It was resolved before: ✅ Settled by admin')`)
	if b.eval(`document.querySelector('#notice').className`) == "error" {
		t.Error("the payment resolved before is shown as an error")
	}
	b.shot("console-17-owner-charge-resolved-before")
	b.until(`!document.querySelector('#charges [data-charge="stxBROWSE2"]')`)
	if n := len(s.Fake.CallsFor("refundStarPayment")); n != 1 || s.Fake.Refunded("stxBROWSE2") {
		t.Fatalf("%d refund calls, the settled payment refunded: %v", n, s.Fake.Refunded("stxBROWSE2"))
	}

	b.click(`#tabs [data-tab="audit"]`)
	b.visible(`#audit tr[data-action="charge.refund"]`)
	if got := b.text(`#audit tr[data-action="charge.refund"]`); !strings.Contains(got, "Star payment for review refunded") || !strings.Contains(got, "charge stxBROWSE1") ||
		!strings.Contains(got, "console") || !strings.Contains(got, "owner") {
		t.Fatalf("the audit row of the refund: %q", got)
	}
	b.noPageErrors()

	s.openConsole(b, accountant, lightTheme)
	b.click(`#tabs [data-tab="charges"]`)
	b.visible(row("stxBROWSE3"))
	if b.eval(`document.querySelectorAll('#charges button').length`) != "0" {
		t.Fatal("the accountant's list has buttons")
	}
	// A payment listed meanwhile joins the list and the tab's count without a reload.
	s.listCharge("stxBROWSE4", buyer, 200, paidAt.Add(3*time.Hour), state.ReviewBeforeStore, "")
	b.visible(row("stxBROWSE4"))
	b.until(`(() => { const c = document.querySelector('#badge-charges'); return !c.hidden && c.textContent === '2'; })()`)
	b.shot("console-18-accountant-charges")
	if got := b.status("POST", "charges/stxBROWSE3/refund", `JSON.stringify({})`); got != "403" {
		t.Fatalf("the accountant's refund by hand: %s", got)
	}
	if got := b.status("POST", "charges/stxBROWSE3/settle", `JSON.stringify({})`); got != "403" {
		t.Fatalf("the accountant's settlement by hand: %s", got)
	}
	if rv, err := s.chargeReviews().Get(t.Context(), "stxBROWSE3"); err != nil || rv.Resolution != nil || s.StarRefunds("stxBROWSE3") != 0 {
		t.Fatalf("the refused requests moved the payment: %+v %v", rv, err)
	}
	b.noPageErrors()
}
