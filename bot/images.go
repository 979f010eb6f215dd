package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG photos
	_ "image/png"  // DecodeConfig of PNG photos
	"log/slog"
	"net/http"
	"strings"
	"time"

	"shopbot/reseller"
	"shopbot/state"
)

// Product images: a catalog screen with an image (flows.Screen.Image) is
// shown as a photo with the screen's text as its caption. The image is
// downloaded with the guards of operator images (reseller.DownloadImage:
// the upstream's host and RESELLER_MEDIA_HOSTS only, public addresses,
// checked redirects, a size limit) within a short timeout, checked to be a
// photo Telegram takes, uploaded once, and sent by its file_id from then
// on (state.Images, shared by every replica). An image that cannot be had
// is remembered as broken for a while and the screen is text: an image
// never blocks browsing. The rendering is in screen.go.

// ImageOptions turns product images on (Options.Images).
type ImageOptions struct {
	// Fetch downloads an image of the catalog, refusing one over limit
	// bytes; nil: Options.Reseller's DownloadImage (no images without
	// either).
	Fetch func(ctx context.Context, url string, limit int) (*reseller.ChatImage, error)
	// Timeout bounds the download of an image not uploaded yet, which the
	// buyer waits for; default DefaultImageTimeout.
	Timeout time.Duration
	// BrokenFor is how long an image that could not be shown is not tried
	// again; default DefaultImageBrokenFor.
	BrokenFor time.Duration
}

// Defaults of ImageOptions.
const (
	DefaultImageTimeout   = 3 * time.Second
	DefaultImageBrokenFor = 10 * time.Minute
)

// Telegram's limits on a photo: 10 MB, width plus height at most 10000, a
// ratio of at most 20; captions up to 1024 characters.
const (
	maxPhotoBytes   = 10 << 20
	maxPhotoSides   = 10000
	maxPhotoRatio   = 20
	maxCaptionChars = 1024
)

// productImages resolves a screen's image to something Telegram can show.
type productImages struct {
	fetch     func(ctx context.Context, url string, limit int) (*reseller.ChatImage, error)
	store     *state.Images
	timeout   time.Duration
	brokenFor time.Duration
	log       *slog.Logger
}

// newProductImages returns the product images of opts, or nil when they
// are off.
func newProductImages(opts Options, store *state.Images) *productImages {
	o := opts.Images
	if o == nil {
		return nil
	}
	fetch := o.Fetch
	if fetch == nil && opts.Reseller != nil {
		fetch = opts.Reseller.DownloadImage
	}
	if fetch == nil {
		opts.Logger.Warn("product images are on but there is no upstream to fetch them from: screens stay text")
		return nil
	}
	p := &productImages{fetch: fetch, store: store, timeout: o.Timeout, brokenFor: o.BrokenFor, log: opts.Logger}
	if p.timeout <= 0 {
		p.timeout = DefaultImageTimeout
	}
	if p.brokenFor <= 0 {
		p.brokenFor = DefaultImageBrokenFor
	}
	return p
}

// photo is an image ready to show: its file_id, or its content to upload.
type photo struct {
	url    string
	fileID string              // "" until uploaded
	img    *reseller.ChatImage // the content when fileID is ""
}

// key is what the session records of the photo the menu shows.
func (p *photo) key() string { return state.ImageKey(p.url) }

// resolve returns the photo of url, or nil when it cannot be shown now
// (marked broken, or the download failed: then it is marked).
func (p *productImages) resolve(ctx context.Context, url string) *photo {
	id, broken, err := p.store.Lookup(ctx, url)
	switch {
	case err != nil:
		p.log.Warn("product image: read the file_id", "err", err)
		return nil
	case broken:
		return nil
	case id != "":
		return &photo{url: url, fileID: id}
	}
	return p.download(ctx, url)
}

// download fetches url within the timeout and checks it is a photo
// Telegram takes; on failure it marks url broken and returns nil.
func (p *productImages) download(ctx context.Context, url string) *photo {
	dctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	img, err := p.fetch(dctx, url, maxPhotoBytes)
	if err == nil {
		err = checkPhoto(img)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // the update itself is over: not the image's fault
		}
		p.broken(ctx, url, err)
		return nil
	}
	return &photo{url: url, img: img}
}

// broken remembers that url cannot be shown, for brokenFor.
func (p *productImages) broken(ctx context.Context, url string, why error) {
	p.log.Warn("product image cannot be shown: the screen is text", "image", state.ImageKey(url), "retry_in_s", p.brokenFor.Seconds(), "err", why)
	if err := p.store.MarkBroken(ctx, url, p.brokenFor); err != nil {
		p.log.Warn("product image: mark broken", "err", err)
	}
}

// uploaded records the file_id Telegram gave a photo just uploaded.
func (p *productImages) uploaded(ctx context.Context, ph *photo, fileID string) {
	if ph.fileID != "" || fileID == "" {
		return
	}
	ph.fileID, ph.img = fileID, nil
	if err := p.store.Remember(ctx, ph.url, fileID); err != nil {
		p.log.Warn("product image: remember the file_id", "err", err)
	}
}

// refused handles Telegram refusing a photo's cached file_id: the file_id
// is dropped and the image downloaded again, once. It returns the photo to
// upload, or nil.
func (p *productImages) refused(ctx context.Context, ph *photo) *photo {
	if err := p.store.Forget(ctx, ph.url, ph.fileID); err != nil {
		p.log.Warn("product image: forget the refused file_id", "err", err)
	}
	p.log.Info("product image: Telegram refused its file_id, uploading it again", "image", ph.key())
	return p.download(ctx, ph.url)
}

// errNotPhoto is a downloaded image Telegram would not take as a photo.
var errNotPhoto = errors.New("not a photo Telegram takes")

// checkPhoto checks that img is a JPEG, PNG or WebP image (by its content,
// whatever the server said) within Telegram's photo limits.
func checkPhoto(img *reseller.ChatImage) error {
	ct := http.DetectContentType(img.Data)
	switch ct {
	case "image/jpeg", "image/png":
		cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data))
		if err != nil {
			return fmt.Errorf("%w: %s that does not decode: %v", errNotPhoto, ct, err)
		}
		w, h := cfg.Width, cfg.Height
		if w <= 0 || h <= 0 || w+h > maxPhotoSides || w > maxPhotoRatio*h || h > maxPhotoRatio*w {
			return fmt.Errorf("%w: %dx%d", errNotPhoto, w, h)
		}
	case "image/webp":
	default:
		return fmt.Errorf("%w: the content is %s", errNotPhoto, ct)
	}
	if len(img.Data) > maxPhotoBytes {
		return fmt.Errorf("%w: %d bytes", errNotPhoto, len(img.Data))
	}
	img.ContentType = ct
	return nil
}

// isWrongFileID reports Telegram refusing a file_id.
func isWrongFileID(err error) bool {
	s := strings.ToLower(errString(err))
	return strings.Contains(s, "wrong file identifier") || strings.Contains(s, "wrong remote file identifier") ||
		strings.Contains(s, "file reference") || strings.Contains(s, "media_empty")
}

// isPhotoRefused reports Telegram refusing the photo itself (not the
// message or the edit).
func isPhotoRefused(err error) bool {
	s := strings.ToUpper(errString(err))
	return isWrongFileID(err) || strings.Contains(s, "IMAGE_PROCESS_FAILED") || strings.Contains(s, "PHOTO_") ||
		strings.Contains(s, "WRONG TYPE OF THE WEB PAGE CONTENT") || strings.Contains(s, "FAILED TO GET HTTP URL CONTENT")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
