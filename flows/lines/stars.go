package lines

import (
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"

	"shopbot/locales"
)

// The bounds of one Stars purchase, whatever the upstream allows.
const (
	MinStars = 50
	MaxStars = 10000
)

// Stars is the Telegram Stars line: recipient, then 50..10000 Stars.
type Stars struct{ *shop.Shop }

// Start asks for the recipient.
func (f *Stars) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = msUser
	return f.ShowStep(ctx, env, f, s)
}

// Handle takes the recipient and the quantity.
func (f *Stars) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.Confirm(ctx, env, f, s, ev, msQty); ok {
		return r, err
	}
	switch s.Step {
	case msUser:
		if reason, ok := askUser(env, s, ev); ok {
			if reason != "" {
				return f.Again(ctx, env, f, s, reason)
			}
			s.Goto(msQty)
			return f.ShowStep(ctx, env, f, s)
		}
	case msQty:
		if ev.Kind != flows.EvButton || ev.Button.Action == shop.ActQty {
			text := ev.Text
			if ev.Kind == flows.EvButton {
				text = ev.Button.Arg
			}
			n, ok := shop.ParseQuantity(text)
			if reason := f.qtyReason(ctx, env, n, ok); reason != "" {
				return f.Again(ctx, env, f, s, reason)
			}
			s.SetInt(keyQty, int64(n))
			return f.Quote(ctx, env, f, s)
		}
	}
	if ev.Kind != flows.EvButton {
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	switch ev.Button.Action {
	case shop.ActBack:
		return f.Back(ctx, env, f, s)
	}
	return f.ShowStep(ctx, env, f, s)
}

// starsQuick are the quick quantities offered (the chat's buttons, the
// Mini App's items), those within the bounds.
var starsQuick = []int{50, 100, 250, 500, 1000, 2500, 5000, 10000}

// qtyReason says why n Stars (ok false: not a number) cannot be ordered,
// or "": the chat's check of a typed or tapped quantity and the Mini
// App's of its item.
func (f *Stars) qtyReason(ctx context.Context, env *flows.Env, n int, ok bool) string {
	lo, hi := f.bounds(ctx)
	if !ok || n < lo || n > hi {
		return env.T("stars.bad_qty", "min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
	}
	return ""
}

// bounds is the quantity range: the upstream's, within 50..10000.
func (f *Stars) bounds(ctx context.Context) (int, int) {
	lo, hi := MinStars, MaxStars
	if p, _, err := f.Catalog.StarsPricing(ctx); err == nil {
		if p.Min > lo {
			lo = p.Min
		}
		if p.Max > 0 && p.Max < hi {
			hi = p.Max
		}
	}
	return lo, hi
}

func (f *Stars) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	p, stale, err := f.Catalog.StarsPricing(ctx)
	if err != nil {
		return nil, false, err
	}
	n := s.Int(keyQty)
	return &flows.Quote{
		Line: "stars", Item: "stars", ItemName: locales.N(env.Lang, "count.stars", int64(n)),
		Fields: map[string]string{"username": s.Get(keyUser)}, For: "@" + s.Get(keyUser), Quantity: n,
		UpstreamUSD: p.PricePerStar.Mul(shop.DecimalInt(n)),
	}, stale, nil
}

// Show renders the current step.
func (f *Stars) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), nil
	case shop.StepConfirm:
		return f.ShowConfirm(ctx, env, s)
	case msQty:
		p, stale, err := f.Catalog.StarsPricing(ctx)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		lo, hi := f.bounds(ctx)
		text := env.T("stars.qty", "username", locales.Escape(s.Get(keyUser)),
			"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)),
			"price", f.Pricing.Price(env.Lang, "stars", p.PricePerStar.Mul(shop.DecimalInt(100))))
		rows := append(shop.QuickQuantities(env, lo, hi, starsQuick), shop.NavRow(env))
		return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: rows}, nil
	default:
		s.Step = msUser
		return userScreen(env, "stars.user"), nil
	}
}
