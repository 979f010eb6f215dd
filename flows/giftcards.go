package flows

import (
	"context"
	"errors"
	"strconv"
	"strings"

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

// maxQuery caps a search text.
const maxQuery = 64

// Start opens the brand list, or one category for a deep link (gc-<id>).
func (g *GiftCards) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	s.Step = gcBrands
	if arg == "" {
		return g.show(ctx, env, g, s)
	}
	if _, _, err := g.Catalog.GiftCardOffers(ctx, arg); err != nil {
		if errors.Is(err, ErrNotFound) {
			return g.again(ctx, env, g, s, env.T("catalog.not_found"))
		}
		return &Reply{Screen: failScreen(env, err)}, nil
	}
	s.Set("cat", arg)
	s.Goto(gcCards)
	return g.show(ctx, env, g, s)
}

// Handle takes the buyer's choices, search text and quantity.
func (g *GiftCards) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := g.confirm(ctx, env, g, s, ev, gcQty); ok {
		return r, err
	}
	if ev.Kind != EvButton {
		switch s.Step {
		case gcBrands, gcSearch, gcResults:
			q := strings.TrimSpace(ev.Text)
			if q == "" || len(q) > maxQuery {
				return g.again(ctx, env, g, s, env.T("search.bad"))
			}
			if r, err := g.limited(ctx, env); r != nil || err != nil {
				return r, err // a new search text may cost an upstream call
			}
			s.Set("q", q)
			s.Set("page", "")
			if s.Step == gcSearch {
				s.Step = gcResults
			} else if s.Step != gcResults {
				s.Goto(gcResults)
			}
			return g.show(ctx, env, g, s)
		case gcQty:
			n, ok := parseQuantity(ev.Text)
			if !ok {
				return g.again(ctx, env, g, s, env.T("qty.bad_number"))
			}
			return g.setQuantity(ctx, env, s, n)
		}
		return g.again(ctx, env, g, s, env.T("err.use_buttons"))
	}
	b := ev.Button
	switch b.Action {
	case actBack:
		return g.back(ctx, env, g, s)
	case actPage:
		s.Set("page", b.Arg)
		return g.show(ctx, env, g, s)
	case actNoop:
		return &Reply{NoScreen: true}, nil
	case actRetry:
		return g.show(ctx, env, g, s)
	case actSearch:
		s.Goto(gcSearch)
		return g.show(ctx, env, g, s)
	case actQty:
		n, _ := strconv.Atoi(b.Arg)
		return g.setQuantity(ctx, env, s, n)
	case actPick:
		id, ok := picked(s, b.Arg)
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
			o, _, err := g.offer(ctx, s.Get("cat"), id)
			if err != nil {
				return g.show(ctx, env, g, s)
			}
			if o.Stock < max(o.MinQuantity, 1) {
				return &Reply{Answer: env.T("gc.sold_out_alert"), Alert: true, NoScreen: true}, nil
			}
			if !g.funds(ctx).covers(o.PriceUSD.Mul(decimalInt(max(o.MinQuantity, 1)))) {
				return &Reply{Answer: env.T("catalog.paused_alert"), Alert: true, NoScreen: true}, nil
			}
			s.Set("card", id)
			s.Goto(gcQty)
		default:
			return g.show(ctx, env, g, s)
		}
		s.Set("page", "")
		return g.show(ctx, env, g, s)
	}
	return g.show(ctx, env, g, s)
}

// setQuantity checks n against the card's bounds and stock, then quotes.
func (g *GiftCards) setQuantity(ctx context.Context, env *Env, s *Session, n int) (*Reply, error) {
	o, _, err := g.offer(ctx, s.Get("cat"), s.Get("card"))
	if err != nil {
		return &Reply{Screen: failScreen(env, err), Save: true}, nil
	}
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		return g.again(ctx, env, g, s, reason)
	}
	s.Set("qty", strconv.Itoa(n))
	return g.quote(ctx, env, g, s)
}

// quantityReason says why n units cannot be ordered, or "".
func quantityReason(env *Env, n, lo, hi, stock int) string {
	lo, hi = max(lo, 1), min(max(hi, 1), 100)
	switch {
	case n > stock && stock >= lo:
		return env.N("qty.stock", int64(stock))
	case n < lo || n > hi:
		return env.T("qty.range", "min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
	}
	return ""
}

func (g *GiftCards) offer(ctx context.Context, cat, card string) (*Offer, bool, error) {
	offers, stale, err := g.Catalog.GiftCardOffers(ctx, cat)
	if err != nil {
		return nil, false, err
	}
	if o, ok := offers.offer(card); ok {
		return o, stale, nil
	}
	return nil, false, notFound("card not offered")
}

func (g *GiftCards) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	o, stale, err := g.offer(ctx, s.Get("cat"), s.Get("card"))
	if err != nil {
		return nil, false, err
	}
	n, _ := strconv.Atoi(s.Get("qty"))
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		s.Step = gcQty
		return nil, false, &badInput{reason}
	}
	return &Quote{
		Line: "giftcards", Item: o.ID, Category: s.Get("cat"), ItemName: o.Name, Quantity: n,
		UpstreamUSD: o.PriceUSD.Mul(decimalInt(n)),
	}, stale, nil
}

// Show renders the current step.
func (g *GiftCards) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepConfirm:
		return g.showConfirm(ctx, env, s)
	case gcSearch:
		return &Screen{Text: env.T("search.prompt"), Rows: [][]Button{navRow(env)}}, nil
	case gcResults:
		cats, stale, err := g.Catalog.GiftCardSearch(ctx, s.Get("q"))
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
		text, rows := g.listPage(env, s, text, items)
		rows = append(rows, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	case gcRegions:
		brands, stale, err := g.Catalog.GiftCardBrands(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		var items []listItem
		for _, b := range brands {
			if b.Name != s.Get("brand") {
				continue
			}
			for _, sub := range b.Categories {
				label := sub.Region
				if label == "" {
					label = env.T("gc.any_region")
				}
				items = append(items, listItem{Label: label, ID: sub.ID})
			}
		}
		text := env.T("gc.regions", "brand", locales.Escape(clipName(s.Get("brand"))))
		text, rows := g.listPage(env, s, text, items)
		rows = append(rows, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	case gcCards:
		offers, stale, err := g.Catalog.GiftCardOffers(ctx, s.Get("cat"))
		if err != nil {
			return failScreen(env, err), nil
		}
		var items []listItem
		funds := g.funds(ctx)
		for _, o := range offers.Offers {
			items = append(items, offerItem(env, g.Pricing.Price(env.Lang, "giftcards", o.PriceUSD), o.Name, o.ID,
				o.Stock < max(o.MinQuantity, 1), !funds.covers(o.PriceUSD.Mul(decimalInt(max(o.MinQuantity, 1))))))
		}
		text := env.T("gc.cards", "name", locales.Escape(clipName(offers.Name)))
		if len(items) == 0 {
			text += "\n" + env.T("catalog.empty")
		}
		text, rows := g.listPage(env, s, text, items)
		rows = append(rows, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	case gcQty:
		o, stale, err := g.offer(ctx, s.Get("cat"), s.Get("card"))
		if err != nil {
			return failScreen(env, err), nil
		}
		lo, hi := max(o.MinQuantity, 1), g.funds(ctx).affordable(o.PriceUSD, min(o.MaxQuantity, o.Stock, 100))
		if hi < lo {
			return &Screen{Text: env.T("catalog.paused_quote"), Rows: [][]Button{navRow(env)}}, nil
		}
		text := env.T("qty.prompt", "item", locales.Escape(clipName(o.Name)),
			"price", g.Pricing.Price(env.Lang, "giftcards", o.PriceUSD),
			"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
		rows := append(quickQuantities(env, lo, hi, []int{1, 2, 3, 5, 10, 20, 50, 100}), navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	default: // brands
		s.Step = gcBrands
		brands, stale, err := g.Catalog.GiftCardBrands(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		items := make([]listItem, 0, len(brands))
		for _, b := range brands {
			if len(b.Categories) > 0 {
				items = append(items, listItem{Label: b.Name, ID: b.Name})
			}
		}
		text, rows := g.listPage(env, s, env.T("gc.brands"), items)
		rows = append(rows, []Button{{Text: env.T("btn.search"), Action: actSearch}}, navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	}
}
