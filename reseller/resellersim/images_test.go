package resellersim

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net/http"
	"shopbot/reseller/resellersim/simcatalog"
	"testing"
	"time"
)

// The catalog's own images are URLs on the host the API was asked on, and
// are served there as deterministic PNGs without the key.
func TestCatalogImagesAreServedBySim(t *testing.T) {
	e := newEnv(t, Config{})
	offers := e.get("/gift-cards/categories/" + simcatalog.DemoGiftCategory + "/cards")
	url, _ := offers["image"].(string)
	want := ImageURL(e.srv.URL, "gift/apple.png")
	eq(t, "image URL", url, want)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	eq(t, "status", resp.StatusCode, http.StatusOK)
	eq(t, "content type", resp.Header.Get("Content-Type"), "image/png")
	if !bytes.Equal(data, TestPNG("gift/apple.png")) || !bytes.Equal(TestPNG("gift/apple.png"), TestPNG("gift/apple.png")) {
		t.Fatal("the image is not the deterministic PNG")
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	eq(t, "requests", e.sim.ImageRequests("gift/apple.png"), 1)
	if r, _ := http.Get(ImageURL(e.srv.URL, "gift/unknown.png")); r.StatusCode != http.StatusNotFound {
		t.Fatalf("an image the catalog does not name: %d", r.StatusCode)
	}
}

func TestImageFaults(t *testing.T) {
	e := newEnv(t, Config{})
	url := ImageURL(e.srv.URL, "gift/apple.png")

	e.sim.SetImageFault("gift/apple.png", ImageNotFound)
	if r, _ := http.Get(url); r.StatusCode != http.StatusNotFound {
		t.Fatalf("not found: %d", r.StatusCode)
	}

	e.sim.SetImageFault("gift/apple.png", ImageGarbage)
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if _, err := png.Decode(bytes.NewReader(data)); r.StatusCode != http.StatusOK || err == nil {
		t.Fatalf("garbage: %d, decodes %v", r.StatusCode, err == nil)
	}

	e.sim.SetImageFault("gift/apple.png", ImageSlow)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a slow image answered")
	}

	e.sim.SetImageFault("gift/apple.png", ImageOK)
	if r, _ := http.Get(url); r.StatusCode != http.StatusOK {
		t.Fatalf("healed: %d", r.StatusCode)
	}
	eq(t, "requests", e.sim.ImageRequests("gift/apple.png"), 4)
}
