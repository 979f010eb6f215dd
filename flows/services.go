package flows

import (
	"context"

	"shopbot/locales"
)

// Services is the manual-services line: services -> offers -> the
// service's fields -> quote.
type Services struct{ *Shop }

// Manual-service steps.
const (
	svList   = "services"
	svOffers = "offers"
)

func (f *Services) fielded() *fielded {
	return &fielded{line: "services", cat: "svc", title: "svc.fields", withOffer: "svc.fields_offer", load: f.Catalog.ManualServiceOffers}
}

// Start opens the service list, or one service for a deep link (svc-<id>).
func (f *Services) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	return f.openCategory(ctx, env, f, s, arg, svList, "svc", svOffers, f.Catalog.ManualServiceOffers)
}

// Handle takes choices and field answers.
func (f *Services) Handle(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
	if r, ok, err := f.confirm(ctx, env, f, s, ev, stepFields); ok {
		return r, err
	}
	if r, ok, err := f.fieldsHandle(ctx, env, f, s, ev); ok {
		return r, err
	}
	if ev.Kind != EvButton {
		return f.again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	if r, ok, err := f.listButton(ctx, env, f, s, ev.Button, ""); ok {
		return r, err
	}
	if id, ok := picked(s, ev.Button.Arg); ok && ev.Button.Action == actPick {
		switch s.Step {
		case svList:
			s.Set("svc", id)
			s.Goto(svOffers)
		case svOffers:
			if r, err := f.fielded().pick(ctx, env, f.Shop, f, s, id); r != nil || err != nil {
				return r, err
			}
		}
		s.Set("page", "")
	}
	return f.show(ctx, env, f, s)
}

func (f *Services) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	return f.fielded().price(ctx, env, s)
}

// Show renders the current step.
func (f *Services) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepPromo:
		return promoScreen(env), nil
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case stepFields:
		return f.fielded().fieldsScreen(ctx, env, f.Shop, s), nil
	case svOffers:
		offers, stale, err := f.Catalog.ManualServiceOffers(ctx, s.Get("svc"))
		if err != nil {
			return failScreen(env, err), nil
		}
		text := env.T("svc.offers", "name", locales.Escape(clipName(offers.Name)))
		if offers.Note != "" {
			text += "\n<i>" + locales.Escape(locales.Clip(offers.Note, maxNoteLen)) + "</i>"
		}
		items := make([]listItem, 0, len(offers.Offers))
		funds := f.funds(ctx)
		for _, o := range offers.Offers {
			price := f.Pricing.Price(env.Lang, "services", o.PriceUSD)
			line := "\n" + env.T("gc.card_line", "name", locales.Escape(clipName(o.Name)), "price", price)
			if o.DeliveryMinutes != nil {
				line += "\n" + env.N("svc.delivery", int64(*o.DeliveryMinutes))
			}
			if o.Note != "" {
				line += "\n<i>" + locales.Escape(locales.Clip(o.Note, maxNameLen)) + "</i>"
			}
			it := pricedItem(o.Name, price, o.ID, funds.covers(o.PriceUSD))
			if it.Paused {
				line = "\n" + env.T("catalog.paused_line", "name", locales.Escape(clipName(o.Name)))
			}
			it.Line = line
			items = append(items, it)
		}
		if len(items) == 0 {
			text += "\n\n" + env.T("catalog.empty")
		}
		sc := f.listScreen(env, s, text, items, stale)
		sc.Image = offers.Image
		return sc, nil
	default:
		s.Step = svList
		list, stale, err := f.Catalog.ManualServices(ctx)
		if err != nil {
			return failScreen(env, err), nil
		}
		items := make([]listItem, 0, len(list))
		for _, sv := range list {
			items = append(items, listItem{Label: sv.Name, ID: sv.ID})
		}
		text := env.T("svc.list")
		if len(items) == 0 {
			text += "\n\n" + env.T("catalog.empty")
		}
		return f.listScreen(env, s, text, items, stale), nil
	}
}
