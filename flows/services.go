package flows

import (
	"context"
	"errors"

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

// Start opens the service list, or one service for a deep link (svc-<id>).
func (f *Services) Start(ctx context.Context, env *Env, s *Session, arg string) (*Reply, error) {
	s.Step = svList
	if arg == "" {
		return f.show(ctx, env, f, s)
	}
	if _, _, err := f.Catalog.ManualServiceOffers(ctx, arg); err != nil {
		if errors.Is(err, ErrNotFound) {
			return f.again(ctx, env, f, s, env.T("catalog.not_found"))
		}
		return &Reply{Screen: failScreen(env, err)}, nil
	}
	s.Set("svc", arg)
	s.Goto(svOffers)
	return f.show(ctx, env, f, s)
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
	b := ev.Button
	switch b.Action {
	case actBack:
		return f.back(ctx, env, f, s)
	case actPage:
		s.Set("page", b.Arg)
	case actNoop:
		return &Reply{NoScreen: true}, nil
	case actPick:
		id, ok := picked(s, b.Arg)
		if !ok {
			break
		}
		switch s.Step {
		case svList:
			s.Set("svc", id)
			s.Goto(svOffers)
		case svOffers:
			offers, _, err := f.Catalog.ManualServiceOffers(ctx, s.Get("svc"))
			if err != nil {
				return &Reply{Screen: failScreen(env, err), Save: true}, nil
			}
			s.Set("offer", id)
			askFields(s, offerFields(offers))
			if len(offers.Fields) == 0 {
				return f.quote(ctx, env, f, s)
			}
		}
		s.Set("page", "")
	}
	return f.show(ctx, env, f, s)
}

func (f *Services) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	offers, stale, err := f.Catalog.ManualServiceOffers(ctx, s.Get("svc"))
	if err != nil {
		return nil, false, err
	}
	values := fieldValues(s)
	if missing := offers.MissingFields(values); len(missing) > 0 {
		askFields(s, offerFields(offers))
		return nil, false, &badInput{env.T("fields.changed")}
	}
	if bad := firstInvalid(env, s); bad != nil {
		return nil, false, bad
	}
	for _, o := range offers.Offers {
		if o.ID == s.Get("offer") {
			return &Quote{
				Line: "services", Item: o.ID, Category: offers.CategoryID, ItemName: offers.Name + " — " + o.Name,
				Fields: values, For: fieldsFor(s), Quantity: 1, UpstreamUSD: o.PriceUSD,
			}, stale, nil
		}
	}
	return nil, false, notFound("offer gone")
}

// Show renders the current step.
func (f *Services) Show(ctx context.Context, env *Env, s *Session) (*Screen, error) {
	switch s.Step {
	case stepConfirm:
		return f.showConfirm(ctx, env, s)
	case stepFields:
		offers, stale, err := f.Catalog.ManualServiceOffers(ctx, s.Get("svc"))
		if err != nil {
			return failScreen(env, err), nil
		}
		title := env.T("svc.fields", "name", locales.Escape(clipName(offers.Name)))
		for _, o := range offers.Offers {
			if o.ID == s.Get("offer") {
				title = env.T("svc.fields_offer", "name", locales.Escape(clipName(offers.Name)), "offer", locales.Escape(clipName(o.Name)), "price", f.Pricing.Price(env.Lang, "services", o.PriceUSD))
			}
		}
		sc := fieldsScreen(env, s, title)
		sc.Text = withStale(env, sc.Text, stale)
		return sc, nil
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
		text, rows := f.listPage(env, s, text, items)
		return &Screen{Text: withStale(env, text, stale), Rows: append(rows, navRow(env))}, nil
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
		text, rows := f.listPage(env, s, text, items)
		return &Screen{Text: withStale(env, text, stale), Rows: append(rows, navRow(env))}, nil
	}
}
