package lines

import (
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"

	"shopbot/locales"
)

// Games is the in-game top-up line ("games"): brands -> regional
// categories (or a search) -> offers -> the category's fields -> quote.
type Games struct{ *shop.Shop }

// In-game top-up steps.
const (
	tuBrands  = "brands"
	tuSearch  = "search"
	tuResults = "results"
	tuSubs    = "subs"
	tuOffers  = "offers"
)

func (f *Games) fielded() *fielded {
	return &fielded{line: "games", cat: keyCategory, title: "tu.fields", withOffer: "tu.fields_offer", load: f.Catalog.TopUpOffers}
}

// Start opens the brand list, or one category for a deep link (tu-<id>).
func (f *Games) Start(ctx context.Context, env *flows.Env, s *flows.Session, arg string) (*flows.Reply, error) {
	return f.OpenCategory(ctx, env, f, s, arg, tuBrands, keyCategory, tuOffers, f.Catalog.TopUpOffers)
}

// Handle takes choices, search text and field answers.
func (f *Games) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.fielded().handle(ctx, env, f.Shop, f, s, ev); ok {
		return r, err
	}
	if ev.Kind != flows.EvButton {
		switch s.Step {
		case tuBrands, tuSearch, tuResults:
			return f.Search(ctx, env, f, s, ev.Text, tuSearch, tuResults)
		}
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	if r, ok, err := f.ListButton(ctx, env, f, s, ev.Button, tuSearch); ok {
		return r, err
	}
	if id, ok := shop.Picked(s, ev.Button.Arg); ok && ev.Button.Action == shop.ActPick {
		switch s.Step {
		case tuBrands:
			s.Set(shop.KeyBrand, id)
			if brands, _, err := f.Catalog.TopUpBrands(ctx); err == nil {
				if cat, ok := shop.OnlyCategory(brands, id); ok {
					s.Set(keyCategory, cat)
					s.Goto(tuOffers)
					break
				}
			}
			s.Goto(tuSubs)
		case tuResults, tuSubs:
			s.Set(keyCategory, id)
			s.Goto(tuOffers)
		case tuOffers:
			if r, err := f.fielded().pick(ctx, env, f.Shop, f, s, id); r != nil || err != nil {
				return r, err
			}
		}
		s.Set(shop.KeyPage, "")
	}
	return f.ShowStep(ctx, env, f, s)
}

func (f *Games) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	return f.fielded().Price(ctx, env, s)
}

// Show renders the current step.
func (f *Games) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	if sc, ok, err := f.fielded().show(ctx, env, f.Shop, s); ok {
		return sc, err
	}
	switch s.Step {
	case tuSearch:
		return &flows.Screen{Text: env.T("tu.search"), Rows: [][]flows.Button{shop.NavRow(env)}}, nil
	case tuResults:
		cats, stale, err := f.Catalog.TopUpSearch(ctx, s.Get(shop.KeyQuery))
		return f.ResultsScreen(env, s, cats, stale, err), nil
	case tuSubs:
		brands, stale, err := f.Catalog.TopUpBrands(ctx)
		text := env.T("tu.subs", "brand", locales.Escape(shop.ClipName(s.Get(shop.KeyBrand))))
		return f.CategoriesScreen(env, s, text, brands, stale, err, func(c flows.Category) string {
			label := c.Name
			if c.Region != "" {
				label += " · " + c.Region
			}
			if c.Variant != "" {
				label += " · " + c.Variant
			}
			return label
		}), nil
	case tuOffers:
		return f.fielded().offersScreen(ctx, env, f.Shop, s, "tu.offers", nil), nil
	default:
		s.Step = tuBrands
		brands, stale, err := f.Catalog.TopUpBrands(ctx)
		return f.BrandsScreen(env, s, env.T("tu.brands"), brands, stale, err), nil
	}
}
