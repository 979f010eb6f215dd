package lines

import (
	"context"
	"errors"
	"net/url"
	"shopbot/flows"
	"shopbot/flows/shop"
	"strconv"
	"strings"

	"shopbot/locales"
)

// Gifts is the store-gift line: the top games (searchable, or a
// numeric app id) -> editions -> price region -> the friend-invite link.
type Gifts struct{ *shop.Shop }

// Store-gift steps.
const (
	sgGames    = "games"
	sgEditions = "editions"
	sgRegions  = "regions"
	sgInvite   = "invite"
)

// Store-gift session variables (the price region is keyRegion).
const (
	keyApp     flows.Key = "app"     // the game chosen: its app id (a number)
	keyAppName flows.Key = "appname" // its name in the top list; unset when it is not there
	keyEdition flows.Key = "sub"     // the edition chosen (its id)
	keyInvite  flows.Key = "invite"  // the recipient's friend-invite link
)

// maxInviteURL caps a friend-invite link.
const maxInviteURL = 512

// inviteHosts are the store's friend-invite link hosts and the path each
// link starts with: the short quick-invite link and its long form.
var inviteHosts = map[string][]string{
	"s.team":             {"/p/"},
	"steamcommunity.com": {"/p/", "/user/"},
}

// validInvite accepts an https friend-invite link of the store: a known host
// and an invite path with a code after it.
func validInvite(text string) bool {
	if len(text) > maxInviteURL || strings.ContainsAny(text, " \t\n") {
		return false
	}
	u, err := url.Parse(text)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Port() != "" {
		return false
	}
	for _, prefix := range inviteHosts[strings.ToLower(u.Hostname())] {
		if code, ok := strings.CutPrefix(u.Path, prefix); ok && strings.Trim(code, "/") != "" {
			return true
		}
	}
	return false
}

// inviteReason says why text is not a friend-invite link, or "".
func inviteReason(env *flows.Env, text string) string {
	switch {
	case hasInvisible(text):
		return env.T("fields.invisible")
	case !validInvite(text):
		return env.T("gifts.bad_invite")
	}
	return ""
}

// Start opens the top games, or one game for a deep link (game-<app id>).
func (f *Gifts) Start(ctx context.Context, env *flows.Env, s *flows.Session, arg string) (*flows.Reply, error) {
	s.Step = sgGames
	if arg == "" {
		return f.ShowStep(ctx, env, f, s)
	}
	return f.openApp(ctx, env, s, arg)
}

// openApp opens a game's editions by app id.
func (f *Gifts) openApp(ctx context.Context, env *flows.Env, s *flows.Session, id string) (*flows.Reply, error) {
	app, err := strconv.ParseInt(id, 10, 64)
	if err != nil || app <= 0 {
		return f.Again(ctx, env, f, s, env.T("catalog.not_found"))
	}
	editions, _, err := f.Catalog.StoreGiftEditions(ctx, app)
	if err != nil {
		if errors.Is(err, flows.ErrNotFound) || errors.Is(err, flows.ErrInvalid) {
			return f.Again(ctx, env, f, s, env.T("catalog.not_found"))
		}
		return &flows.Reply{Screen: shop.FailScreen(env, err), Save: true}, nil
	}
	if len(editions) == 0 {
		return f.Again(ctx, env, f, s, env.T("gifts.no_editions"))
	}
	s.Set(keyApp, id)
	s.Set(keyAppName, f.appName(ctx, app))
	s.Set(shop.KeyPage, "")
	s.Goto(sgEditions)
	return f.ShowStep(ctx, env, f, s)
}

// appName is the game's name from the top list, or "" when it is not there.
func (f *Gifts) appName(ctx context.Context, app int64) string {
	games, _, err := f.Catalog.StoreGames(ctx)
	if err != nil {
		return ""
	}
	for _, g := range games {
		if g.ID == strconv.FormatInt(app, 10) {
			return g.Name
		}
	}
	return ""
}

// Handle takes choices, search text, an app id and the invite link.
func (f *Gifts) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.Confirm(ctx, env, f, s, ev, sgInvite); ok {
		return r, err
	}
	if ev.Kind != flows.EvButton {
		text := strings.TrimSpace(ev.Text)
		switch s.Step {
		case sgGames:
			if _, err := strconv.ParseInt(text, 10, 64); err == nil {
				return f.openApp(ctx, env, s, text)
			}
			if text == "" || len(text) > shop.MaxQuery {
				return f.Again(ctx, env, f, s, env.T("search.bad"))
			}
			s.Set(shop.KeyQuery, text)
			s.Set(shop.KeyPage, "")
			return f.ShowStep(ctx, env, f, s)
		case sgInvite:
			if reason := inviteReason(env, text); reason != "" {
				return f.Again(ctx, env, f, s, reason)
			}
			s.Set(keyInvite, text)
			return f.Quote(ctx, env, f, s)
		}
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	if r, ok, err := f.ListButton(ctx, env, f, s, ev.Button, ""); ok {
		return r, err
	}
	b := ev.Button
	switch b.Action {
	case actClear:
		s.Set(shop.KeyQuery, "")
		s.Set(shop.KeyPage, "")
	case shop.ActPick:
		id, ok := shop.Picked(s, b.Arg)
		if !ok {
			break
		}
		switch s.Step {
		case sgGames:
			return f.openApp(ctx, env, s, id)
		case sgEditions:
			s.Set(keyEdition, id)
			if r, ok := f.onlyRegion(ctx, s); ok {
				s.Set(keyRegion, r)
				s.Goto(sgInvite)
				break
			}
			s.Goto(sgRegions)
		case sgRegions:
			s.Set(keyRegion, id)
			s.Goto(sgInvite)
		}
		s.Set(shop.KeyPage, "")
	}
	return f.ShowStep(ctx, env, f, s)
}

// onlyRegion returns the chosen edition's region when it has exactly one
// the upstream balance covers: the regions step is then skipped, as a list
// of one button is not a choice.
func (f *Gifts) onlyRegion(ctx context.Context, s *flows.Session) (string, bool) {
	ed, _, err := f.edition(ctx, s)
	if err != nil || len(ed.Regions) != 1 || !f.Balance(ctx).Covers(ed.Regions[0].PriceUSD) {
		return "", false
	}
	return ed.Regions[0].Region, true
}

// edition returns the chosen edition of the chosen game.
func (f *Gifts) edition(ctx context.Context, s *flows.Session) (*flows.Edition, bool, error) {
	app := s.Int64(keyApp)
	editions, stale, err := f.Catalog.StoreGiftEditions(ctx, app)
	if err != nil {
		return nil, false, err
	}
	for i := range editions {
		if editions[i].ID == s.Get(keyEdition) {
			return &editions[i], stale, nil
		}
	}
	return nil, false, flows.NotFound("edition gone")
}

func (f *Gifts) gameLabel(s *flows.Session) string {
	if n := s.Get(keyAppName); n != "" {
		return n
	}
	return "App " + s.Get(keyApp)
}

func (f *Gifts) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	ed, stale, err := f.edition(ctx, s)
	if err != nil {
		return nil, false, err
	}
	for _, r := range ed.Regions {
		if r.Region == s.Get(keyRegion) {
			return &flows.Quote{
				Line: "gifts", Item: s.Get(keyEdition), Category: s.Get(keyApp),
				ItemName: f.gameLabel(s) + " — " + ed.Name + " (" + r.Region + ")",
				Fields:   map[string]string{"region": r.Region, "invite_url": s.Get(keyInvite), "app_name": s.Get(keyAppName)},
				For:      s.Get(keyInvite), Quantity: 1, UpstreamUSD: r.PriceUSD,
			}, stale, nil
		}
	}
	return nil, false, flows.NotFound("region gone")
}

// Show renders the current step.
func (f *Gifts) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), nil
	case shop.StepConfirm:
		return f.ShowConfirm(ctx, env, s)
	case sgInvite:
		ed, stale, err := f.edition(ctx, s)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		text := env.T("gifts.invite", "game", locales.Escape(f.gameLabel(s)), "edition", locales.Escape(ed.Name), "region", locales.Escape(s.Get(keyRegion)))
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: [][]flows.Button{shop.NavRow(env)}}, nil
	case sgRegions:
		ed, stale, err := f.edition(ctx, s)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		items := make([]shop.ListItem, 0, len(ed.Regions))
		Balance := f.Balance(ctx)
		for _, r := range ed.Regions {
			items = append(items, shop.PricedItem(r.Region, f.Pricing.Price(env.Lang, "gifts", r.PriceUSD), r.Region, Balance.Covers(r.PriceUSD)))
		}
		text := env.T("gifts.regions", "game", locales.Escape(f.gameLabel(s)), "edition", locales.Escape(ed.Name))
		text, rows := f.ListPage(env, s, text, items)
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: append(rows, shop.NavRow(env))}, nil
	case sgEditions:
		app := s.Int64(keyApp)
		editions, stale, err := f.Catalog.StoreGiftEditions(ctx, app)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		items := make([]shop.ListItem, 0, len(editions))
		Balance := f.Balance(ctx)
		for _, ed := range editions {
			if len(ed.Regions) == 0 {
				continue
			}
			lowest := ed.Regions[0].PriceUSD
			for _, r := range ed.Regions[1:] {
				if r.PriceUSD.LessThan(lowest) {
					lowest = r.PriceUSD
				}
			}
			label := ed.Name + " — " + env.T("gifts.from", "price", f.Pricing.Price(env.Lang, "gifts", lowest))
			items = append(items, shop.ListItem{Label: label, ID: ed.ID, Paused: !Balance.Covers(lowest)})
		}
		text := f.WithReviews(ctx, env, env.T("gifts.editions", "game", locales.Escape(f.gameLabel(s))), flows.ProductLink("gifts", s.Get(keyApp)))
		text, rows := f.ListPage(env, s, text, items)
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: append(rows, shop.NavRow(env))}, nil
	default:
		s.Step = sgGames
		games, stale, err := f.Catalog.StoreGames(ctx)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		q := strings.ToLower(s.Get(shop.KeyQuery))
		var items []shop.ListItem
		for _, g := range games {
			if q == "" || strings.Contains(strings.ToLower(g.Name), q) {
				items = append(items, shop.ListItem{Label: g.Name, ID: g.ID})
			}
		}
		text := env.T("gifts.games")
		if q != "" {
			text += "\n" + env.T("search.results", "q", locales.Escape(s.Get(shop.KeyQuery)))
			if len(items) == 0 {
				text += "\n\n" + env.T("gifts.none")
			}
		}
		text, rows := f.ListPage(env, s, text, items)
		if q != "" {
			rows = append(rows, []flows.Button{{Text: env.T("keys.btn_clear"), Action: actClear}})
		}
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: append(rows, shop.NavRow(env))}, nil
	}
}
