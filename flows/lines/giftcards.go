package lines

import (
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"

	"shopbot/locales"
)

// GiftCards is the gift-card line: brands -> regional categories -> cards
// (or a text search over categories), then the quantity and the quote.
type GiftCards struct{ *shop.Shop }

// Gift-card steps.
const (
	gcBrands  = "brands"
	gcSearch  = "search"
	gcResults = "results"
	gcRegions = "regions"
	gcCards   = "cards"
	gcQty     = "qty"
)

// keyCard is the gift card chosen (its offer id).
const keyCard flows.Key = "card"

func (g *GiftCards) units() *units {
	return &units{line: "giftcards", cat: keyCategory, item: keyCard, qty: gcQty, quick: []int{1, 2, 3, 5, 10, 20, 50, 100}, load: g.Catalog.GiftCardOffers}
}

// Start opens the brand list, or one category for a deep link (gc-<id>).
func (g *GiftCards) Start(ctx context.Context, env *flows.Env, s *flows.Session, arg string) (*flows.Reply, error) {
	return g.OpenCategory(ctx, env, g, s, arg, gcBrands, keyCategory, gcCards, g.Catalog.GiftCardOffers)
}

// Handle takes the buyer's choices, search text and quantity.
func (g *GiftCards) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := g.Confirm(ctx, env, g, s, ev, gcQty); ok {
		return r, err
	}
	if r, ok, err := g.units().handleQty(ctx, env, g.Shop, g, s, ev); ok {
		return r, err
	}
	if ev.Kind != flows.EvButton {
		switch s.Step {
		case gcBrands, gcSearch, gcResults:
			return g.Search(ctx, env, g, s, ev.Text, gcSearch, gcResults)
		}
		return g.Again(ctx, env, g, s, env.T("err.use_buttons"))
	}
	if r, ok, err := g.ListButton(ctx, env, g, s, ev.Button, gcSearch); ok {
		return r, err
	}
	if r, ok, err := g.units().notify(ctx, env, g.Shop, g, s, ev); ok {
		return r, err
	}
	if ev.Button.Action != shop.ActPick {
		return g.ShowStep(ctx, env, g, s)
	}
	id, ok := shop.Picked(s, ev.Button.Arg)
	if !ok {
		return g.ShowStep(ctx, env, g, s)
	}
	switch s.Step {
	case gcBrands:
		s.Set(shop.KeyBrand, id)
		if brands, _, err := g.Catalog.GiftCardBrands(ctx); err == nil {
			if cat, ok := shop.OnlyCategory(brands, id); ok {
				s.Set(keyCategory, cat)
				s.Goto(gcCards)
				break
			}
		}
		s.Goto(gcRegions)
	case gcResults, gcRegions:
		s.Set(keyCategory, id)
		s.Goto(gcCards)
	case gcCards:
		if r, ok := g.units().pick(ctx, env, g.Shop, s, id); !ok {
			if r != nil {
				return r, nil
			}
			return g.ShowStep(ctx, env, g, s)
		}
	default:
		return g.ShowStep(ctx, env, g, s)
	}
	s.Set(shop.KeyPage, "")
	return g.ShowStep(ctx, env, g, s)
}

func (g *GiftCards) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	return g.units().Price(ctx, env, s)
}

// Show renders the current step.
func (g *GiftCards) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), nil
	case shop.StepConfirm:
		return g.ShowConfirm(ctx, env, s)
	case gcSearch:
		return &flows.Screen{Text: env.T("search.prompt"), Rows: [][]flows.Button{shop.NavRow(env)}}, nil
	case gcResults:
		cats, stale, err := g.Catalog.GiftCardSearch(ctx, s.Get(shop.KeyQuery))
		return g.ResultsScreen(env, s, cats, stale, err), nil
	case gcRegions:
		brands, stale, err := g.Catalog.GiftCardBrands(ctx)
		text := env.T("gc.regions", "brand", locales.Escape(shop.ClipName(s.Get(shop.KeyBrand))))
		return g.CategoriesScreen(env, s, text, brands, stale, err, func(c flows.Category) string {
			if c.Region == "" {
				return env.T("gc.any_region")
			}
			return c.Region
		}), nil
	case gcCards:
		offers, stale, err := g.Catalog.GiftCardOffers(ctx, s.Get(keyCategory))
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		items := g.units().items(env, g.Shop, g.Balance(ctx), offers)
		text := env.T("gc.cards", "name", locales.Escape(shop.ClipName(offers.Name)))
		text = g.WithReviews(ctx, env, text, flows.ProductLink("giftcards", s.Get(keyCategory)))
		if len(items) == 0 {
			text += "\n" + env.T("catalog.empty")
		}
		sc := g.ListScreen(env, s, text, items, stale)
		sc.Image = offers.Image
		return sc, nil
	case gcQty:
		return g.units().qtyScreen(ctx, env, g.Shop, s), nil
	default: // brands
		s.Step = gcBrands
		brands, stale, err := g.Catalog.GiftCardBrands(ctx)
		return g.BrandsScreen(env, s, env.T("gc.brands"), brands, stale, err), nil
	}
}
