package webapp_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"shopbot/reseller/resellersim/simcatalog"
)

// manyCards is the default catalog with a gift-card brand of n regional
// categories, each with an image, the first of them with n cards.
func manyCards(n int) *simcatalog.Catalog {
	cat := simcatalog.Default()
	for i := range n {
		id := fmt.Sprintf("bench-%03d", i)
		c := simcatalog.GiftCategory{ID: id, Name: fmt.Sprintf("Bench Card (R%03d)", i), Brand: "Bench", Region: fmt.Sprintf("R%03d", i), Image: "gift/" + id + ".png"}
		cards := 1
		if i == 0 {
			cards = n
		}
		for j := range cards {
			c.Cards = append(c.Cards, simcatalog.GiftCard{ID: fmt.Sprintf("%s-%d", id, j+1), Name: fmt.Sprintf("Bench %d USD", j+1),
				Price: decimal.NewFromInt(int64(j + 1)), Stock: 100, MinQuantity: 1, MaxQuantity: 10})
		}
		cat.GiftCategories = append(cat.GiftCategories, c)
	}
	return cat
}

// markJS records in the page how long after it is called sel first
// matches n elements and the frame after has been drawn: it sets the
// milliseconds on the root element (data-done), a change of the DOM the
// test's wait looks again on. It also marks each image loaded or failed
// (data-loaded), for the same reason.
const markJS = `document.addEventListener('load', (e) => { if (e.target.tagName === 'IMG') e.target.setAttribute('data-loaded', 'ok'); }, true);
document.addEventListener('error', (e) => { if (e.target.tagName === 'IMG') e.target.setAttribute('data-loaded', 'error'); }, true);
window.__mark = (sel, n, act) => {
  document.documentElement.removeAttribute('data-done');
  const t0 = performance.now();
  const done = () => requestAnimationFrame(() => setTimeout(() => document.documentElement.setAttribute('data-done', (performance.now() - t0).toFixed(1))));
  const obs = new MutationObserver(() => { if (document.querySelectorAll(sel).length >= n) { obs.disconnect(); done(); } });
  obs.observe(document.body, { childList: true, subtree: true });
  act();
};`

// measure runs act (JavaScript) and returns how long until sel matched n
// elements, drawn.
func (b *browser) measure(act, sel string, n int) string {
	b.t.Helper()
	b.eval(fmt.Sprintf(`window.__mark(%q, %d, () => { %s })`, sel, n, act))
	b.until(`document.documentElement.hasAttribute('data-done')`)
	return b.eval(`document.documentElement.getAttribute('data-done')`)
}

// resources sums the page's requests whose address contains part: how
// many, and the bytes they took on the wire (headers included) and as
// bodies (compressed as sent).
func (b *browser) resources(part string) (n int, wire, body int) {
	b.t.Helper()
	out := b.eval(fmt.Sprintf(`(() => { let n = 0, w = 0, e = 0;
	  for (const r of performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))) {
	    if (!r.name.includes(%q)) continue;
	    n++; w += r.transferSize; e += r.encodedBodySize;
	  }
	  return n + ' ' + w + ' ' + e; })()`, part))
	f := strings.Fields(out)
	n, _ = strconv.Atoi(f[0])
	wire, _ = strconv.Atoi(f[1])
	body, _ = strconv.Atoi(f[2])
	return n, wire, body
}

// The page's first load measured in the browser, and a category of 150
// cards and a line of 150 categories with images: their figures are
// logged (times are this machine's, not asserted); what is asserted is
// that the images load lazily (the cards far below the screen fetch
// theirs only when scrolled to) and that every card is there.
func TestBrowserManyCardsMeasured(t *testing.T) {
	const n = 150
	s := newAppShopCatalog(t, manyCards(n), nil)
	b := newBrowser(t)
	b.open(s.base, s.initData(buyer, time.Now()), lightTheme)
	b.visible(`.card[data-line="giftcards"]`)
	b.eval(`performance.setResourceTimingBufferSize(2000)`)
	nav := b.eval(`(() => { const e = performance.getEntriesByType('navigation')[0]; return e.transferSize + ' ' + e.encodedBodySize; })()`)
	_, cssWire, cssBody := b.resources("app.css")
	_, jsWire, jsBody := b.resources("app.js")
	_, sessWire, sessBody := b.resources("api/session")
	var navWire, navBody int
	fmt.Sscan(nav, &navWire, &navBody)
	t.Logf("first load: page %d+%d+%d bytes gzipped (HTML, CSS, JS bodies), session %d bytes; %d bytes on the wire with headers (Telegram's script aside)",
		navBody, cssBody, jsBody, sessBody, navWire+cssWire+jsWire+sessWire)
	b.eval(markJS)
	imgs := watchImages(t, b)

	// The line: 150 categories, 60 a page.
	cards := `#screen .card[data-category]`
	ms := b.measure(`document.querySelector('.card[data-line="giftcards"]').click()`, `#screen .card[data-category^="bench-"]`, 1)
	shown := b.eval(`document.querySelectorAll('` + cards + `').length`)
	for b.eval(`!!document.querySelector('#more-categories') && !document.querySelector('#more-categories').hidden`) == "true" {
		before, _ := strconv.Atoi(b.eval(`document.querySelectorAll('` + cards + `').length`))
		b.measure(`document.querySelector('#more-categories').click()`, cards, before+1)
	}
	all, _ := strconv.Atoi(b.eval(`document.querySelectorAll('` + cards + `').length`))
	bench, _ := strconv.Atoi(b.eval(`document.querySelectorAll('` + cards + `[data-category^="bench-"]').length`))
	if bench != n {
		t.Fatalf("%d of the %d Bench categories listed (%d cards in all)", bench, n, all)
	}
	_, apiWire, _ := b.resources("api/lines/giftcards")
	withImg, _ := strconv.Atoi(b.eval(`document.querySelectorAll('` + cards + ` img.thumb').length`))
	// Which images the page asked for, from the browser's own network
	// events: once none is in flight, the last card's was not asked for.
	b.until(`[...document.querySelectorAll('img.thumb')].slice(0, 8).every((i) => i.hasAttribute('data-loaded'))`)
	imgs.idle(t)
	early := imgs.asked()
	last := b.eval(`[...document.querySelectorAll('img.thumb')].pop().src`)
	if early[last] {
		t.Fatalf("the last card's image was fetched before scrolling to it (%d of %d images asked for): the images do not load lazily", len(early), withImg)
	}
	_, earlyWire, _ := b.resources("/img/")
	t.Logf("line of %d categories (%d Bench): the first page (%s cards) drawn %s ms after the tap; all %d cards (%d with an image) in %d KB of API answers; %d distinct images (%d bytes) fetched for the first screen",
		all, bench, shown, ms, all, withImg, apiWire>>10, len(early), earlyWire)
	b.shot("27-150-categories")
	b.eval(`window.scrollTo(0, document.body.scrollHeight)`)
	b.until(`[...document.querySelectorAll('img.thumb')].slice(-5).every((i) => i.hasAttribute('data-loaded'))`)
	imgs.idle(t)
	late, lateWire, _ := b.resources("/img/")
	t.Logf("after scrolling to the end: %d distinct images fetched (%d bytes)", late, lateWire)
	if !imgs.asked()[last] {
		t.Fatal("scrolled to it, the last card's image was never fetched")
	}

	// A category of 150 cards, 50 a page.
	b.eval(`window.scrollTo(0, 0)`)
	items := `#items .card[data-item]`
	ms = b.measure(`document.querySelector('.card[data-category="bench-000"]').click()`, items, 50)
	for b.eval(`!!document.querySelector('#more-items')`) == "true" {
		before, _ := strconv.Atoi(b.eval(`document.querySelectorAll('` + items + `').length`))
		b.measure(`document.querySelector('#more-items').click()`, items, before+1)
	}
	got, _ := strconv.Atoi(b.eval(`document.querySelectorAll('` + items + `').length`))
	if got != n {
		t.Fatalf("%d of the %d cards listed", got, n)
	}
	tap := b.measure(`document.querySelector('`+items+`:last-child').click()`, items+`[aria-pressed="true"]`, 1)
	_, catWire, _ := b.resources("api/lines/giftcards/categories/bench-000")
	t.Logf("category of %d cards: the first 50 drawn %s ms after the tap, all %d in %d KB of API answers; choosing the last card redraws the form in %s ms",
		n, ms, got, catWire>>10, tap)
	b.shot("28-150-cards")
	b.fitsPhone("150 cards")
	b.noPageErrors()
}

// imageRequests follows the page's requests for images (the browser's
// network events): which it asked for and which are still in flight.
type imageRequests struct {
	mu      sync.Mutex
	url     map[network.RequestID]string
	pending map[network.RequestID]bool
	changed chan struct{}
}

func watchImages(t *testing.T, b *browser) *imageRequests {
	r := &imageRequests{url: map[network.RequestID]string{}, pending: map[network.RequestID]bool{}, changed: make(chan struct{}, 1)}
	err := chromedp.Listen(b.ctx, func(ev any) {
		r.mu.Lock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if strings.Contains(e.Request.URL, "/img/") {
				r.url[e.RequestID], r.pending[e.RequestID] = e.Request.URL, true
			}
		case *network.EventLoadingFinished:
			delete(r.pending, e.RequestID)
		case *network.EventLoadingFailed:
			delete(r.pending, e.RequestID)
		default:
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		select {
		case r.changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// idle waits until no image request is in flight.
func (r *imageRequests) idle(t *testing.T) {
	t.Helper()
	limit := time.After(15 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.pending)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-r.changed:
		case <-limit:
			t.Fatalf("%d image requests still in flight", n)
		}
	}
}

// asked is the set of image addresses the page asked for.
func (r *imageRequests) asked() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, u := range r.url {
		out[u] = true
	}
	return out
}
