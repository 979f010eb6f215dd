package webapp_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"shopbot/bot/storefront"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state/redisstore/work"
)

// imagePath is the form of an image's address on the page: the shop's own,
// by a key, never the upstream's URL.
var imagePath = regexp.MustCompile(`^img/[0-9a-f]{32}$`)

// The catalog's images reach the page through the shop: the lists and a
// category's page name each image by a key under the app's own address
// (same origin, as the CSP wants), never by the upstream's URL; the shop
// downloads an image once (the chat's guards and checks) and serves it
// with cache headers and an ETag; a key the app never listed fetches
// nothing, a broken image is a 404 (the page's placeholder) and is marked
// broken for the chat's screens too.
func TestImagesServedThroughTheShop(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	a := s.call("GET", "lines/giftcards", data, nil).ok(t)
	if strings.Contains(a.raw, resellersim.ImagesPath) || strings.Contains(a.raw, "http") {
		t.Fatalf("the list leaks an upstream URL: %s", a.raw)
	}
	with, without := map[string]string{}, 0
	for _, c := range a.at("categories").([]any) {
		m := c.(map[string]any)
		img, _ := m["image"].(string)
		switch {
		case img == "":
			without++
		case !imagePath.MatchString(img):
			t.Fatalf("image %q of %v", img, m)
		default:
			with[m["id"].(string)] = img
		}
	}
	if len(with) == 0 || without == 0 {
		t.Fatalf("%d categories with an image, %d without: %s", len(with), without, a.raw)
	}
	img, ok := with[simcatalog.DemoGiftCategory]
	if !ok {
		t.Fatalf("%s has no image: %v", simcatalog.DemoGiftCategory, with)
	}
	const name = "gift/apple.png" // the simulator's image of the Apple categories
	page := s.call("GET", "lines/giftcards/categories/"+simcatalog.DemoGiftCategory, data, nil).ok(t)
	if got := page.str("category", "image"); got != img {
		t.Fatalf("the category's page shows %q, its card %q", got, img)
	}

	// No initData: an <img> sends none.
	res := s.get(t, s.base+img, "")
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "image/png" || res.raw != string(resellersim.TestPNG(name)) {
		t.Fatalf("image: %d %v (%d bytes)", res.status, res.header, len(res.raw))
	}
	if cc := res.header.Get("Cache-Control"); cc != "public, max-age=86400" || res.header.Get("ETag") == "" ||
		!strings.Contains(res.header.Get("Content-Security-Policy"), "img-src 'self' data:") {
		t.Fatalf("image headers: %v", res.header)
	}
	if again := s.get(t, s.base+img, res.header.Get("ETag")); again.status != http.StatusNotModified {
		t.Fatalf("with its ETag: %d", again.status)
	}
	s.get(t, s.base+img, "")
	if n := s.Sim.ImageRequests(name); n != 1 {
		t.Fatalf("the upstream was asked %d times for the image, want once", n)
	}

	// A key nobody listed, and no key at all.
	for _, p := range []string{"img/" + work.ImageKey("https://example.com/x.png"), "img/..%2fapp.js", "img/ABC"} {
		if r := s.get(t, s.base+p, ""); r.status != http.StatusNotFound {
			t.Fatalf("%s: %d", p, r.status)
		}
	}

	// A broken image: 404 for the page, marked broken for the chat.
	broken := ""
	for id, p := range with {
		if !strings.HasPrefix(id, "apple-") {
			broken = p
			break
		}
	}
	var brokenName string
	for _, c := range s.call("GET", "lines/giftcards", data, nil).at("categories").([]any) {
		m := c.(map[string]any)
		if m["image"] == broken {
			brokenName = "gift/" + slugOf(m["group"].(string)) + ".png"
		}
	}
	s.Sim.SetImageFault(brokenName, resellersim.ImageGarbage)
	r := s.get(t, s.base+broken, "")
	if r.status != http.StatusNotFound || r.header.Get("Cache-Control") != "public, max-age=300" {
		t.Fatalf("a broken image (%s): %d %v", brokenName, r.status, r.header)
	}
	url := resellersim.ImageURL(s.SimURL, brokenName)
	if _, bad, _ := work.NewImages(s.Rdb.Client, s.Rdb.Prefix).Lookup(t.Context(), url); !bad {
		t.Fatalf("%s is not marked broken for the chat", url)
	}

	// A search result has its image too.
	found := s.call("GET", "search?q=elden", data, nil).ok(t)
	if !strings.Contains(found.raw, `"image":"img/`) || strings.Contains(found.raw, "http") {
		t.Fatalf("search: %s", found.raw)
	}
}

// slugOf is the simulator's image name of a gift-card brand.
func slugOf(brand string) string {
	return map[string]string{"Apple": "apple", "Google Play": "google-play", "Steam Wallet": "steam", "PlayStation": "psn",
		"Xbox": "xbox", "Netflix": "netflix", "Amazon": "amazon", "Razer Gold": "razer-gold"}[brand]
}

// get fetches an address of the app with no initData, If-None-Match etag
// when set.
func (s *appShop) get(t *testing.T, url, etag string) answer {
	t.Helper()
	req := mustGet(t, url)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	return s.do(req)
}

// Without the chat's images (SHOW_IMAGES=false) the page gets none: every
// card shows its placeholder, and no image is fetched.
func TestNoImagesWhenImagesAreOff(t *testing.T) {
	s := newAppShopWith(t, nil, func(o *storefront.Options) { o.Images = nil })
	a := s.call("GET", "lines/giftcards", s.initData(buyer, time.Now()), nil).ok(t)
	if strings.Contains(a.raw, `"image"`) {
		t.Fatalf("images while they are off: %s", a.raw)
	}
}
