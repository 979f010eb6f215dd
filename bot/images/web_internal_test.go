package images

import (
	"container/list"
	"testing"
)

// The app's images in memory: the least recently shown go first beyond
// WebCacheBytes, and one image over a quarter of it is not kept.
func TestWebCacheDropsTheLeastRecentlyShown(t *testing.T) {
	w := &web{lru: list.New(), cached: map[string]*list.Element{}}
	img := func(n int) *WebImage { return &WebImage{Data: make([]byte, n)} }
	quarter := WebCacheBytes / 4
	w.keep("a", img(quarter))
	w.keep("b", img(quarter))
	w.keep("c", img(quarter))
	w.keep("d", img(quarter))
	w.lru.MoveToFront(w.cached["a"]) // "a" shown again: "b" is now the oldest
	w.keep("e", img(1))
	if w.cached["b"] != nil || w.cached["a"] == nil || w.cached["e"] == nil || w.bytes > WebCacheBytes {
		t.Fatalf("after one too many: %v, %d bytes", keysOf(w), w.bytes)
	}
	w.keep("huge", img(quarter+1))
	if w.cached["huge"] != nil {
		t.Fatal("an image over a quarter of the memory was kept")
	}
}

func keysOf(w *web) []string {
	var out []string
	for e := w.lru.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*cached).key)
	}
	return out
}
