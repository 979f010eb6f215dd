package resellersim

import (
	"bytes"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"net/http"

	"shopbot/reseller/resellersim/internal/wire"
)

// Catalog images. A catalog entry's Image is either an absolute URL, served
// as it is, or the name of an image the Sim serves itself (for example
// "gift/apple.png"): the API then gives the URL
// <scheme>://<host>/api/v1/images/<name> on the host the request came to.
// Such an image is a small PNG generated from its name (the same bytes
// every time); SetImageFault breaks one for tests.

// ImagesPath is where, under PathPrefix, a Sim serves its own images.
const ImagesPath = wire.ImagesPath

// ImageFault is how a Sim serves one of its images.
type ImageFault int

const (
	// ImageOK serves the image.
	ImageOK ImageFault = iota
	// ImageNotFound answers 404.
	ImageNotFound
	// ImageGarbage answers 200 with Content-Type image/png and bytes that
	// are no image.
	ImageGarbage
	// ImageSlow holds the request until the client gives up (its context
	// ends): a download that never finishes.
	ImageSlow
)

// SetImageFault makes the Sim serve the image named name (as in the
// catalog, "gift/apple.png") with fault f; ImageOK serves it again.
func (s *Sim) SetImageFault(name string, f ImageFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.imageFaults == nil {
		s.imageFaults = map[string]ImageFault{}
	}
	s.imageFaults[name] = f
}

// ImageRequests reports how many times the image named name was requested.
func (s *Sim) ImageRequests(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.imageHits[name]
}

// ImageURL is the URL the API gives for the image named name when the Sim
// is served at base (for example an httptest server's URL).
func ImageURL(base, name string) string { return wire.ImageURL(base, name) }

// serveImage answers GET /api/v1/images/<name>: the generated PNG of an
// image the catalog names, or what SetImageFault set. It needs no key, like
// a CDN.
func (s *Sim) serveImage(w http.ResponseWriter, r *http.Request, name string) {
	s.mu.Lock()
	known := s.cat.HasImage(name)
	fault := s.imageFaults[name]
	if s.imageHits == nil {
		s.imageHits = map[string]int{}
	}
	s.imageHits[name]++
	s.mu.Unlock()
	switch {
	case !known || fault == ImageNotFound:
		wire.WriteError(w, http.StatusNotFound, "not_found", "image not found")
	case fault == ImageGarbage:
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("this is not an image, whatever the header says\n"))
	case fault == ImageSlow:
		<-r.Context().Done()
	default:
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Write(TestPNG(name))
	}
}

// TestPNG is the image a Sim serves under name: a 96x96 PNG in two colours
// picked by the name's hash, the same bytes for the same name.
func TestPNG(name string) []byte {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	bg := color.RGBA{R: uint8(v), G: uint8(v >> 8), B: uint8(v >> 16), A: 255}
	fg := color.RGBA{R: 255 - bg.R, G: 255 - bg.G, B: 255 - bg.B, A: 255}
	const size = 96
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			c := bg
			if x > size/4 && x < 3*size/4 && y > size/4 && y < 3*size/4 {
				c = fg
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // an in-memory image always encodes
	return buf.Bytes()
}
