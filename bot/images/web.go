package images

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"shopbot/state/redisstore/work"
)

// The Mini App's images. The page never sees the upstream's image URL: the
// app lists an image by its key (work.ImageKey, a hash of the URL), which
// Names records in Redis (work.Images.Name), and the browser asks the
// shop's own address for it (same origin: the CSP allows images from
// nowhere else). Image finds the URL of a key the app listed, downloads it
// with the chat's guards and checks (the same fetch, timeout, photo check
// and broken marks, shared with the chat's screens), and keeps it in the
// process's memory; so an image is downloaded once per replica, however
// many buyers look at it, and a key nobody listed fetches nothing.

// ErrNoImage is an image the app cannot show: a key it did not list, or
// an image that cannot be had now (marked broken, or the download
// failed). The page shows its placeholder.
var ErrNoImage = errors.New("no such image")

// What the app's images may take.
const (
	// WebCacheBytes bounds the images one process keeps in memory (the
	// least recently shown go first).
	WebCacheBytes = 32 << 20
	// webFetches is how many images one process downloads at once.
	webFetches = 4
	// webRename is how long a process trusts that it recorded a key: it
	// records it again after that (a Redis that lost it has it back).
	webRename = time.Hour
)

// WebImage is an image as the app serves it.
type WebImage struct {
	Data []byte
	Type string // image/jpeg, image/png or image/webp
	ETag string // a quoted hash of the content
}

// web is the app's side of Images: what this process named, the images it
// keeps, the downloads under way.
type web struct {
	mu       sync.Mutex
	named    map[string]time.Time // key -> when to name it again
	lru      *list.List           // of *cached, most recent first
	cached   map[string]*list.Element
	bytes    int
	inflight map[string]*flight
	sem      chan struct{}
}

type cached struct {
	key string
	img *WebImage
}

// flight is one download others wait for.
type flight struct {
	done chan struct{}
	img  *WebImage
	err  error
}

func (p *Images) webState() *web {
	p.webOnce.Do(func() {
		p.w = &web{named: map[string]time.Time{}, lru: list.New(), cached: map[string]*list.Element{},
			inflight: map[string]*flight{}, sem: make(chan struct{}, webFetches)}
	})
	return p.w
}

// Names returns the key of each of urls ("" for an empty one) and records
// in Redis those this process has not recorded lately, in one round trip.
// A failure to record is logged: those images show their placeholder.
func (p *Images) Names(ctx context.Context, urls []string) []string {
	w := p.webState()
	keys := make([]string, len(urls))
	var todo []string
	now := time.Now()
	w.mu.Lock()
	if len(w.named) > 100_000 {
		w.named = map[string]time.Time{} // a bound, not a cache: names again
	}
	for i, u := range urls {
		if u == "" {
			continue
		}
		keys[i] = work.ImageKey(u)
		if now.Before(w.named[keys[i]]) {
			continue
		}
		w.named[keys[i]] = now.Add(webRename)
		todo = append(todo, u)
	}
	w.mu.Unlock()
	if err := p.store.Name(ctx, todo, work.WebNameTTL); err != nil {
		p.log.Warn("mini app images: record the names", "n", len(todo), "err", err)
		w.mu.Lock()
		for _, u := range todo {
			delete(w.named, work.ImageKey(u))
		}
		w.mu.Unlock()
	}
	return keys
}

// ValidKey reports whether key has the form of an image key.
func ValidKey(key string) bool {
	if len(key) != 32 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Image returns the image of key: from memory, else downloaded (once for
// all who ask meanwhile). It is ErrNoImage for a key the app never listed
// and for an image that cannot be had.
func (p *Images) Image(ctx context.Context, key string) (*WebImage, error) {
	if !ValidKey(key) {
		return nil, ErrNoImage
	}
	w := p.webState()
	w.mu.Lock()
	if e := w.cached[key]; e != nil {
		w.lru.MoveToFront(e)
		img := e.Value.(*cached).img
		w.mu.Unlock()
		return img, nil
	}
	f := w.inflight[key]
	if f == nil {
		f = &flight{done: make(chan struct{})}
		w.inflight[key] = f
		go p.fly(context.WithoutCancel(ctx), key, f)
	}
	w.mu.Unlock()
	select {
	case <-f.done:
		return f.img, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fly downloads key's image for everyone waiting on f and keeps it.
func (p *Images) fly(ctx context.Context, key string, f *flight) {
	w := p.w
	f.img, f.err = p.fetchWeb(ctx, key, w)
	w.mu.Lock()
	delete(w.inflight, key)
	if f.err == nil {
		w.keep(key, f.img)
	}
	w.mu.Unlock()
	close(f.done)
}

func (p *Images) fetchWeb(ctx context.Context, key string, w *web) (*WebImage, error) {
	url, err := p.store.URLOf(ctx, key)
	if err != nil {
		p.log.Warn("mini app images: find the image's URL", "image", key, "err", err)
		return nil, err
	}
	if url == "" {
		return nil, ErrNoImage
	}
	if _, broken, err := p.store.Lookup(ctx, url); err != nil || broken {
		return nil, cmpErr(err, ErrNoImage)
	}
	select {
	case w.sem <- struct{}{}:
		defer func() { <-w.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	dctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	img, err := p.fetch(dctx, url, maxPhotoBytes)
	if err == nil {
		err = checkPhoto(img)
	}
	if err != nil {
		p.Broken(ctx, url, err) // the chat's screens skip it too, for a while
		return nil, ErrNoImage
	}
	sum := sha256.Sum256(img.Data)
	return &WebImage{Data: img.Data, Type: img.ContentType, ETag: `"` + hex.EncodeToString(sum[:8]) + `"`}, nil
}

// keep adds an image to the memory, dropping the least recently shown
// beyond WebCacheBytes; one over a quarter of it is not kept. Under w.mu.
func (w *web) keep(key string, img *WebImage) {
	n := len(img.Data)
	if n > WebCacheBytes/4 || w.cached[key] != nil {
		return
	}
	w.cached[key] = w.lru.PushFront(&cached{key: key, img: img})
	w.bytes += n
	for w.bytes > WebCacheBytes {
		last := w.lru.Back()
		c := last.Value.(*cached)
		w.lru.Remove(last)
		delete(w.cached, c.key)
		w.bytes -= len(c.img.Data)
	}
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
