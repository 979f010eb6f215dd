package flows

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"shopbot/locales"
)

// Keys is the game-key line: search and region/platform filters -> a game's
// keys (with its region restriction shown first) -> quantity -> quote.
type Keys struct{ *Shop }

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

// Start opens the game list, or one game for a deep link (key-<id>).
func (f *Keys) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	s.Step = gkGames
	if arg == "" {
		return f.show(ctx, env, f, s)
	}
	if _, _, err := f.Catalog.GameKeyOffers(ctx, arg); err != nil {
		if errors.Is(err, ErrNotFound) {
			return f.again(ctx, env, f, s, env.T("catalog.not_found"))
		}
		return &Reply{Screen: failScreen(env, err)}, nil
	}
	s.Set("game", arg)
	s.Goto(gkOffers)
	return f.show(ctx, env, f, s)
}

// Handle takes choices, search text, filters and quantity.
func (f *Keys) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, gkQty); ok {
		return r, err
	}
	if ev.Kind != EvButton {
		switch s.Step {
		case gkGames, gkSearch:
			q := strings.TrimSpace(ev.Text)
			if q == "" || len(q) > maxQuery {
				return f.again(ctx, env, f, s, env.T("search.bad"))
			}
			if r, err := f.limited(ctx, env); r != nil || err != nil {
				return r, err // a new search text may cost an upstream call
			}
			s.Set("q", q)
			s.Set("page", "")
			s.Step = gkGames
			return f.show(ctx, env, f, s)
		case gkQty:
			n, ok := parseQuantity(ev.Text)
			if !ok {
				return f.again(ctx, env, f, s, env.T("qty.bad_number"))
			}
			return f.setQuantity(ctx, env, s, n)
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
		s.Goto(gkSearch)
	case "clr": // clear search and filters
		s.Set("q", "")
		s.Set("region", "")
		s.Set("platform", "")
		s.Set("page", "")
	case "fr":
		s.Goto(gkRegion)
		s.Set("page", "")
	case "fp":
		s.Goto(gkPlatform)
		s.Set("page", "")
	case actQty:
		n, _ := strconv.Atoi(b.Arg)
		return f.setQuantity(ctx, env, s, n)
	case actPick:
		id, ok := picked(s, b.Arg)
		if !ok {
			break
		}
		switch s.Step {
		case gkRegion, gkPlatform:
			if id == gkAny {
				id = ""
			}
			s.Set(s.Step, id)
			s.GoBack()
			s.Set("page", "")
		case gkGames:
			s.Set("game", id)
			s.Goto(gkOffers)
		case gkOffers:
			o, _, err := f.offer(ctx, s.Get("game"), id)
			if err != nil {
				break
			}
			if o.Stock < max(o.MinQuantity, 1) {
				return &Reply{Answer: env.T("gc.sold_out_alert"), Alert: true, NoScreen: true}, nil
			}
			if !f.funds(ctx).covers(o.PriceUSD.Mul(decimalInt(max(o.MinQuantity, 1)))) {
				return &Reply{Answer: env.T("catalog.paused_alert"), Alert: true, NoScreen: true}, nil
			}
			s.Set("key", id)
			s.Goto(gkQty)
		}
	}
	return f.show(ctx, env, f, s)
}

func (f *Keys) setQuantity(ctx context.Context, env *Env, s *Session, n int) (*Reply, error) {
	o, _, err := f.offer(ctx, s.Get("game"), s.Get("key"))
	if err != nil {
		return &Reply{Screen: failScreen(env, err), Save: true}, nil
	}
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		return f.again(ctx, env, f, s, reason)
	}
	s.Set("qty", strconv.Itoa(n))
	return f.quote(ctx, env, f, s)
}

func (f *Keys) offer(ctx context.Context, game, key string) (*Offer, bool, error) {
	offers, stale, err := f.Catalog.GameKeyOffers(ctx, game)
	if err != nil {
		return nil, false, err
	}
	if o, ok := offers.offer(key); ok {
		return o, stale, nil
	}
	return nil, false, notFound("key not offered")
}

func (f *Keys) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	o, stale, err := f.offer(ctx, s.Get("game"), s.Get("key"))
	if err != nil {
		return nil, false, err
	}
	n, _ := strconv.Atoi(s.Get("qty"))
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		s.Step = gkQty
		return nil, false, &badInput{reason}
	}
	return &Quote{
		Line: "keys", Item: o.ID, Category: s.Get("game"), ItemName: o.Name, Quantity: n,
		UpstreamUSD: o.PriceUSD.Mul(decimalInt(n)),
	}, stale, nil
}

// restriction describes where a region-restricted key activates.
func (f *Keys) restriction(ctx context.Context, env *Env, game, region string) string {
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
func (f *Keys) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case gkSearch:
		return &Screen{Text: env.T("keys.search"), Rows: [][]Button{navRow(env)}}, nil
	case gkRegion, gkPlatform:
		all, stale, err := f.Catalog.GameKeys(ctx, "", "", "")
		if err != nil {
			return failScreen(env, err), nil
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
		items := []listItem{{Label: env.T(anyKey), ID: gkAny}}
		for _, o := range opts {
			items = append(items, listItem{Label: o, ID: o})
		}
		text := env.T("keys.choose_region")
		if s.Step == gkPlatform {
			text = env.T("keys.choose_platform")
		}
		text, rows := f.listPage(env, s, text, items)
		rows = append(rows, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	case gkOffers:
		offers, stale, err := f.Catalog.GameKeyOffers(ctx, s.Get("game"))
		if err != nil {
			return failScreen(env, err), nil
		}
		var b strings.Builder
		b.WriteString(env.T("keys.offers", "name", locales.Escape(clipName(offers.Name)), "region", locales.Escape(offers.Region), "platform", locales.Escape(offers.Platform)))
		if offers.Restricted {
			b.WriteString("\n\n")
			b.WriteString(f.restriction(ctx, env, offers.CategoryID, offers.Region))
		}
		b.WriteString("\n")
		var items []listItem
		funds := f.funds(ctx)
		for _, o := range offers.Offers {
			items = append(items, offerItem(env, f.Pricing.Price(env.Lang, "keys", o.PriceUSD), o.Name, o.ID,
				o.Stock < max(o.MinQuantity, 1), !funds.covers(o.PriceUSD.Mul(decimalInt(max(o.MinQuantity, 1))))))
		}
		if len(items) == 0 {
			b.WriteString("\n" + env.T("catalog.empty"))
		}
		text, rows := f.listPage(env, s, b.String(), items)
		rows = append(rows, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	case gkQty:
		o, stale, err := f.offer(ctx, s.Get("game"), s.Get("key"))
		if err != nil {
			return failScreen(env, err), nil
		}
		lo, hi := max(o.MinQuantity, 1), f.funds(ctx).affordable(o.PriceUSD, min(o.MaxQuantity, o.Stock, 100))
		if hi < lo {
			return &Screen{Text: env.T("catalog.paused_quote"), Rows: [][]Button{navRow(env)}}, nil
		}
		text := env.T("qty.prompt", "item", locales.Escape(clipName(o.Name)),
			"price", f.Pricing.Price(env.Lang, "keys", o.PriceUSD),
			"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
		rows := append(quickQuantities(env, lo, hi, []int{1, 2, 3, 5, 10, 20}), navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	default:
		s.Step = gkGames
		games, stale, err := f.Catalog.GameKeys(ctx, s.Get("q"), s.Get("region"), s.Get("platform"))
		if err != nil {
			return failScreen(env, err), nil
		}
		items := make([]listItem, 0, len(games))
		for _, g := range games {
			items = append(items, listItem{Label: g.Name + " · " + g.Region + " · " + g.Platform, ID: g.ID})
		}
		region, platform := cmp.Or(s.Get("region"), env.T("keys.any")), cmp.Or(s.Get("platform"), env.T("keys.any_platform"))
		text := env.T("keys.games", "region", locales.Escape(region), "platform", locales.Escape(platform))
		if q := s.Get("q"); q != "" {
			text += "\n" + env.T("search.results", "q", locales.Escape(q))
		}
		if len(items) == 0 {
			text += "\n\n" + env.T("keys.none")
		}
		text, rows := f.listPage(env, s, text, items)
		rows = append(rows,
			[]Button{{Text: env.T("keys.btn_region", "region", region), Action: "fr"}, {Text: env.T("keys.btn_platform", "platform", platform), Action: "fp"}},
			[]Button{{Text: env.T("btn.search"), Action: actSearch}})
		if s.Get("q") != "" || s.Get("region") != "" || s.Get("platform") != "" {
			rows = append(rows, []Button{{Text: env.T("keys.btn_clear"), Action: "clr"}})
		}
		rows = append(rows, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	}
}
