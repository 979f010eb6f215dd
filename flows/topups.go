package flows

import (
	"context"
	"errors"
	"strings"

	"shopbot/locales"
)

// TopUps is the in-game top-up line: brands -> regional categories (or a
// search) -> offers -> the category's fields -> quote.
type TopUps struct{ *Shop }

// In-game top-up steps.
const (
	tuBrands  = "brands"
	tuSearch  = "search"
	tuResults = "results"
	tuSubs    = "subs"
	tuOffers  = "offers"
)

// Start opens the brand list, or one category for a deep link (tu-<id>).
func (f *TopUps) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	s.Step = tuBrands
	if arg == "" {
		return f.show(ctx, env, f, s)
	}
	if _, _, err := f.Catalog.TopUpOffers(ctx, arg); err != nil {
		if errors.Is(err, ErrNotFound) {
			return f.again(ctx, env, f, s, env.T("catalog.not_found"))
		}
		return &Reply{Screen: failScreen(env, err)}, nil
	}
	s.Set("cat", arg)
	s.Goto(tuOffers)
	return f.show(ctx, env, f, s)
}

// Handle takes choices, search text and field answers.
func (f *TopUps) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, stepFields); ok {
		return r, err
	}
	if r, ok, err := f.fieldsHandle(ctx, env, f, s, ev); ok {
		return r, err
	}
	if ev.Kind != EvButton {
		switch s.Step {
		case tuBrands, tuSearch, tuResults:
			q := strings.TrimSpace(ev.Text)
			if q == "" || len(q) > maxQuery {
				return f.again(ctx, env, f, s, env.T("search.bad"))
			}
			if r, err := f.limited(ctx, env); r != nil || err != nil {
				return r, err // a new search text may cost an upstream call
			}
			s.Set("q", q)
			s.Set("page", "")
			if s.Step == tuSearch {
				s.Step = tuResults
			} else if s.Step != tuResults {
				s.Goto(tuResults)
			}
			return f.show(ctx, env, f, s)
		}
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	b := ev.Button
	switch b.Action {
	case actBack:
		return f.back(ctx, env, f, s)
	case actPage:
		s.Set("page", b.Arg)
	case actNoop:
		return &Reply{NoScreen: true}, nil
	case actSearch:
		s.Goto(tuSearch)
	case actPick:
		id, ok := picked(s, b.Arg)
		if !ok {
			break
		}
		switch s.Step {
		case tuBrands:
			s.Set("brand", id)
			s.Goto(tuSubs)
		case tuResults, tuSubs:
			s.Set("cat", id)
			s.Goto(tuOffers)
		case tuOffers:
			offers, _, err := f.Catalog.TopUpOffers(ctx, s.Get("cat"))
			if err != nil {
				return &Reply{Screen: failScreen(env, err), Save: true}, nil
			}
			s.Set("offer", id)
			fields := offerFields(offers)
			askFields(s, fields)
			if len(fields) == 0 {
				return f.quote(ctx, env, f, s)
			}
		}
		s.Set("page", "")
	}
	return f.show(ctx, env, f, s)
}

// offerFields are a category's buyer fields, typed as the upstream
// declares or as their keys and labels say.
func offerFields(o *Offers) []field {
	var fields []field
	for _, fl := range o.Fields {
		fields = append(fields, newField(fl.Key, fl.Label, fl.Type, fl.Options))
	}
	return fields
}

func (f *TopUps) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	offers, stale, err := f.Catalog.TopUpOffers(ctx, s.Get("cat"))
	if err != nil {
		return nil, false, err
	}
	values := fieldValues(s)
	if missing := offers.MissingFields(values); len(missing) > 0 {
		// The category's fields changed since they were asked: ask again.
		askFields(s, offerFields(offers))
		return nil, false, &badInput{env.T("fields.changed")}
	}
	if bad := firstInvalid(env, s); bad != nil {
		return nil, false, bad
	}
	for _, o := range offers.Offers {
		if o.ID == s.Get("offer") {
			return &Quote{
				Line: "games", Item: o.ID, Category: offers.CategoryID, ItemName: offers.Name + " — " + o.Name,
				Fields: values, For: fieldsFor(s), Quantity: 1, UpstreamUSD: o.PriceUSD,
			}, stale, nil
		}
	}
	return nil, false, notFound("offer gone")
}

// Show renders the current step.
func (f *TopUps) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case stepFields:
		offers, stale, err := f.Catalog.TopUpOffers(ctx, s.Get("cat"))
		if err != nil {
			return failScreen(env, err), nil
		}
		title := env.T("tu.fields", "name", locales.Escape(clipName(offers.Name)))
		for _, o := range offers.Offers {
			if o.ID == s.Get("offer") {
				title = env.T("tu.fields_offer", "name", locales.Escape(clipName(offers.Name)), "offer", locales.Escape(clipName(o.Name)), "price", f.Pricing.Price(env.Lang, "games", o.PriceUSD))
			}
		}
		sc := fieldsScreen(env, s, title)
		sc.Text = withStale(env, sc.Text, stale)
		return sc, nil
	case tuSearch:
		return &Screen{Text: env.T("tu.search"), Rows: [][]Button{navRow(env)}}, nil
	case tuResults:
		cats, stale, err := f.Catalog.TopUpSearch(ctx, s.Get("q"))
		if err != nil {
			return failScreen(env, err), nil
		}
		items := make([]listItem, 0, len(cats))
		for _, c := range cats {
			items = append(items, listItem{Label: c.Name, ID: c.ID})
		}
		text := env.T("search.results", "q", locales.Escape(s.Get("q")))
		if len(items) == 0 {
			text = env.T("search.none", "q", locales.Escape(s.Get("q")))
		}
		text, rows := f.listPage(env, s, text, items)
		return &Screen{Text: withStale(env, text, stale), Rows: append(rows, navRow(env))}, nil
	case tuSubs:
		brands, stale, err := f.Catalog.TopUpBrands(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		var items []listItem
		for _, b := range brands {
			if b.Name != s.Get("brand") {
				continue
			}
			for _, sub := range b.Categories {
				label := sub.Name
				if sub.Region != "" {
					label += " · " + sub.Region
				}
				if sub.Variant != "" {
					label += " · " + sub.Variant
				}
				items = append(items, listItem{Label: label, ID: sub.ID})
			}
		}
		text := env.T("tu.subs", "brand", locales.Escape(clipName(s.Get("brand"))))
		text, rows := f.listPage(env, s, text, items)
		return &Screen{Text: withStale(env, text, stale), Rows: append(rows, navRow(env))}, nil
	case tuOffers:
		offers, stale, err := f.Catalog.TopUpOffers(ctx, s.Get("cat"))
		if err != nil {
			return failScreen(env, err), nil
		}
		text := env.T("tu.offers", "name", locales.Escape(clipName(offers.Name)))
		if offers.Note != "" {
			text += "\n<i>" + locales.Escape(locales.Clip(offers.Note, maxNoteLen)) + "</i>"
		}
		items := make([]listItem, 0, len(offers.Offers))
		funds := f.funds(ctx)
		for _, o := range offers.Offers {
			items = append(items, pricedItem(o.Name, f.Pricing.Price(env.Lang, "games", o.PriceUSD), o.ID, funds.covers(o.PriceUSD)))
		}
		if len(items) == 0 {
			text += "\n\n" + env.T("catalog.empty")
		}
		text, rows := f.listPage(env, s, text, items)
		return &Screen{Text: withStale(env, text, stale), Rows: append(rows, navRow(env))}, nil
	default:
		s.Step = tuBrands
		brands, stale, err := f.Catalog.TopUpBrands(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		items := make([]listItem, 0, len(brands))
		for _, b := range brands {
			if len(b.Categories) > 0 {
				items = append(items, listItem{Label: b.Name, ID: b.Name})
			}
		}
		text, rows := f.listPage(env, s, env.T("tu.brands"), items)
		rows = append(rows, []Button{{Text: env.T("btn.search"), Action: actSearch}}, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	}
}
