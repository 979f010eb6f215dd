package lines

import (
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"
	"strconv"

	"shopbot/locales"
)

// Premium is the Telegram Premium line: recipient, then 3, 6 or 12 months.
type Premium struct{ *shop.Shop }

// keyMonths is the plan chosen: its months, as its button's arg.
const keyMonths flows.Key = "months"

// Start asks for the recipient.
func (f *Premium) Start(ctx context.Context, env *flows.Env, s *flows.Session, _ string) (*flows.Reply, error) {
	s.Step = msUser
	return f.ShowStep(ctx, env, f, s)
}

// Handle takes the recipient and the plan.
func (f *Premium) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.Confirm(ctx, env, f, s, ev, msPlan); ok {
		return r, err
	}
	if s.Step == msUser {
		if reason, ok := askUser(env, s, ev); ok {
			if reason != "" {
				return f.Again(ctx, env, f, s, reason)
			}
			s.Goto(msPlan)
			return f.ShowStep(ctx, env, f, s)
		}
	}
	if ev.Kind != flows.EvButton {
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	switch ev.Button.Action {
	case shop.ActBack:
		return f.Back(ctx, env, f, s)
	case shop.ActQty:
		if s.Step == msPlan {
			if _, err := f.plan(ctx, ev.Button.Arg); err == nil {
				s.Set(keyMonths, ev.Button.Arg)
				return f.Quote(ctx, env, f, s)
			}
		}
	}
	return f.ShowStep(ctx, env, f, s)
}

func (f *Premium) plan(ctx context.Context, months string) (*flows.PremiumPlan, error) {
	plans, _, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, err
	}
	for i := range plans {
		if strconv.Itoa(plans[i].Months) == months {
			return &plans[i], nil
		}
	}
	return nil, flows.NotFound("no such plan")
}

func (f *Premium) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	plans, stale, err := f.Catalog.PremiumPlans(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, pl := range plans {
		if strconv.Itoa(pl.Months) == s.Get(keyMonths) {
			return &flows.Quote{
				Line: "premium", Item: s.Get(keyMonths), ItemName: env.T("premium.item", "months", env.N("count.months", int64(pl.Months))),
				Fields: map[string]string{"username": s.Get(keyUser)}, For: "@" + s.Get(keyUser), Quantity: 1, UpstreamUSD: pl.PriceUSD,
			}, stale, nil
		}
	}
	return nil, false, flows.NotFound("no such plan")
}

// Show renders the current step.
func (f *Premium) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), nil
	case shop.StepConfirm:
		return f.ShowConfirm(ctx, env, s)
	case msPlan:
		plans, stale, err := f.Catalog.PremiumPlans(ctx)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		sc := &flows.Screen{Text: shop.WithStale(env, env.T("premium.plan", "username", locales.Escape(s.Get(keyUser))), stale)}
		Balance := f.Balance(ctx)
		for _, pl := range plans {
			label := env.T("premium.plan_btn", "months", env.N("count.months", int64(pl.Months)), "price", f.Pricing.Price(env.Lang, "premium", pl.PriceUSD))
			if !Balance.Covers(pl.PriceUSD) {
				sc.Rows = append(sc.Rows, []flows.Button{{Text: shop.PausedLabel(env, label), Action: shop.ActPaused}})
				continue
			}
			sc.Rows = append(sc.Rows, []flows.Button{{Text: label, Action: shop.ActQty, Arg: strconv.Itoa(pl.Months)}})
		}
		sc.Rows = append(sc.Rows, shop.NavRow(env))
		return sc, nil
	default:
		s.Step = msUser
		return userScreen(env, "premium.user"), nil
	}
}
