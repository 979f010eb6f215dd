package lines_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"shopbot/flows"
	"shopbot/flows/golden"
)

// inline runs an inline query through the engine and renders its answer.
func (w *world) inline(text, offset string) (*flows.InlineAnswer, string) {
	w.t.Helper()
	a, err := w.e.Inline(context.Background(), flows.InlineQuery{Text: text, Offset: offset, User: w.user, Now: w.now})
	if err != nil {
		w.t.Fatalf("inline %q: %v", text, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@bot %s (offset %q) -> next %q, limited %v\n", text, offset, a.Next, a.Limited)
	for _, c := range a.Cards {
		fmt.Fprintf(&b, "  %s | %s | %s | image %q\n    %s\n", c.ID, c.Title, c.Description, c.Image, strings.ReplaceAll(c.Text, "\n", "\n    "))
	}
	return a, b.String()
}

// The inline search lists matching products across the lines, from the
// same catalog the chat browses, with the lowest price on sale and the deep
// link that opens each.
func TestInlineSearchAcrossLines(t *testing.T) {
	w := newWorld(t)
	w.shop.Catalog = simCatalog(t)
	var out strings.Builder
	for _, q := range []string{"elden", "apple", "pubg", "nothing like it"} {
		_, s := w.inline(q, "")
		out.WriteString(s + "\n")
	}
	a, s := w.inline("", "")
	out.WriteString(s + "\n")
	if a.Next != "10" || len(a.Cards) == 0 {
		t.Fatalf("empty query: next %q, %d cards", a.Next, len(a.Cards))
	}
	_, s = w.inline("", a.Next)
	out.WriteString(s)
	golden.Check(t, "inline/search", simHost.ReplaceAllString(out.String(), "http://sim"))

	for _, c := range a.Cards {
		if strings.Contains(c.Text, "<") && !strings.Contains(c.Text, "<b>") {
			t.Errorf("a name is not escaped: %q", c.Text)
		}
		if _, ok := flows.ProductLine(c.Link); !ok {
			t.Errorf("card %q links to %q, not a product", c.Title, c.Link)
		}
	}
}

var simHost = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// A forged offset finds nothing; inline queries have a limit of their own.
func TestInlineOffsetAndLimit(t *testing.T) {
	w := newWorld(t)
	for _, off := range []string{"x", "-1", "100000"} {
		if a, _ := w.inline("", off); len(a.Cards) != 0 || a.Next != "" {
			t.Errorf("offset %q: %+v", off, a)
		}
	}
	w.shop.InlineLimiter = &countLimiter{Limit: 1}
	if a, _ := w.inline("apple", ""); a.Limited || len(a.Cards) == 0 {
		t.Fatalf("first query: %+v", a)
	}
	if a, _ := w.inline("apple", ""); !a.Limited || len(a.Cards) != 0 {
		t.Fatalf("second query is over the limit: %+v", a)
	}
}

// A catalog that fails answers with its error (the host says nothing
// found), not with a card.
func TestInlineCatalogDown(t *testing.T) {
	w := newWorld(t)
	w.cat.Err = errors.New("upstream down")
	w.cat.Catalog = failing{w.cat.Catalog}
	_, err := w.e.Inline(context.Background(), flows.InlineQuery{Text: "apple", User: w.user, Now: w.now})
	if err == nil {
		t.Fatal("no error")
	}
}

// failing is a catalog whose every list fails.
type failing struct{ flows.Catalog }

var errDown = errors.New("down")

func (failing) GameKeys(context.Context, string, string, string) ([]flows.Category, bool, error) {
	return nil, false, errDown
}
func (failing) StoreGames(context.Context) ([]flows.Category, bool, error) {
	return nil, false, errDown
}
func (failing) TopUpSearch(context.Context, string) ([]flows.Category, bool, error) {
	return nil, false, errDown
}
func (failing) ManualServices(context.Context) ([]flows.Category, bool, error) {
	return nil, false, errDown
}
