package webapp

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"shopbot/flows/shop"
)

// searchPage is how many products one page of a search across the lines
// holds.
const searchPage = 20

// foundJSON is one product a search found: open it with its line and
// category.
type foundJSON struct {
	Line      string `json:"line"`
	LineLabel string `json:"line_label"`
	Category  string `json:"category"`
	Name      string `json:"name"`
	From      *price `json:"from"`
	Image     string `json:"image,omitempty"` // img/<key>
}

// search searches every line at once (?q=, ?from= the next page's offset)
// with the inline mode's search (shop.Shop.SearchAll): the products with
// their lowest price, each opened on its category's page.
func (a *App) search(q *request) (any, *apiError) {
	env := q.env
	text := strings.TrimSpace(q.r.URL.Query().Get("q"))
	if text == "" || utf8.RuneCountInString(text) > shop.MaxQuery {
		return nil, fail(http.StatusBadRequest, "bad_query", env, "search.bad")
	}
	from, _ := strconv.Atoi(q.r.URL.Query().Get("from"))
	ctx := q.r.Context()
	if err := a.d.Shop.Allow(ctx, env); err != nil {
		return nil, a.catalogError(q, err)
	}
	found, next, err := a.d.Shop.SearchAll(ctx, text, min(max(from, 0), 500), searchPage)
	if err != nil {
		return nil, a.catalogError(q, err)
	}
	out := make([]foundJSON, 0, len(found))
	urls := make([]string, len(found))
	for i, f := range found {
		urls[i] = f.Image
	}
	images := a.imagePaths(ctx, urls)
	for i, f := range found {
		usd := a.d.Shop.Pricing.ShopUSD(f.Line, f.LowestUSD)
		out = append(out, foundJSON{Line: f.Line, LineLabel: plain(env.T("line." + f.Line)), Category: f.Category, Name: f.Name,
			From: priceOf(env, usd, a.d.Shop.Pricing.Stars(usd)), Image: images[i]})
	}
	return map[string]any{"results": out, "next": next}, nil
}
