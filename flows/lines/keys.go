package lines

import (
	"cmp"
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"
	"slices"
	"strings"

	"shopbot/locales"
)

// Keys is the game-key line: search and region/platform filters -> a game's
// keys (with its region restriction shown first) -> quantity -> quote.
type Keys struct{ *shop.Shop }

// Game-key steps.
const (
	gkGames    = "games"
	gkSearch   = "search"
	gkRegion   = "region"
	gkPlatform = "platform"
	gkOffers   = "keys"
	gkQty      = "qty"
	gkAny      = "*"
)

// Game-key actions and session variables.
const (
	actRegion   flows.Action = "fr" // choose the region filter
	actPlatform flows.Action = "fp" // choose the platform filter
	// actClear clears the search text and the filters (the store gifts'
	// search too).
	actClear flows.Action = "clr"

	keyGame     flows.Key = "game"     // the game chosen (its category id)
	keyKey      flows.Key = "key"      // the key chosen (its offer id)
	keyRegion   flows.Key = "region"   // the region filter ("": any); the store gifts' price region too
	keyPlatform flows.Key = "platform" // the platform filter ("": any)
)

func (f *Keys) units() *units {
	return &units{line: "keys", cat: keyGame, item: keyKey, qty: gkQty, quick: []int{1, 2, 3, 5, 10, 20}, load: f.Catalog.GameKeyOffers}
}

// Start opens the game list, or one game for a deep link (key-<id>).
func (f *Keys) Start(ctx context.Context, env *flows.Env, s *flows.Session, arg string) (*flows.Reply, error) {
	return f.OpenCategory(ctx, env, f, s, arg, gkGames, keyGame, gkOffers, f.Catalog.GameKeyOffers)
}

// Handle takes choices, search text, filters and quantity.
func (f *Keys) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.Confirm(ctx, env, f, s, ev, gkQty); ok {
		return r, err
	}
	if r, ok, err := f.units().handleQty(ctx, env, f.Shop, f, s, ev); ok {
		return r, err
	}
	if ev.Kind != flows.EvButton {
		switch s.Step {
		case gkGames, gkSearch:
			return f.Search(ctx, env, f, s, ev.Text, gkSearch, gkGames)
		}
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	if r, ok, err := f.ListButton(ctx, env, f, s, ev.Button, gkSearch); ok {
		return r, err
	}
	if r, ok, err := f.units().notify(ctx, env, f.Shop, f, s, ev); ok {
		return r, err
	}
	b := ev.Button
	switch b.Action {
	case actClear:
		s.Set(shop.KeyQuery, "")
		s.Set(keyRegion, "")
		s.Set(keyPlatform, "")
		s.Set(shop.KeyPage, "")
	case actRegion:
		s.Goto(gkRegion)
		s.Set(shop.KeyPage, "")
	case actPlatform:
		s.Goto(gkPlatform)
		s.Set(shop.KeyPage, "")
	case shop.ActPick:
		id, ok := shop.Picked(s, b.Arg)
		if !ok {
			break
		}
		switch s.Step {
		case gkRegion, gkPlatform:
			if id == gkAny {
				id = ""
			}
			if s.Step == gkRegion {
				s.Set(keyRegion, id)
			} else {
				s.Set(keyPlatform, id)
			}
			s.GoBack()
			s.Set(shop.KeyPage, "")
		case gkGames:
			s.Set(keyGame, id)
			s.Goto(gkOffers)
		case gkOffers:
			if r, ok := f.units().pick(ctx, env, f.Shop, s, id); !ok && r != nil {
				return r, nil
			}
		}
	}
	return f.ShowStep(ctx, env, f, s)
}

func (f *Keys) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	return f.units().Price(ctx, env, s)
}

// restriction describes where a region-restricted key activates.
func (f *Keys) restriction(ctx context.Context, env *flows.Env, game, region string) string {
	rr, _, err := f.Catalog.GameKeyRestriction(ctx, game)
	if err != nil || len(rr.Available)+len(rr.Unavailable) == 0 {
		return env.T("keys.restricted_unknown", "region", locales.Escape(region))
	}
	names := func(cs []string) string {
		var out []string
		for _, c := range cs {
			out = append(out, locales.Escape(c))
		}
		return strings.Join(out, ", ")
	}
	text := env.T("keys.restricted", "region", locales.Escape(region))
	if len(rr.Available) > 0 {
		text += "\n" + env.T("keys.available_in", "countries", names(rr.Available))
	}
	if len(rr.Unavailable) > 0 {
		text += "\n" + env.T("keys.unavailable_in", "countries", names(rr.Unavailable))
	}
	return text
}

// Show renders the current step.
func (f *Keys) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), nil
	case shop.StepConfirm:
		return f.ShowConfirm(ctx, env, s)
	case gkSearch:
		return &flows.Screen{Text: env.T("keys.search"), Rows: [][]flows.Button{shop.NavRow(env)}}, nil
	case gkRegion, gkPlatform:
		all, stale, err := f.Catalog.GameKeys(ctx, "", "", "")
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		var opts []string
		for _, g := range all {
			v := g.Region
			if s.Step == gkPlatform {
				v = g.Platform
			}
			if v != "" && !slices.Contains(opts, v) {
				opts = append(opts, v)
			}
		}
		slices.Sort(opts)
		anyKey := "keys.any"
		if s.Step == gkPlatform {
			anyKey = "keys.any_platform" // "any" agrees with "platform" in ru and uk
		}
		items := []shop.ListItem{{Label: env.T(anyKey), ID: gkAny}}
		for _, o := range opts {
			items = append(items, shop.ListItem{Label: o, ID: o})
		}
		text := env.T("keys.choose_region")
		if s.Step == gkPlatform {
			text = env.T("keys.choose_platform")
		}
		text, rows := f.ListPage(env, s, text, items)
		rows = append(rows, shop.NavRow(env))
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: rows}, nil
	case gkOffers:
		offers, stale, err := f.Catalog.GameKeyOffers(ctx, s.Get(keyGame))
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		var b strings.Builder
		b.WriteString(f.WithReviews(ctx, env, env.T("keys.offers", "name", locales.Escape(shop.ClipName(offers.Name)), "region", locales.Escape(offers.Region), "platform", locales.Escape(offers.Platform)),
			flows.ProductLink("keys", s.Get(keyGame))))
		if offers.Restricted {
			b.WriteString("\n\n")
			b.WriteString(f.restriction(ctx, env, offers.CategoryID, offers.Region))
		}
		b.WriteString("\n")
		items := f.units().items(env, f.Shop, f.Balance(ctx), offers)
		if len(items) == 0 {
			b.WriteString("\n" + env.T("catalog.empty"))
		}
		sc := f.ListScreen(env, s, b.String(), items, stale)
		sc.Image = offers.Image
		return sc, nil
	case gkQty:
		return f.units().qtyScreen(ctx, env, f.Shop, s), nil
	default:
		s.Step = gkGames
		games, stale, err := f.Catalog.GameKeys(ctx, s.Get(shop.KeyQuery), s.Get(keyRegion), s.Get(keyPlatform))
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		items := make([]shop.ListItem, 0, len(games))
		for _, g := range games {
			items = append(items, shop.ListItem{Label: g.Name + " · " + g.Region + " · " + g.Platform, ID: g.ID})
		}
		region, platform := cmp.Or(s.Get(keyRegion), env.T("keys.any")), cmp.Or(s.Get(keyPlatform), env.T("keys.any_platform"))
		text := env.T("keys.games", "region", locales.Escape(region), "platform", locales.Escape(platform))
		if q := s.Get(shop.KeyQuery); q != "" {
			text += "\n" + env.T("search.results", "q", locales.Escape(q))
		}
		if len(items) == 0 {
			text += "\n\n" + env.T("keys.none")
		}
		text, rows := f.ListPage(env, s, text, items)
		rows = append(rows,
			[]flows.Button{{Text: env.T("keys.btn_region", "region", region), Action: actRegion}, {Text: env.T("keys.btn_platform", "platform", platform), Action: actPlatform}},
			[]flows.Button{{Text: env.T("btn.search"), Action: shop.ActSearch}})
		if s.Get(shop.KeyQuery) != "" || s.Get(keyRegion) != "" || s.Get(keyPlatform) != "" {
			rows = append(rows, []flows.Button{{Text: env.T("keys.btn_clear"), Action: actClear}})
		}
		rows = append(rows, shop.NavRow(env))
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: rows}, nil
	}
}
