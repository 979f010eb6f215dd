package lines_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"shopbot/flows"
)

// fakeReviews are products' reviews that tests set.
type fakeReviews map[string]*flows.ReviewSummary

func (f fakeReviews) ProductReviews(_ context.Context, product string) (*flows.ReviewSummary, error) {
	return f[product], nil
}

// A product's screen shows its average, how many rated it and its latest
// reviews, their text escaped; a product without reviews shows none, in
// every language.
func TestReviewsOnProductScreens(t *testing.T) {
	for _, lang := range []string{"en", "ru", "uk"} {
		t.Run(lang, func(t *testing.T) {
			w := newWorld(t)
			w.user.LanguageCode = lang
			w.shop.Reviews = fakeReviews{
				"gc-apple-us": {Count: 3, Stars: 13, Recent: []flows.ReviewLine{
					{Stars: 5, Text: "<b>x</b><script>alert(1)</script> & more"}, {Stars: 4, Text: "fast"}, {Stars: 4, Text: "not shown"},
				}},
				"key-" + gameKeyWithReviews: {Count: 1, Stars: 2},
			}
			w.do("/start gc-apple-us")
			if text := w.last.Screen.Text; !strings.Contains(text, "&lt;b&gt;x&lt;/b&gt;&lt;script&gt;") || strings.Contains(text, "<script>") || strings.Contains(text, "not shown") {
				t.Fatalf("screen = %q", text)
			}
			w.do("/start key-" + gameKeyWithReviews)
			w.do("/start gc-apple-tr")
			w.golden("reviews/product_screens_" + lang)
		})
	}
}

// gameKeyWithReviews is a game of the simulator's key catalog.
const gameKeyWithReviews = "elden-ring-global-steam"

// memRestock records watches in memory.
type memRestock struct{ watches map[string]flows.Watch }

func (m *memRestock) Watch(_ context.Context, w flows.Watch) (bool, error) {
	key := fmt.Sprint(w.User, w.Line, w.Category, w.Item)
	if _, ok := m.watches[key]; ok {
		return false, nil
	}
	m.watches[key] = w
	return true, nil
}

// A sold-out card has a button to be told when it is back: pressing it
// watches the card once (a second press says so).
func TestSoldOutCardCanBeWatched(t *testing.T) {
	w := newWorld(t)
	rs := &memRestock{watches: map[string]flows.Watch{}}
	w.shop.Restock = rs
	w.do("/start gc-apple-us")
	w.do("tap:🔔")
	w.do("tap:🔔")
	w.golden("restock/watch_a_sold_out_card")
	if len(rs.watches) != 1 {
		t.Fatalf("watches = %+v", rs.watches)
	}
	for _, got := range rs.watches {
		if got != (flows.Watch{User: 77, Chat: 77, Lang: "en", Line: "giftcards", Category: "apple-us", Item: "apple-us-5", Name: "Apple 5 USD"}) {
			t.Fatalf("watch = %+v", got)
		}
	}
}
