package flows

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"shopbot/locales"
)

// The steps the catalog lines share: a deep link into one category, a
// search text, the lists of brands, of a brand's categories and of search
// results, and the buttons every list step takes.

// maxQuery caps a search text.
const maxQuery = 64

// loader reads one category's offers from the catalog.
type loader func(ctx context.Context, id string) (*Offers, bool, error)

// openCategory starts a line at step first or, for a deep link, at step
// offers of category arg (kept under key) when the catalog knows it.
func (sh *Shop) openCategory(ctx context.Context, env *Env, f Flow, s *Session, arg, first, key, offers string, load loader) (*Reply, error) {
	s.Step = first
	if arg == "" {
		return sh.show(ctx, env, f, s)
	}
	if _, _, err := load(ctx, arg); err != nil {
		if errors.Is(err, ErrNotFound) {
			return sh.again(ctx, env, f, s, env.T("catalog.not_found"))
		}
		return &Reply{Screen: failScreen(env, err)}, nil
	}
	s.Set(key, arg)
	s.Goto(offers)
	return sh.show(ctx, env, f, s)
}

// search takes a search text typed at a list step. It counts against the
// buyer's rate limit (a new text may cost an upstream call) and shows the
// results at step results: in place of the search prompt at step prompt,
// else as a step of its own.
func (sh *Shop) search(ctx context.Context, env *Env, f Flow, s *Session, text, prompt, results string) (*Reply, error) {
	q := strings.TrimSpace(text)
	if q == "" || len(q) > maxQuery {
		return sh.again(ctx, env, f, s, env.T("search.bad"))
	}
	if r, err := sh.limited(ctx, env); r != nil || err != nil {
		return r, err
	}
	s.Set("q", q)
	s.Set("page", "")
	if s.Step == prompt {
		s.Step = results
	} else if s.Step != results {
		s.Goto(results)
	}
	return sh.show(ctx, env, f, s)
}

// listButton handles the buttons of a list step: Back, a page, the page
// indicator and, with search set, the search prompt (step search). It
// reports false for other buttons.
func (sh *Shop) listButton(ctx context.Context, env *Env, f Flow, s *Session, b Callback, search string) (*Reply, bool, error) {
	switch {
	case b.Action == actBack:
		r, err := sh.back(ctx, env, f, s)
		return r, true, err
	case b.Action == actPage:
		s.Set("page", b.Arg)
	case b.Action == actNoop:
		return &Reply{NoScreen: true}, true, nil
	case b.Action == actSearch && search != "":
		s.Goto(search)
	default:
		return nil, false, nil
	}
	r, err := sh.show(ctx, env, f, s)
	return r, true, err
}

// listScreen is a list step: text, one page of items, then extra rows and
// Back and Cancel; a stale copy says so.
func (sh *Shop) listScreen(env *Env, s *Session, text string, items []listItem, stale bool, extra ...[]Button) *Screen {
	text, rows := sh.listPage(env, s, text, items)
	rows = append(append(rows, extra...), navRow(env))
	return &Screen{Text: withStale(env, text, stale), Rows: rows}
}

// brandsScreen lists the brands that have categories, with a search button.
func (sh *Shop) brandsScreen(env *Env, s *Session, title string, brands []Brand, stale bool, err error) *Screen {
	if err != nil {
		return failScreen(env, err)
	}
	items := make([]listItem, 0, len(brands))
	for _, b := range brands {
		if len(b.Categories) > 0 {
			items = append(items, listItem{Label: b.Name, ID: b.Name})
		}
	}
	return sh.listScreen(env, s, title, items, stale, []Button{{Text: env.T("btn.search"), Action: actSearch}})
}

// categoriesScreen lists the categories of the brand chosen (kept as
// "brand"), each labelled by label, under the first of their images (a
// brand's regional categories share its logo).
func (sh *Shop) categoriesScreen(env *Env, s *Session, text string, brands []Brand, stale bool, err error, label func(Category) string) *Screen {
	if err != nil {
		return failScreen(env, err)
	}
	var items []listItem
	image := ""
	for _, b := range brands {
		if b.Name != s.Get("brand") {
			continue
		}
		for _, c := range b.Categories {
			items = append(items, listItem{Label: label(c), ID: c.ID})
			image = cmp.Or(image, c.Image)
		}
	}
	sc := sh.listScreen(env, s, text, items, stale)
	sc.Image = image
	return sc
}

// resultsScreen lists the categories found for the search text.
func (sh *Shop) resultsScreen(env *Env, s *Session, cats []Category, stale bool, err error) *Screen {
	if err != nil {
		return failScreen(env, err)
	}
	items := make([]listItem, 0, len(cats))
	for _, c := range cats {
		items = append(items, listItem{Label: c.Name, ID: c.ID})
	}
	text := env.T("search.results", "q", locales.Escape(s.Get("q")))
	if len(items) == 0 {
		text = env.T("search.none", "q", locales.Escape(s.Get("q")))
	}
	return sh.listScreen(env, s, text, items, stale)
}
