package images_test

import (
	"fmt"
	"net/http/httptest"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest/types"
	"shopbot/bot/bottest"
	"shopbot/bot/catalog"
	"shopbot/bot/images"
	"shopbot/bot/storefront"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// Product images end to end: the gift-card line over the simulator, whose
// categories have images it serves itself, through the fake Bot API.

// imageShop is a shop whose catalog has images.
type imageShop struct {
	*bottest.Harness
	b   *storefront.Shop
	sim *resellersim.Sim
	srv *httptest.Server
}

// The images of imageCatalog: Apple's two regions have their own, Razer
// has none.
const (
	imgAppleUS = "gift/apple-us.png"
	imgAppleTR = "gift/apple-tr.png"
	imgSteamUS = "gift/steam-us.png"
)

func imageCatalog() *simcatalog.Catalog {
	card := func(id, name string) []simcatalog.GiftCard {
		return []simcatalog.GiftCard{{ID: id, Name: name, Price: decimal.RequireFromString("10.35"), Stock: 50, MinQuantity: 1, MaxQuantity: 10}}
	}
	var long []simcatalog.GiftCard // a page of them is over the caption limit
	for i := range 8 {
		long = append(long, card(fmt.Sprintf("steam-us-%d", i), fmt.Sprintf("Steam Wallet Code %d USD, %s", 10+i, strings.Repeat("redeemable worldwide ", 5)))...)
	}
	return &simcatalog.Catalog{GiftCategories: []simcatalog.GiftCategory{
		{ID: "apple-us", Name: "Apple (US)", Brand: "Apple", Region: "US", Image: imgAppleUS, Cards: card("apple-us-10", "Apple 10 USD")},
		{ID: "apple-tr", Name: "Apple (TR)", Brand: "Apple", Region: "TR", Image: imgAppleTR, Cards: card("apple-tr-100", "Apple 100 TRY")},
		{ID: "razer-us", Name: "Razer Gold (US)", Brand: "Razer Gold", Region: "US", Cards: card("razer-us-10", "Razer Gold 10 USD")},
		{ID: "steam-us", Name: "Steam (US)", Brand: "Steam", Region: "US", Image: imgSteamUS, Cards: long},
	}}
}

// newImageShop runs a shop with images set by images (nil: SHOW_IMAGES
// off); fetch, when set, replaces the guarded download.
func newImageShop(t *testing.T, images *images.Options) *imageShop {
	h := bottest.New(t)
	sim := resellersim.New(resellersim.Config{Seed: 1, Catalog: imageCatalog()})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		t.Fatal(err)
	}
	if images != nil && images.Fetch == nil {
		images.Fetch = client.DownloadImage
	}
	b := h.NewBot(func(o *storefront.Options) { o.Images = images })
	sh := &flowshop.Shop{
		Catalog: catalog.New(client, work.NewCache(h.Rdb.Client, h.Rdb.Prefix), time.Minute),
		Pricing: flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(h.Rdb.Client, h.Rdb.Prefix)},
		Limiter: redisstore.NewLimiter(h.Rdb.Client, h.Rdb.Prefix, 100, time.Minute),
	}
	lines.Register(b.Engine, sh)
	h.Run(b)
	t.Cleanup(h.NoViolations)
	return &imageShop{Harness: h, b: b, sim: sim, srv: srv}
}

// open starts the gift-card line in the buyer's chat.
func (s *imageShop) open() {
	s.T.Helper()
	n := len(s.Fake.CallsFor("sendMessage"))
	s.Fake.SendCommand(bottest.Chat, "giftcards", "")
	s.Wait("sendMessage", n+1)
	s.Idle(s.b)
}

func (s *imageShop) url(name string) string { return resellersim.ImageURL(s.srv.URL, name) }

// fileID is the file_id the shop cached for an image ("" none).
func (s *imageShop) fileID(name string) string {
	id, _, err := work.NewImages(s.Rdb.Client, s.Rdb.Prefix).Lookup(s.T.Context(), s.url(name))
	if err != nil {
		s.T.Fatal(err)
	}
	return id
}

// uploads counts the photos the shop uploaded (sendPhoto or
// editMessageMedia with a file part).
func (s *imageShop) uploads() int {
	n := 0
	for _, m := range []string{"sendPhoto", "editMessageMedia"} {
		for _, c := range s.Fake.CallsFor(m) {
			if len(c.Files) > 0 && c.OK() {
				n++
			}
		}
	}
	return n
}

// isPhoto reports whether m is a photo whose caption has part and which
// has a keyboard.
func isPhoto(m types.Message, part string) bool {
	return len(m.Photo) > 0 && m.Text == "" && strings.Contains(m.Caption, part) && m.ReplyMarkup != nil && len(m.ReplyMarkup.Buttons()) > 0
}

func largest(m types.Message) string { return m.Photo[len(m.Photo)-1].FileID }

// A category with an image is a photo: the screen's text is its caption,
// its keyboard the screen's, the content the upstream's image; the same
// message carries on as the buyer browses within the category.
func TestImageScreenIsPhotoWithCaptionAndKeyboard(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	brands := s.Menu()
	if len(brands.Photo) > 0 {
		t.Fatal("the brand list has no image but is a photo")
	}
	s.Tap(s.b, "Apple")
	m := s.Menu()
	if !isPhoto(m, "Apple") || m.MessageID != brands.MessageID {
		t.Fatalf("the Apple regions: %+v (menu was %d)", m, brands.MessageID)
	}
	if !bottest.HasButton(m, "US") || !bottest.HasButton(m, "TR") {
		t.Fatalf("keyboard: %s", bottest.Render(m))
	}
	if data, ok := s.Fake.FileData(largest(m)); !ok || string(data) != string(resellersim.TestPNG(imgAppleUS)) {
		t.Fatal("the photo is not the upstream's image")
	}
	s.Tap(s.b, "US")
	m = s.Menu()
	if !isPhoto(m, "Apple (US)") || m.MessageID != brands.MessageID || !strings.Contains(bottest.Render(m), "[Apple 10 USD") {
		t.Fatalf("the US cards: %s", bottest.Render(m))
	}
	if n := len(s.Fake.CallsFor("editMessageCaption")); n != 1 {
		t.Fatalf("the same image again is a caption edit: %d editMessageCaption", n)
	}
	s.Tap(s.b, "Apple 10")
	if m = s.Menu(); !isPhoto(m, "How many") || m.MessageID != brands.MessageID {
		t.Fatalf("the item's quantity screen: %s", bottest.Render(m))
	}
	if n := len(s.Fake.CallsFor("sendPhoto")); n != 0 {
		t.Fatalf("browsing sent %d new photos instead of editing", n)
	}
}

// From one category's image to another's, the photo is replaced in place
// (editMessageMedia), caption and keyboard with it.
func TestBrowsingBetweenImageScreensEditsMediaInPlace(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	first := s.Menu()
	s.Tap(s.b, "⬅") // back to the regions (the US image again)
	s.Tap(s.b, "TR")
	m := s.Menu()
	if !isPhoto(m, "Apple (TR)") || m.MessageID != first.MessageID {
		t.Fatalf("the TR cards: %+v", m)
	}
	if data, _ := s.Fake.FileData(largest(m)); string(data) != string(resellersim.TestPNG(imgAppleTR)) {
		t.Fatal("the photo was not replaced by the TR image")
	}
	edits := s.Fake.CallsFor("editMessageMedia")
	if len(edits) != 2 { // text -> US image, US image -> TR image
		t.Fatalf("%d editMessageMedia, want 2", len(edits))
	}
	last := edits[len(edits)-1]
	if last.Params["reply_markup"] == nil {
		t.Fatal("editMessageMedia without the keyboard")
	}
	if n := len(s.BotMessages(bottest.Chat)); n != 1 {
		t.Fatalf("%d bot messages in the chat, want the one menu", n)
	}
}

// From a photo screen to a text one (a category without an image, the
// brand list) the text menu is sent anew and the photo deleted; back to an
// image, the text menu becomes the photo in place.
func TestImageToTextScreenAndBack(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	s.Tap(s.b, "Apple")
	photo := s.Menu()
	s.Tap(s.b, "⬅") // the brand list: text
	text := s.Menu()
	if len(text.Photo) > 0 || text.Text == "" || text.MessageID == photo.MessageID || !bottest.HasButton(text, "Apple") {
		t.Fatalf("the brand list after a photo: %+v", text)
	}
	if _, ok := s.Fake.Message(bottest.Chat, photo.MessageID); ok {
		t.Fatal("the photo menu was left in the chat")
	}
	s.Tap(s.b, "Razer Gold") // one region: its cards at once, without an image: text, edited in place
	if m := s.Menu(); len(m.Photo) > 0 || m.MessageID != text.MessageID || !strings.Contains(m.Text, "Razer Gold") {
		t.Fatalf("the Razer cards: %+v", m)
	}
	s.Tap(s.b, "⬅")
	s.Tap(s.b, "Apple")
	if m := s.Menu(); !isPhoto(m, "Apple") || m.MessageID != text.MessageID {
		t.Fatalf("back to the image: %+v", m)
	}
	if n := len(s.BotMessages(bottest.Chat)); n != 1 {
		t.Fatalf("%d bot messages in the chat, want the one menu", n)
	}
}

// An image is uploaded once: the next time, in this chat or another, it
// goes by the cached file_id and the upstream is not asked again.
func TestImageFileIDIsCached(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	s.Tap(s.b, "Apple")
	if s.uploads() != 1 || s.fileID(imgAppleUS) == "" {
		t.Fatalf("first show: %d uploads, file_id %q", s.uploads(), s.fileID(imgAppleUS))
	}
	s.Tap(s.b, "⬅")
	s.Tap(s.b, "Apple") // again in this chat
	if s.uploads() != 1 {
		t.Fatalf("the second show uploaded again: %d uploads", s.uploads())
	}
	edits := s.Fake.CallsFor("editMessageMedia")
	if media, _ := edits[len(edits)-1].Params["media"].(map[string]any); media["media"] != s.fileID(imgAppleUS) {
		t.Fatalf("the second show is not by file_id: %v", media)
	}
	// Another buyer: a fresh menu sent by file_id.
	const other = bottest.Chat + 1
	s.Fake.SendCommand(other, "start", "gc-apple-us")
	if !s.Until(func() bool { return len(s.Fake.CallsFor("sendPhoto")) == 1 }) {
		t.Fatal("the deep link never sent its photo menu")
	}
	s.Idle(s.b)
	if c := s.Fake.CallsFor("sendPhoto")[0]; len(c.Files) > 0 || c.String("photo") != s.fileID(imgAppleUS) {
		t.Fatalf("another chat's photo: files %d, photo %q", len(c.Files), c.String("photo"))
	}
	if n := s.sim.ImageRequests(imgAppleUS); n != 1 {
		t.Fatalf("the image was downloaded %d times", n)
	}
}

// An image that cannot be had (missing, not an image, too slow) leaves a
// text screen, browsing goes on, and the URL is not fetched again for a
// while.
func TestBrokenImageLeavesTextScreen(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault resellersim.ImageFault
	}{
		{"404", resellersim.ImageNotFound},
		{"garbage", resellersim.ImageGarbage},
		{"timeout", resellersim.ImageSlow},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newImageShop(t, &images.Options{Timeout: 300 * time.Millisecond})
			s.sim.SetImageFault(imgAppleUS, c.fault)
			s.open()
			menu := s.Menu()
			s.Tap(s.b, "Apple")
			m := s.Menu()
			if len(m.Photo) > 0 || !strings.Contains(m.Text, "Apple") || m.MessageID != menu.MessageID || !bottest.HasButton(m, "US") {
				t.Fatalf("the regions with a broken image: %+v", m)
			}
			s.Tap(s.b, "US")
			if m := s.Menu(); len(m.Photo) > 0 || !strings.Contains(m.Text, "Apple (US)") {
				t.Fatalf("browsing on: %s", bottest.Render(m))
			}
			s.Tap(s.b, "Apple 10")
			if m := s.Menu(); !strings.Contains(m.Text, "How many") {
				t.Fatalf("the item: %s", bottest.Render(m))
			}
			if n := s.sim.ImageRequests(imgAppleUS); n != 1 {
				t.Fatalf("the broken image was fetched %d times, want once", n)
			}
			if s.uploads() != 0 || len(s.Fake.CallsFor("sendPhoto")) != 0 {
				t.Fatal("a broken image reached Telegram")
			}
			// The other region's image is fine: a photo.
			s.Tap(s.b, "⬅")
			s.Tap(s.b, "⬅")
			s.Tap(s.b, "TR")
			if m := s.Menu(); !isPhoto(m, "Apple (TR)") {
				t.Fatalf("a good image next to a broken one: %+v", m)
			}
		})
	}
}

// SHOW_IMAGES=false: every screen is text, no image is fetched.
func TestShowImagesOffSendsTextOnly(t *testing.T) {
	s := newImageShop(t, nil)
	s.open()
	s.Tap(s.b, "Apple")
	s.Tap(s.b, "US")
	s.Tap(s.b, "Apple 10")
	if m := s.Menu(); len(m.Photo) > 0 || !strings.Contains(m.Text, "How many") {
		t.Fatalf("with images off: %+v", m)
	}
	for _, m := range []string{"sendPhoto", "editMessageMedia", "editMessageCaption"} {
		if n := len(s.Fake.CallsFor(m)); n != 0 {
			t.Fatalf("%d %s with images off", n, m)
		}
	}
	if n := s.sim.ImageRequests(imgAppleUS); n != 0 {
		t.Fatalf("images off fetched %d images", n)
	}
}

// Telegram refusing a cached file_id: it is dropped and the image uploaded
// once more, and the new file_id is cached.
func TestRefusedFileIDUploadsAgainOnce(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	s.Tap(s.b, "Apple")
	old := s.fileID(imgAppleUS)
	s.Tap(s.b, "⬅")
	s.Fake.ForgetFile(old)
	s.Tap(s.b, "Apple")
	m := s.Menu()
	if !isPhoto(m, "Apple") {
		t.Fatalf("after a refused file_id: %+v", m)
	}
	if s.uploads() != 2 || s.sim.ImageRequests(imgAppleUS) != 2 {
		t.Fatalf("%d uploads, %d downloads; want 2 and 2", s.uploads(), s.sim.ImageRequests(imgAppleUS))
	}
	refused := 0
	for _, c := range s.Fake.CallsFor("editMessageMedia") {
		if strings.Contains(c.Description, "wrong file identifier") {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("%d refused edits, want 1", refused)
	}
	if id := s.fileID(imgAppleUS); id == "" || id == old || id != largest(m) {
		t.Fatalf("cached file_id %q (old %q, shown %q)", id, old, largest(m))
	}
}

// A screen whose text is over the 1,024-character caption limit is text,
// even with an image; the next screen of the same category, short enough,
// is the photo.
func TestLongCaptionIsTextScreen(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	s.Tap(s.b, "Steam") // one region: its long list of cards at once
	m := s.Menu()
	if len(m.Photo) > 0 || !strings.Contains(m.Text, "Steam (US)") || len([]rune(m.Text)) <= 1024 {
		t.Fatalf("a %d-character list as a photo: %+v", len([]rune(m.Text)), m)
	}
	s.Tap(s.b, "Steam Wallet Code 10")
	if m := s.Menu(); !isPhoto(m, "How many") {
		t.Fatalf("the item after a long list: %+v", m)
	}
}

// A Bot API server that will not turn a text menu into a photo (one
// before the schema allowed it): the photo is sent anew and the text menu
// deleted, so the chat still has one menu.
func TestTextMenuThatCannotBecomePhotoIsReplaced(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	text := s.Menu()
	s.Fake.FailNext("editMessageMedia", 1, 400, "Bad Request: there is no media in the message to edit", 0)
	s.Tap(s.b, "Apple")
	m := s.Menu()
	if !isPhoto(m, "Apple") || m.MessageID == text.MessageID {
		t.Fatalf("after a refused text->photo edit: %+v", m)
	}
	if _, ok := s.Fake.Message(bottest.Chat, text.MessageID); ok {
		t.Fatal("the text menu was left in the chat")
	}
	if n := len(s.BotMessages(bottest.Chat)); n != 1 {
		t.Fatalf("%d bot messages in the chat, want the one menu", n)
	}
	s.Tap(s.b, "US") // the new photo menu is edited from then on
	if m2 := s.Menu(); !isPhoto(m2, "Apple (US)") || m2.MessageID != m.MessageID {
		t.Fatalf("browsing on from the new photo: %+v", m2)
	}
}

// A Redis that lost the session's last seconds (a rollback, a failover)
// leaves it taking the menu for the text it was, while the chat shows the
// photo it became. The buyer's next press must still get a menu: the edit
// of the lost menu fails ("there is no text in the message to edit"), so
// the menu is sent anew and the photo taken away. Otherwise the press
// would show nothing, nor would any later one: the buyer would be stuck
// at the photo menu.
func TestPressAfterTheSessionLostItsPhotoMenuGetsAMenu(t *testing.T) {
	s := newImageShop(t, &images.Options{})
	s.open()
	text := s.Menu()
	rollback := s.Rdb.Snapshot(t)
	s.Tap(s.b, "Apple")
	photo := s.Menu()
	if !isPhoto(photo, "Apple") {
		t.Fatalf("the Apple screen is not a photo: %+v", photo)
	}
	rollback()
	n := len(s.BotMessages(bottest.Chat))
	s.Tap(s.b, "⬅")
	m := s.Menu()
	if len(m.Photo) > 0 || m.Text == "" || len(m.ReplyMarkup.Buttons()) == 0 {
		t.Fatalf("after the press, the newest message is not a text menu: %+v", m)
	}
	if m.MessageID == photo.MessageID && m.MessageID == text.MessageID && len(s.BotMessages(bottest.Chat)) == n {
		t.Fatal("the press showed nothing")
	}
	if _, ok := s.Fake.Message(bottest.Chat, photo.MessageID); ok && photo.MessageID != m.MessageID {
		if p, _ := s.Fake.Message(bottest.Chat, photo.MessageID); len(p.ReplyMarkup.Buttons()) > 0 {
			t.Fatal("the lost photo menu was left with its buttons")
		}
	}
}
