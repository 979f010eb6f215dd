package work_test

import (
	"shopbot/state/redisstore/work"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// A file_id is remembered per URL; a broken mark lasts its period and
// never hides a file_id; Forget drops only the file_id Telegram refused.
func TestImagesRememberForgetAndBroken(t *testing.T) {
	r := statetest.New(t)
	im := work.NewImages(r.Client, r.Prefix)
	ctx := t.Context()
	const a, b = "https://up.example/img/a.png", "https://up.example/img/b.png"
	if id, broken, err := im.Lookup(ctx, a); id != "" || broken || err != nil {
		t.Fatalf("unknown URL: %q %v %v", id, broken, err)
	}
	if err := im.Remember(ctx, a, "AgAC-1"); err != nil {
		t.Fatal(err)
	}
	if id, broken, _ := im.Lookup(ctx, a); id != "AgAC-1" || broken {
		t.Fatalf("remembered: %q %v", id, broken)
	}
	// Another replica failed to fetch it meanwhile: the file_id stays.
	if err := im.MarkBroken(ctx, a, time.Minute); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := im.Lookup(ctx, a); id != "AgAC-1" {
		t.Fatalf("a broken mark hid the file_id: %q", id)
	}
	// Forget drops only the file_id it names.
	if err := im.Forget(ctx, a, "AgAC-other"); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := im.Lookup(ctx, a); id != "AgAC-1" {
		t.Fatalf("forgot another file_id: %q", id)
	}
	if err := im.Forget(ctx, a, "AgAC-1"); err != nil {
		t.Fatal(err)
	}
	if id, broken, _ := im.Lookup(ctx, a); id != "" || broken {
		t.Fatalf("forgotten: %q %v", id, broken)
	}

	if err := im.MarkBroken(ctx, b, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, broken, _ := im.Lookup(ctx, b); !broken {
		t.Fatal("not marked broken")
	}
	r.FastForward(300 * time.Millisecond)
	if _, broken, _ := im.Lookup(ctx, b); broken {
		t.Fatal("the broken mark outlived its period")
	}
	if work.ImageKey(a) == work.ImageKey(b) || len(work.ImageKey(a)) != 32 {
		t.Fatalf("image keys: %q %q", work.ImageKey(a), work.ImageKey(b))
	}
}

// The Mini App's image names: a listed URL is found by its key, for its
// period; an unknown key finds nothing.
func TestImagesNamedForTheMiniApp(t *testing.T) {
	r := statetest.New(t)
	im := work.NewImages(r.Client, r.Prefix)
	ctx := t.Context()
	const a, b = "https://up.example/img/a.png", "https://up.example/img/b.png"
	if err := im.Name(ctx, []string{a, b}, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{a, b} {
		if got, err := im.URLOf(ctx, work.ImageKey(u)); got != u || err != nil {
			t.Fatalf("URLOf(%s) = %q, %v", u, got, err)
		}
	}
	if got, err := im.URLOf(ctx, work.ImageKey("https://up.example/other.png")); got != "" || err != nil {
		t.Fatalf("an unknown key: %q, %v", got, err)
	}
	r.FastForward(2 * time.Second)
	if got, _ := im.URLOf(ctx, work.ImageKey(a)); got != "" {
		t.Fatalf("the name outlived its period: %q", got)
	}
}
