package reseller

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// DownloadImage (catalog images) has DownloadChatImage's guards with its
// own size limit: an image over the limit is refused, so is one on a host
// that is neither the API's nor a declared media host, or at an internal
// address.
func TestDownloadImageGuardsAndLimit(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("an internal address was fetched: %s", r.URL)
	}))
	t.Cleanup(internal.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/images/a.png":
			w.Write(png)
		case "/api/v1/images/redirect":
			http.Redirect(w, r, internal.URL+"/metrics", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(api.Close)
	c, err := New(api.URL+"/api/v1", testKey)
	if err != nil {
		t.Fatal(err)
	}
	img, err := c.DownloadImage(t.Context(), api.URL+"/api/v1/images/a.png", 1<<20)
	if err != nil || img.Name != "a.png" || img.ContentType != "image/png" {
		t.Fatalf("an image on the API's host: %+v, %v", img, err)
	}
	var ve *ValidationError
	if _, err := c.DownloadImage(t.Context(), api.URL+"/api/v1/images/a.png", len(png)-1); !errors.As(err, &ve) {
		t.Fatalf("an image over the limit: %v", err)
	}
	for _, ref := range []string{internal.URL + "/metrics", api.URL + "/api/v1/images/redirect", "http://169.254.169.254/latest/meta-data/"} {
		if _, err := c.DownloadImage(t.Context(), ref, 1<<20); !errors.Is(err, ErrImageRefused) {
			t.Errorf("%s: %v, want ErrImageRefused", ref, err)
		}
	}
}
