package images_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"shopbot/bot/images"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
)

// The Mini App's images: a key the app listed is downloaded once however
// many ask at the same time, then served from memory; a key it did not list,
// or not a key at all, fetches nothing; an image that cannot be had is
// ErrNoImage and marked broken (the chat's screens skip it too), and is not
// fetched again meanwhile.
func TestWebImagesOneDownloadPerKey(t *testing.T) {
	r := statetest.New(t)
	store := work.NewImages(r.Client, r.Prefix)
	var fetches atomic.Int32
	release := make(chan struct{})
	fetch := func(ctx context.Context, url string, limit int) (*reseller.ChatImage, error) {
		fetches.Add(1)
		<-release
		if url == "https://cdn.example/broken.png" {
			return &reseller.ChatImage{Data: []byte("not an image")}, nil
		}
		return &reseller.ChatImage{Data: resellersim.TestPNG(url), Name: "a.png"}, nil
	}
	im := images.New(&images.Options{Fetch: fetch}, nil, store, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	const good, broken = "https://cdn.example/a.png", "https://cdn.example/broken.png"
	keys := im.Names(ctx, []string{good, "", broken})
	if keys[0] != work.ImageKey(good) || keys[1] != "" || keys[2] != work.ImageKey(broken) {
		t.Fatalf("keys %q", keys)
	}

	var wg sync.WaitGroup
	got := make([]*images.WebImage, 20)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			img, err := im.Image(ctx, keys[0])
			if err != nil {
				t.Error(err)
			}
			got[i] = img
		}()
	}
	close(release)
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d downloads for 20 requests at once", n)
	}
	if got[0] == nil || got[0].Type != "image/png" || got[0].ETag == "" || string(got[0].Data) != string(resellersim.TestPNG(good)) {
		t.Fatalf("image %+v", got[0])
	}
	if _, err := im.Image(ctx, keys[0]); err != nil || fetches.Load() != 1 {
		t.Fatalf("again: %v, %d downloads", err, fetches.Load())
	}

	for _, key := range []string{work.ImageKey("https://cdn.example/never-listed.png"), "../../etc/passwd", ""} {
		if _, err := im.Image(ctx, key); !errors.Is(err, images.ErrNoImage) {
			t.Fatalf("key %q: %v", key, err)
		}
	}
	if _, err := im.Image(ctx, keys[2]); !errors.Is(err, images.ErrNoImage) {
		t.Fatalf("a broken image: %v", err)
	}
	if _, bad, _ := store.Lookup(ctx, broken); !bad {
		t.Fatal("a broken image is not marked for the chat")
	}
	before := fetches.Load()
	if _, err := im.Image(ctx, keys[2]); !errors.Is(err, images.ErrNoImage) || fetches.Load() != before {
		t.Fatalf("a broken image again: %v, fetched %d more", err, fetches.Load()-before)
	}
	if before != 2 {
		t.Fatalf("%d downloads in all, want 2", before)
	}
}
