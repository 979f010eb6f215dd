package images

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
	"shopbot/state/redisstore/work"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"shopbot/reseller"
)

// Product images: a catalog screen with an image (flows.Screen.Image) is
// shown as a photo with the screen's text as its caption. The image is
// downloaded with the guards of operator images (reseller.DownloadImage:
// the upstream's host and RESELLER_MEDIA_HOSTS only, public addresses,
// checked redirects, a size limit) within a short timeout, checked to be a
// photo Telegram takes, uploaded once, and sent by its file_id from then
// on (work.Images, shared by every replica). An image that cannot be had
// is remembered as broken for a while and the screen is text: an image
// never blocks browsing. The rendering is in package bot (screen.go).

// Options turns product images on (storefront.Options.Images).
type Options struct {
	// Fetch downloads an image of the catalog, refusing one over limit
	// bytes; nil: the upstream client's DownloadImage (no images without
	// either).
	Fetch func(ctx context.Context, url string, limit int) (*reseller.ChatImage, error)
	// Timeout bounds the download of an image not uploaded yet, which the
	// buyer waits for; default DefaultTimeout.
	Timeout time.Duration
	// BrokenFor is how long an image that could not be shown is not tried
	// again; default DefaultBrokenFor.
	BrokenFor time.Duration
}

// Defaults of Options.
const (
	DefaultTimeout   = 3 * time.Second
	DefaultBrokenFor = 10 * time.Minute
)

// Telegram's limits on a photo: 10 MB, width plus height at most 10000, a
// ratio of at most 20; captions up to 1024 characters.
const (
	maxPhotoBytes   = 10 << 20
	maxPhotoSides   = 10000
	maxPhotoRatio   = 20
	MaxCaptionChars = 1024
)

// Images resolves a screen's image to something Telegram can show.
type Images struct {
	fetch     func(ctx context.Context, url string, limit int) (*reseller.ChatImage, error)
	store     *work.Images
	timeout   time.Duration
	brokenFor time.Duration
	log       *slog.Logger

	webOnce sync.Once
	w       *web // the Mini App's images (web.go)
}

// New returns the product images of o, fetched with o.Fetch or else
// upstream's DownloadImage (upstream may be nil), their file_ids kept in
// store; nil when they are off (o nil) or there is nothing to fetch with.
func New(o *Options, upstream *reseller.Client, store *work.Images, log *slog.Logger) *Images {
	if o == nil {
		return nil
	}
	fetch := o.Fetch
	if fetch == nil && upstream != nil {
		fetch = upstream.DownloadImage
	}
	if fetch == nil {
		log.Warn("product images are on but there is no upstream to fetch them from: screens stay text")
		return nil
	}
	p := &Images{fetch: fetch, store: store, timeout: o.Timeout, brokenFor: o.BrokenFor, log: log}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.brokenFor <= 0 {
		p.brokenFor = DefaultBrokenFor
	}
	return p
}

// Photo is an image ready to show: its file_id, or its content to upload.
type Photo struct {
	URL    string
	FileID string              // "" until uploaded
	Img    *reseller.ChatImage // the content when FileID is ""
}

// Key is what the session records of the photo the menu shows.
func (p *Photo) Key() string { return work.ImageKey(p.URL) }

// Resolve returns the photo of url, or nil when it cannot be shown now
// (marked broken, or the download failed: then it is marked).
func (p *Images) Resolve(ctx context.Context, url string) *Photo {
	id, broken, err := p.store.Lookup(ctx, url)
	switch {
	case err != nil:
		p.log.Warn("product image: read the file_id", "err", err)
		return nil
	case broken:
		return nil
	case id != "":
		return &Photo{URL: url, FileID: id}
	}
	return p.download(ctx, url)
}

// Cached returns the file_id of url once uploaded, or "": it never
// downloads (the inline mode has no chat to upload to).
func (p *Images) Cached(ctx context.Context, url string) string {
	id, broken, err := p.store.Lookup(ctx, url)
	if err != nil || broken {
		return ""
	}
	return id
}

// download fetches url within the timeout and checks it is a photo
// Telegram takes; on failure it marks url broken and returns nil.
func (p *Images) download(ctx context.Context, url string) *Photo {
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
		p.Broken(ctx, url, err)
		return nil
	}
	return &Photo{URL: url, Img: img}
}

// Broken remembers that url cannot be shown, for brokenFor.
func (p *Images) Broken(ctx context.Context, url string, why error) {
	p.log.Warn("product image cannot be shown: the screen is text", "image", work.ImageKey(url), "retry_in_s", p.brokenFor.Seconds(), "err", why)
	if err := p.store.MarkBroken(ctx, url, p.brokenFor); err != nil {
		p.log.Warn("product image: mark broken", "err", err)
	}
}

// Uploaded records the file_id Telegram gave a photo just uploaded.
func (p *Images) Uploaded(ctx context.Context, ph *Photo, fileID string) {
	if ph.FileID != "" || fileID == "" {
		return
	}
	ph.FileID, ph.Img = fileID, nil
	if err := p.store.Remember(ctx, ph.URL, fileID); err != nil {
		p.log.Warn("product image: remember the file_id", "err", err)
	}
}

// Refused handles Telegram refusing a photo's cached file_id: the file_id
// is dropped and the image downloaded again, once. It returns the photo to
// upload, or nil.
func (p *Images) Refused(ctx context.Context, ph *Photo) *Photo {
	if err := p.store.Forget(ctx, ph.URL, ph.FileID); err != nil {
		p.log.Warn("product image: forget the refused file_id", "err", err)
	}
	p.log.Info("product image: Telegram refused its file_id, uploading it again", "image", ph.Key())
	return p.download(ctx, ph.URL)
}

// UploadName is the file name a photo is uploaded under: the image's own
// name, kept to letters, digits and . _ -.
func (ph *Photo) UploadName() string {
	name := strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, ph.Img.Name)
	if name == "" || name[0] == '.' {
		name = "image" + name
	}
	return name
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

// IsWrongFileID reports Telegram refusing a file_id.
func IsWrongFileID(err error) bool {
	s := strings.ToLower(errString(err))
	return strings.Contains(s, "wrong file identifier") || strings.Contains(s, "wrong remote file identifier") ||
		strings.Contains(s, "file reference") || strings.Contains(s, "media_empty")
}

// IsPhotoRefused reports Telegram refusing the photo itself (not the
// message or the edit).
func IsPhotoRefused(err error) bool {
	s := strings.ToUpper(errString(err))
	return IsWrongFileID(err) || strings.Contains(s, "IMAGE_PROCESS_FAILED") || strings.Contains(s, "PHOTO_") ||
		strings.Contains(s, "WRONG TYPE OF THE WEB PAGE CONTENT") || strings.Contains(s, "FAILED TO GET HTTP URL CONTENT")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// CaptionLen counts an HTML text's characters as Telegram does after
// parsing: tags take none, an entity (&amp;) one, in UTF-16 code units.
func CaptionLen(html string) int {
	n := 0
	for i := 0; i < len(html); {
		switch html[i] {
		case '<':
			if j := strings.IndexByte(html[i:], '>'); j > 0 {
				i += j + 1
				continue
			}
		case '&':
			if j := strings.IndexByte(html[i:], ';'); j > 1 && j <= 10 {
				n++
				i += j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(html[i:])
		n += max(utf16.RuneLen(r), 1)
		i += size
	}
	return n
}
