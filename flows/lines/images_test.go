package lines_test

import (
	"strings"
	"testing"

	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// The screens of a category with an image (its items, one item's quantity
// or fields, a brand's regions) carry the catalog's image for the host to
// show; lists of many categories, prompts and the order summary do not.
func TestCatalogScreensCarryTheirImage(t *testing.T) {
	simImage := func(t *testing.T, image string) {
		t.Helper()
		if !strings.Contains(image, resellersim.PathPrefix+resellersim.ImagesPath) || !strings.HasSuffix(image, ".png") {
			t.Fatalf("image %q is not the simulator's", image)
		}
	}
	t.Run("giftcards", func(t *testing.T) {
		w := newWorld(t)
		w.do("/giftcards")
		if img := w.last.Screen.Image; img != "" {
			t.Fatalf("the brand list has image %q", img)
		}
		w.do("tap:Apple")
		if img := w.last.Screen.Image; img != fakeAppleImage {
			t.Fatalf("the brand's regions: image %q", img)
		}
		w.do("tap:US")
		if img := w.last.Screen.Image; img != fakeAppleImage {
			t.Fatalf("the cards: image %q", img)
		}
		w.do("tap:Apple 10")
		if img := w.last.Screen.Image; img != fakeAppleImage {
			t.Fatalf("the quantity: image %q", img)
		}
		w.do("2")
		if img := w.last.Screen.Image; img != "" {
			t.Fatalf("the order summary has image %q", img)
		}
	})
	t.Run("keys", func(t *testing.T) {
		w := newWorld(t)
		w.do("/start key-" + simcatalog.DemoGame)
		simImage(t, w.last.Screen.Image)
		w.do("tap:ELDEN RING Standard")
		simImage(t, w.last.Screen.Image)
	})
	t.Run("games", func(t *testing.T) {
		w := newWorld(t)
		w.do("/start tu-" + simcatalog.DemoTopUpCategory)
		simImage(t, w.last.Screen.Image)
		w.do("tap:60 UC")
		simImage(t, w.last.Screen.Image) // the fields step
	})
	t.Run("services", func(t *testing.T) {
		w := newWorld(t)
		w.do("/services")
		if img := w.last.Screen.Image; img != "" {
			t.Fatalf("the service list has image %q", img)
		}
		w.do("/start svc-" + simcatalog.DemoManualService)
		simImage(t, w.last.Screen.Image) // from the service list: the offers carry none
		w.do("tap:500 TRY")
		simImage(t, w.last.Screen.Image)
	})
}
