package records_test

import (
	"sync"
	"testing"
	"time"

	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

// Watchers are handed out once, whatever callers race to take them.
func TestRestockWatchersTakenOnce(t *testing.T) {
	r := statetest.New(t)
	st := records.NewRestock(r.Client, r.Prefix)
	ctx := t.Context()
	card := records.RestockItem{Line: "giftcards", Category: "apple-us", Item: "apple-us-25"}
	key := records.RestockItem{Line: "keys", Category: "elden", Item: "deluxe"}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, u := range []int64{1, 2, 3} {
		if ok, err := st.Watch(ctx, card, records.Watcher{User: u, Chat: u, Lang: "ru", Name: "Apple 25", Since: at}); !ok || err != nil {
			t.Fatalf("watch %d: %v, %v", u, ok, err)
		}
	}
	if ok, _ := st.Watch(ctx, card, records.Watcher{User: 1, Chat: 1, Since: at}); ok {
		t.Fatal("watched twice")
	}
	_, _ = st.Watch(ctx, key, records.Watcher{User: 1, Chat: 1, Since: at.Add(time.Hour)})
	if _, err := st.Watch(ctx, records.RestockItem{Line: "keys", Category: "a|b", Item: "c"}, records.Watcher{User: 1}); err == nil {
		t.Fatal("a name with | accepted")
	}
	items, err := st.Items(ctx, 10)
	if err != nil || len(items) != 2 || items[0] != card || items[1] != key {
		t.Fatalf("items = %+v, %v", items, err)
	}

	var mu sync.Mutex
	got := map[int64]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, err := st.Take(ctx, card)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, w := range ws {
				got[w.User]++
				if w.Name != "Apple 25" || w.Lang != "ru" || w.Chat != w.User || !w.Since.Equal(at) {
					t.Errorf("watcher = %+v", w)
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(got) != 3 || got[1] != 1 || got[2] != 1 || got[3] != 1 {
		t.Fatalf("handed out %v, want each of 1, 2, 3 once", got)
	}
	if items, _ = st.Items(ctx, 10); len(items) != 1 || items[0] != key {
		t.Fatalf("items after the take = %+v", items)
	}
	// Watching again after being told starts a new watch.
	if ok, _ := st.Watch(ctx, card, records.Watcher{User: 1, Chat: 1, Since: at}); !ok {
		t.Fatal("not watching again after the take")
	}
}
