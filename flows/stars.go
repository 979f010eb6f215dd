package flows

import (
	"context"
	"strconv"

	"shopbot/locales"
)

// The bounds of one Stars purchase, whatever the upstream allows.
const (
	MinStars = 50
	MaxStars = 10000
)

// Stars is the Telegram Stars line: recipient, then 50..10000 Stars.
type Stars struct{ *Shop }

// Start asks for the recipient.
func (f *Stars) Start(ctx context.Context, env *Env, s *Session, _ string) (*Reply, error) {
	s.Step = msUser
	return f.show(ctx, env, f, s)
}

// Handle takes the recipient and the quantity.
func (f *Stars) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, msQty); ok {
		return r, err
	}
	switch s.Step {
	case msUser:
		if reason, ok := askUser(env, s, ev); ok {
			if reason != "" {
				return f.again(ctx, env, f, s, reason)
			}
			s.Goto(msQty)
			return f.show(ctx, env, f, s)
		}
	case msQty:
		if ev.Kind != EvButton || ev.Button.Action == actQty {
			text := ev.Text
			if ev.Kind == EvButton {
				text = ev.Button.Arg
			}
			n, ok := parseQuantity(text)
			lo, hi := f.bounds(ctx)
			if !ok || n < lo || n > hi {
				return f.again(ctx, env, f, s, env.T("stars.bad_qty", "min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi))))
			}
			s.Set("qty", strconv.Itoa(n))
			return f.quote(ctx, env, f, s)
		}
	}
	if ev.Kind != EvButton {
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	switch ev.Button.Action {
	case actBack:
		return f.back(ctx, env, f, s)
	}
	return f.show(ctx, env, f, s)
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

func (f *Stars) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	p, stale, err := f.Catalog.StarsPricing(ctx)
	if err != nil {
		return nil, false, err
	}
	n, _ := strconv.Atoi(s.Get("qty"))
	return &Quote{
		Line: "stars", Item: "stars", ItemName: locales.N(env.Lang, "count.stars", int64(n)),
		Fields: map[string]string{"username": s.Get("user")}, For: "@" + s.Get("user"), Quantity: n,
		UpstreamUSD: p.PricePerStar.Mul(decimalInt(n)),
	}, stale, nil
}

// Show renders the current step.
func (f *Stars) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepPromo:
		return promoScreen(env), nil
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case msQty:
		p, stale, err := f.Catalog.StarsPricing(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		lo, hi := f.bounds(ctx)
		text := env.T("stars.qty", "username", locales.Escape(s.Get("user")),
			"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)),
			"price", f.Pricing.Price(env.Lang, "stars", p.PricePerStar.Mul(decimalInt(100))))
		rows := append(quickQuantities(env, lo, hi, []int{50, 100, 250, 500, 1000, 2500, 5000, 10000}), navRow(env))
		return &Screen{Text: withStale(env, text, stale), Rows: rows}, nil
	default:
		s.Step = msUser
		return userScreen(env, "stars.user"), nil
	}
}
