package flows

import (
	"context"

	"shopbot/locales"
)

// GiftCards is the gift-card line: brands -> regional categories -> cards
// (or a text search over categories), then the quantity and the quote.
type GiftCards struct{ *Shop }

// Gift-card steps.
const (
	gcBrands  = "brands"
	gcSearch  = "search"
	gcResults = "results"
	gcRegions = "regions"
	gcCards   = "cards"
	gcQty     = "qty"
)

func (g *GiftCards) units() *units {
	return &units{line: "giftcards", cat: "cat", item: "card", qty: gcQty, quick: []int{1, 2, 3, 5, 10, 20, 50, 100}, load: g.Catalog.GiftCardOffers}
}

// Start opens the brand list, or one category for a deep link (gc-<id>).
func (g *GiftCards) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	return g.openCategory(ctx, env, g, s, arg, gcBrands, "cat", gcCards, g.Catalog.GiftCardOffers)
}

// Handle takes the buyer's choices, search text and quantity.
func (g *GiftCards) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := g.confirm(ctx, env, g, s, ev, gcQty); ok {
		return r, err
	}
	if r, ok, err := g.units().handleQty(ctx, env, g.Shop, g, s, ev); ok {
		return r, err
	}
	if ev.Kind != EvButton {
		switch s.Step {
		case gcBrands, gcSearch, gcResults:
			return g.search(ctx, env, g, s, ev.Text, gcSearch, gcResults)
		}
		return g.again(ctx, env, g, s, env.T("err.use_buttons"))
	}
	if r, ok, err := g.listButton(ctx, env, g, s, ev.Button, gcSearch); ok {
		return r, err
	}
	if ev.Button.Action != actPick {
		return g.show(ctx, env, g, s)
	}
	id, ok := picked(s, ev.Button.Arg)
	if !ok {
		return g.show(ctx, env, g, s)
	}
	switch s.Step {
	case gcBrands:
		s.Set("brand", id)
		s.Goto(gcRegions)
	case gcResults, gcRegions:
		s.Set("cat", id)
		s.Goto(gcCards)
	case gcCards:
		if r, ok := g.units().pick(ctx, env, g.Shop, s, id); !ok {
			if r != nil {
				return r, nil
			}
			return g.show(ctx, env, g, s)
		}
	default:
		return g.show(ctx, env, g, s)
	}
	s.Set("page", "")
	return g.show(ctx, env, g, s)
}

func (g *GiftCards) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	return g.units().price(ctx, env, s)
}

// Show renders the current step.
func (g *GiftCards) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepPromo:
		return promoScreen(env), nil
	case stepConfirm:
		return g.showConfirm(ctx, env, s)
	case gcSearch:
		return &Screen{Text: env.T("search.prompt"), Rows: [][]Button{navRow(env)}}, nil
	case gcResults:
		cats, stale, err := g.Catalog.GiftCardSearch(ctx, s.Get("q"))
		return g.resultsScreen(env, s, cats, stale, err), nil
	case gcRegions:
		brands, stale, err := g.Catalog.GiftCardBrands(ctx)
		text := env.T("gc.regions", "brand", locales.Escape(clipName(s.Get("brand"))))
		return g.categoriesScreen(env, s, text, brands, stale, err, func(c Category) string {
			if c.Region == "" {
				return env.T("gc.any_region")
			}
			return c.Region
		}), nil
	case gcCards:
		offers, stale, err := g.Catalog.GiftCardOffers(ctx, s.Get("cat"))
		if err != nil {
			return failScreen(env, err), nil
		}
		items := g.units().items(env, g.Shop, g.funds(ctx), offers)
		text := env.T("gc.cards", "name", locales.Escape(clipName(offers.Name)))
		if len(items) == 0 {
			text += "\n" + env.T("catalog.empty")
		}
		sc := g.listScreen(env, s, text, items, stale)
		sc.Image = offers.Image
		return sc, nil
	case gcQty:
		return g.units().qtyScreen(ctx, env, g.Shop, s), nil
	default: // brands
		s.Step = gcBrands
		brands, stale, err := g.Catalog.GiftCardBrands(ctx)
		return g.brandsScreen(env, s, env.T("gc.brands"), brands, stale, err), nil
	}
}
