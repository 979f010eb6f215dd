package lines

import (
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"

	"shopbot/locales"
)

// Services is the manual-services line: services -> offers -> the
// service's fields -> quote.
type Services struct{ *shop.Shop }

// Manual-service steps.
const (
	svList   = "services"
	svOffers = "offers"
)

// keyService is the service chosen (its category id).
const keyService flows.Key = "svc"

func (f *Services) fielded() *fielded {
	return &fielded{line: "services", cat: keyService, title: "svc.fields", withOffer: "svc.fields_offer", load: f.Catalog.ManualServiceOffers}
}

// Start opens the service list, or one service for a deep link (svc-<id>).
func (f *Services) Start(ctx context.Context, env *flows.Env, s *flows.Session, arg string) (*flows.Reply, error) {
	return f.OpenCategory(ctx, env, f, s, arg, svList, keyService, svOffers, f.Catalog.ManualServiceOffers)
}

// Handle takes choices and field answers.
func (f *Services) Handle(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	if r, ok, err := f.fielded().handle(ctx, env, f.Shop, f, s, ev); ok {
		return r, err
	}
	if ev.Kind != flows.EvButton {
		return f.Again(ctx, env, f, s, env.T("err.use_buttons"))
	}
	if r, ok, err := f.ListButton(ctx, env, f, s, ev.Button, ""); ok {
		return r, err
	}
	if id, ok := shop.Picked(s, ev.Button.Arg); ok && ev.Button.Action == shop.ActPick {
		switch s.Step {
		case svList:
			s.Set(keyService, id)
			s.Goto(svOffers)
		case svOffers:
			if r, err := f.fielded().pick(ctx, env, f.Shop, f, s, id); r != nil || err != nil {
				return r, err
			}
		}
		s.Set(shop.KeyPage, "")
	}
	return f.ShowStep(ctx, env, f, s)
}

func (f *Services) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	return f.fielded().Price(ctx, env, s)
}

// Show renders the current step.
func (f *Services) Show(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Screen, error) {
	if sc, ok, err := f.fielded().show(ctx, env, f.Shop, s); ok {
		return sc, err
	}
	switch s.Step {
	case svOffers:
		return f.fielded().offersScreen(ctx, env, f.Shop, s, "svc.offers", serviceLine(env)), nil
	default:
		s.Step = svList
		list, stale, err := f.Catalog.ManualServices(ctx)
		if err != nil {
			return shop.FailScreen(env, err), nil
		}
		items := make([]shop.ListItem, 0, len(list))
		for _, sv := range list {
			items = append(items, shop.ListItem{Label: sv.Name, ID: sv.ID})
		}
		text := env.T("svc.list")
		if len(items) == 0 {
			text += "\n\n" + env.T("catalog.empty")
		}
		return f.ListScreen(env, s, text, items, stale), nil
	}
}

// serviceLine describes a manual service's product on the list: its
// price, expected delivery and note (a paused one only by name).
func serviceLine(env *flows.Env) func(o *flows.Offer, price string, it *shop.ListItem) {
	return func(o *flows.Offer, price string, it *shop.ListItem) {
		if it.Paused {
			it.Line = "\n" + env.T("catalog.paused_line", "name", locales.Escape(shop.ClipName(o.Name)))
			return
		}
		line := "\n" + env.T("gc.card_line", "name", locales.Escape(shop.ClipName(o.Name)), "price", price)
		if o.DeliveryMinutes != nil {
			line += "\n" + env.N("svc.delivery", int64(*o.DeliveryMinutes))
		}
		if o.Note != "" {
			line += "\n" + shop.Note(env, o.Note, shop.MaxNameLen)
		}
		it.Line = line
	}
}
