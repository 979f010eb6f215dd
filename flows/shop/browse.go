package shop

import (
	"cmp"
	"context"
	"errors"
	"shopbot/flows"
	"strings"

	"shopbot/locales"
)

// The steps the catalog lines share: a deep link into one category, a
// search text, the lists of brands, of a brand's categories and of search
// results, and the buttons every list step takes.

// MaxQuery caps a search text.
const MaxQuery = 64

// Loader reads one category's offers from the catalog.
type Loader func(ctx context.Context, id string) (*flows.Offers, bool, error)

// OpenCategory starts a line at step first or, for a deep link, at step
// offers of category arg (kept under key) when the catalog knows it.
func (sh *Shop) OpenCategory(ctx context.Context, env *flows.Env, f flows.Flow, s *flows.Session, arg, first string, key flows.Key, offers string, load Loader) (*flows.Reply, error) {
	s.Step = first
	if arg == "" {
		return sh.ShowStep(ctx, env, f, s)
	}
	if _, _, err := load(ctx, arg); err != nil {
		if errors.Is(err, flows.ErrNotFound) {
			return sh.Again(ctx, env, f, s, env.T("catalog.not_found"))
		}
		return &flows.Reply{Screen: FailScreen(env, err)}, nil
	}
	s.Set(key, arg)
	s.Goto(offers)
	return sh.ShowStep(ctx, env, f, s)
}

// Search takes a search text typed at a list step. It counts against the
// buyer's rate limit (a new text may cost an upstream call) and shows the
// results at step results: in place of the search prompt at step prompt,
// else as a step of its own.
func (sh *Shop) Search(ctx context.Context, env *flows.Env, f flows.Flow, s *flows.Session, text, prompt, results string) (*flows.Reply, error) {
	q := strings.TrimSpace(text)
	if q == "" || len(q) > MaxQuery {
		return sh.Again(ctx, env, f, s, env.T("search.bad"))
	}
	if r, err := sh.Limited(ctx, env); r != nil || err != nil {
		return r, err
	}
	s.Set(KeyQuery, q)
	s.Set(KeyPage, "")
	if s.Step == prompt {
		s.Step = results
	} else if s.Step != results {
		s.Goto(results)
	}
	return sh.ShowStep(ctx, env, f, s)
}

// ListButton handles the buttons of a list step: Back, a page, the page
// indicator and, with search set, the search prompt (step search). It
// reports false for other buttons.
func (sh *Shop) ListButton(ctx context.Context, env *flows.Env, f flows.Flow, s *flows.Session, b flows.Callback, search string) (*flows.Reply, bool, error) {
	switch {
	case b.Action == ActBack:
		r, err := sh.Back(ctx, env, f, s)
		return r, true, err
	case b.Action == actPage:
		s.Set(KeyPage, b.Arg)
	case b.Action == actNoop:
		return &flows.Reply{NoScreen: true}, true, nil
	case b.Action == ActSearch && search != "":
		s.Goto(search)
	default:
		return nil, false, nil
	}
	r, err := sh.ShowStep(ctx, env, f, s)
	return r, true, err
}

// ListScreen is a list step: text, one page of items, then extra rows and
// Back and Cancel; a stale copy says so.
func (sh *Shop) ListScreen(env *flows.Env, s *flows.Session, text string, items []ListItem, stale bool, extra ...[]flows.Button) *flows.Screen {
	text, rows := sh.ListPage(env, s, text, items)
	rows = append(append(rows, extra...), NavRow(env))
	return &flows.Screen{Text: WithStale(env, text, stale), Rows: rows}
}

// BrandsScreen lists the brands that have categories, with a search button.
func (sh *Shop) BrandsScreen(env *flows.Env, s *flows.Session, title string, brands []flows.Brand, stale bool, err error) *flows.Screen {
	if err != nil {
		return FailScreen(env, err)
	}
	items := make([]ListItem, 0, len(brands))
	for _, b := range brands {
		if len(b.Categories) > 0 {
			items = append(items, ListItem{Label: b.Name, ID: b.Name})
		}
	}
	return sh.ListScreen(env, s, title, items, stale, []flows.Button{{Text: env.T("btn.search"), Action: ActSearch}})
}

// CategoriesScreen lists the categories of the brand chosen (KeyBrand), each labelled by label, under the first of their images (a
// brand's regional categories share its logo).
func (sh *Shop) CategoriesScreen(env *flows.Env, s *flows.Session, text string, brands []flows.Brand, stale bool, err error, label func(flows.Category) string) *flows.Screen {
	if err != nil {
		return FailScreen(env, err)
	}
	var items []ListItem
	image := ""
	for _, b := range brands {
		if b.Name != s.Get(KeyBrand) {
			continue
		}
		for _, c := range b.Categories {
			items = append(items, ListItem{Label: label(c), ID: c.ID})
			image = cmp.Or(image, c.Image)
		}
	}
	sc := sh.ListScreen(env, s, text, items, stale)
	sc.Image = image
	return sc
}

// ResultsScreen lists the categories found for the search text.
func (sh *Shop) ResultsScreen(env *flows.Env, s *flows.Session, cats []flows.Category, stale bool, err error) *flows.Screen {
	if err != nil {
		return FailScreen(env, err)
	}
	items := make([]ListItem, 0, len(cats))
	for _, c := range cats {
		items = append(items, ListItem{Label: c.Name, ID: c.ID})
	}
	text := env.T("search.results", "q", locales.Escape(s.Get(KeyQuery)))
	if len(items) == 0 {
		text = env.T("search.none", "q", locales.Escape(s.Get(KeyQuery)))
	}
	return sh.ListScreen(env, s, text, items, stale)
}

// OnlyCategory returns the id of the brand's category when it has exactly
// one: a list of one button is not a choice, so the step that would ask for
// it is skipped (Back then returns to the brands).
func OnlyCategory(brands []flows.Brand, brand string) (string, bool) {
	for _, b := range brands {
		if b.Name == brand && len(b.Categories) == 1 {
			return b.Categories[0].ID, true
		}
	}
	return "", false
}
