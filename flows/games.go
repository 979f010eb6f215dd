package flows

import (
	"context"

	"shopbot/locales"
)

// Games is the in-game top-up line ("games"): brands -> regional
// categories (or a search) -> offers -> the category's fields -> quote.
type Games struct{ *Shop }

// In-game top-up steps.
const (
	tuBrands  = "brands"
	tuSearch  = "search"
	tuResults = "results"
	tuSubs    = "subs"
	tuOffers  = "offers"
)

func (f *Games) fielded() *fielded {
	return &fielded{line: "games", cat: "cat", title: "tu.fields", withOffer: "tu.fields_offer", load: f.Catalog.TopUpOffers}
}

// Start opens the brand list, or one category for a deep link (tu-<id>).
func (f *Games) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	return f.openCategory(ctx, env, f, s, arg, tuBrands, "cat", tuOffers, f.Catalog.TopUpOffers)
}

// Handle takes choices, search text and field answers.
func (f *Games) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, stepFields); ok {
		return r, err
	}
	if r, ok, err := f.fieldsHandle(ctx, env, f, s, ev); ok {
		return r, err
	}
	if ev.Kind != EvButton {
		switch s.Step {
		case tuBrands, tuSearch, tuResults:
			return f.search(ctx, env, f, s, ev.Text, tuSearch, tuResults)
		}
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	if r, ok, err := f.listButton(ctx, env, f, s, ev.Button, tuSearch); ok {
		return r, err
	}
	if id, ok := picked(s, ev.Button.Arg); ok && ev.Button.Action == actPick {
		switch s.Step {
		case tuBrands:
			s.Set("brand", id)
			s.Goto(tuSubs)
		case tuResults, tuSubs:
			s.Set("cat", id)
			s.Goto(tuOffers)
		case tuOffers:
			if r, err := f.fielded().pick(ctx, env, f.Shop, f, s, id); r != nil || err != nil {
				return r, err
			}
		}
		s.Set("page", "")
	}
	return f.show(ctx, env, f, s)
}

func (f *Games) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	return f.fielded().price(ctx, env, s)
}

// Show renders the current step.
func (f *Games) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepPromo:
		return promoScreen(env), nil
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case stepFields:
		return f.fielded().fieldsScreen(ctx, env, f.Shop, s), nil
	case tuSearch:
		return &Screen{Text: env.T("tu.search"), Rows: [][]Button{navRow(env)}}, nil
	case tuResults:
		cats, stale, err := f.Catalog.TopUpSearch(ctx, s.Get("q"))
		return f.resultsScreen(env, s, cats, stale, err), nil
	case tuSubs:
		brands, stale, err := f.Catalog.TopUpBrands(ctx)
		text := env.T("tu.subs", "brand", locales.Escape(clipName(s.Get("brand"))))
		return f.categoriesScreen(env, s, text, brands, stale, err, func(c Category) string {
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
		sc := f.listScreen(env, s, text, items, stale)
		sc.Image = offers.Image
		return sc, nil
	default:
		s.Step = tuBrands
		brands, stale, err := f.Catalog.TopUpBrands(ctx)
		return f.brandsScreen(env, s, env.T("tu.brands"), brands, stale, err), nil
	}
}
