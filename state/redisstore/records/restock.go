package records

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Restock keeps the buyers waiting for a sold-out item, under
// prefix + "{restock}:" (one slot: an item's watchers and the list of
// watched items change together):
//
//	w:<line>|<category>|<item>  HASH user -> the watch (JSON: chat, language, the item's name, since)
//	items                        ZSET the watched items' keys, scored by the first watch's unix time
//
// Take hands an item's watchers to one caller and forgets them, in one
// script: however many replicas check the item at once, each watcher is
// told once.
type Restock struct {
	rdb redis.UniversalClient
	p   string
}

// NewRestock returns the store under prefix.
func NewRestock(rdb redis.UniversalClient, prefix string) *Restock {
	return &Restock{rdb: rdb, p: prefix + "{restock}:"}
}

// RestockItem names a watched item: its line, category and item id.
type RestockItem struct {
	Line, Category, Item string
}

// Key is the item's name in the store ("<line>|<category>|<item>").
func (it RestockItem) Key() string { return it.Line + "|" + it.Category + "|" + it.Item }

// ParseRestockItem reads an item's name in the store.
func ParseRestockItem(key string) (RestockItem, bool) {
	parts := strings.SplitN(key, "|", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return RestockItem{}, false
	}
	return RestockItem{parts[0], parts[1], parts[2]}, true
}

// Watcher is a buyer waiting for an item.
type Watcher struct {
	User  int64     `json:"-"`
	Chat  int64     `json:"chat"`
	Lang  string    `json:"lang,omitempty"`
	Name  string    `json:"name"`
	Since time.Time `json:"since"`
}

func (r *Restock) watchers(key string) string { return r.p + "w:" + key }
func (r *Restock) items() string              { return r.p + "items" }

// restockWatchScript: KEYS watchers, items. ARGV: user, watch, item key,
// unix time. Returns 1 when added, 0 when the user watches it already.
var restockWatchScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], 'NX', ARGV[4], ARGV[3])
return 1`)

// Watch records that user waits for it and reports whether they did not
// already.
func (r *Restock) Watch(ctx context.Context, it RestockItem, w Watcher) (bool, error) {
	if strings.Contains(it.Line+it.Category+it.Item, "|") {
		return false, fmt.Errorf("watch %q: the names may not hold |", it.Key())
	}
	doc, err := json.Marshal(w)
	if err != nil {
		return false, err
	}
	n, err := restockWatchScript.Run(ctx, r.rdb, []string{r.watchers(it.Key()), r.items()},
		w.User, doc, it.Key(), w.Since.Unix()).Int()
	if err != nil {
		return false, fmt.Errorf("watch %s: %w", it.Key(), err)
	}
	return n == 1, nil
}

// Items returns up to n watched items, the longest watched first.
func (r *Restock) Items(ctx context.Context, n int) ([]RestockItem, error) {
	keys, err := r.rdb.ZRange(ctx, r.items(), 0, int64(n-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("list watched items: %w", err)
	}
	out := make([]RestockItem, 0, len(keys))
	for _, k := range keys {
		if it, ok := ParseRestockItem(k); ok {
			out = append(out, it)
		}
	}
	return out, nil
}

// restockTakeScript: KEYS watchers, items. ARGV: item key. Returns the
// watchers (user, watch, ...) and forgets them and the item.
var restockTakeScript = redis.NewScript(`
local all = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return all`)

// Take returns the item's watchers and forgets them: the one caller that
// gets a watcher tells them; any other gets none.
func (r *Restock) Take(ctx context.Context, it RestockItem) ([]Watcher, error) {
	flat, err := restockTakeScript.Run(ctx, r.rdb, []string{r.watchers(it.Key()), r.items()}, it.Key()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("take the watchers of %s: %w", it.Key(), err)
	}
	out := make([]Watcher, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		var w Watcher
		if json.Unmarshal([]byte(flat[i+1]), &w) != nil {
			continue
		}
		if _, err := fmt.Sscan(flat[i], &w.User); err != nil {
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

// Drop forgets an item nobody can buy any more (gone from the catalog)
// with its watchers.
func (r *Restock) Drop(ctx context.Context, it RestockItem) error {
	_, err := r.Take(ctx, it)
	return err
}
