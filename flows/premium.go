package flows

import (
	"context"
	"strconv"

	"shopbot/locales"
)

// Premium is the Telegram Premium line: recipient, then 3, 6 or 12 months.
type Premium struct{ *Shop }

// Start asks for the recipient.
func (f *Premium) Start(ctx context.Context, env *Env, s *Session, _ string) (*Reply, error) {
	s.Step = msUser
	return f.show(ctx, env, f, s)
}

// Handle takes the recipient and the plan.
func (f *Premium) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, msPlan); ok {
		return r, err
	}
	if s.Step == msUser {
		if reason, ok := askUser(env, s, ev); ok {
			if reason != "" {
				return f.again(ctx, env, f, s, reason)
			}
			s.Goto(msPlan)
			return f.show(ctx, env, f, s)
		}
	}
	if ev.Kind != EvButton {
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	switch ev.Button.Action {
	case actBack:
		return f.back(ctx, env, f, s)
	case actQty:
		if s.Step == msPlan {
			if _, err := f.plan(ctx, ev.Button.Arg); err == nil {
				s.Set("months", ev.Button.Arg)
				return f.quote(ctx, env, f, s)
			}
		}
	}
	return f.show(ctx, env, f, s)
}

func (f *Premium) plan(ctx context.Context, months string) (*PremiumPlan, error) {
	plans, _, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, err
	}
	for i := range plans {
		if strconv.Itoa(plans[i].Months) == months {
			return &plans[i], nil
		}
	}
	return nil, notFound("no such plan")
}

func (f *Premium) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	plans, stale, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, pl := range plans {
		if strconv.Itoa(pl.Months) == s.Get("months") {
			return &Quote{
				Line: "premium", Item: s.Get("months"), ItemName: env.T("premium.item", "months", env.N("count.months", int64(pl.Months))),
				Fields: map[string]string{"username": s.Get("user")}, For: "@" + s.Get("user"), Quantity: 1, UpstreamUSD: pl.PriceUSD,
			}, stale, nil
		}
	}
	return nil, false, notFound("no such plan")
}

// Show renders the current step.
func (f *Premium) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepPromo:
		return promoScreen(env), nil
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case msPlan:
		plans, stale, err := f.Catalog.PremiumPlans(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		sc := &Screen{Text: withStale(env, env.T("premium.plan", "username", locales.Escape(s.Get("user"))), stale)}
		funds := f.funds(ctx)
		for _, pl := range plans {
			label := env.T("premium.plan_btn", "months", env.N("count.months", int64(pl.Months)), "price", f.Pricing.Price(env.Lang, "premium", pl.PriceUSD))
			if !funds.covers(pl.PriceUSD) {
				sc.Rows = append(sc.Rows, []Button{{Text: pausedLabel(env, label), Action: actPaused}})
				continue
			}
			sc.Rows = append(sc.Rows, []Button{{Text: label, Action: actQty, Arg: strconv.Itoa(pl.Months)}})
		}
		sc.Rows = append(sc.Rows, navRow(env))
		return sc, nil
	default:
		s.Step = msUser
		return userScreen(env, "premium.user"), nil
	}
}
