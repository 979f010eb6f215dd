package lines

import (
	"context"
	"shopbot/flows"
	"shopbot/flows/shop"
	"strconv"

	"shopbot/locales"
)

// The two shapes of an offers step the catalog lines share: items sold by
// the unit with a quantity (gift cards, game keys) and offers that need the
// buyer's fields (in-game top-ups, manual services).

// units describes a line of items sold by the unit: its offers come from
// one category (the session's cat key), the buyer picks one (item key) and
// a quantity at step qty.
type units struct {
	line      string
	cat, item string
	qty       string
	quick     []int // quick quantity buttons
	load      shop.Loader
}

// offer returns the item of the chosen category, with stale.
func (u *units) offer(ctx context.Context, s *flows.Session, id string) (*flows.Offer, bool, error) {
	_, o, stale, err := u.offerIn(ctx, s, id)
	return o, stale, err
}

// offerIn returns the chosen category and its item id, with stale.
func (u *units) offerIn(ctx context.Context, s *flows.Session, id string) (*flows.Offers, *flows.Offer, bool, error) {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return nil, nil, false, err
	}
	if o, ok := offers.Offer(id); ok {
		return offers, o, stale, nil
	}
	return nil, nil, false, flows.NotFound("item not offered")
}

// minQuantity is the least an order of o takes.
func minQuantity(o *flows.Offer) int { return max(o.MinQuantity, 1) }

// items are the category's items as a list: sold out and paused ones are
// only described.
func (u *units) items(env *flows.Env, sh *shop.Shop, f shop.Balance, offers *flows.Offers) []shop.ListItem {
	items := make([]shop.ListItem, 0, len(offers.Offers))
	for _, o := range offers.Offers {
		items = append(items, shop.OfferItem(env, sh.Pricing.Price(env.Lang, u.line, o.PriceUSD), o.Name, o.ID,
			o.Stock < minQuantity(&o), !f.Covers(o.PriceUSD.Mul(shop.DecimalInt(minQuantity(&o))))))
	}
	return items
}

// pick takes the item chosen on the list, unless it sold out or the
// balance cannot pay for it since the list was shown; r is then the alert.
func (u *units) pick(ctx context.Context, env *flows.Env, sh *shop.Shop, s *flows.Session, id string) (r *flows.Reply, ok bool) {
	o, _, err := u.offer(ctx, s, id)
	if err != nil {
		return nil, false
	}
	if o.Stock < minQuantity(o) {
		return &flows.Reply{Answer: env.T("gc.sold_out_alert"), Alert: true, NoScreen: true}, false
	}
	if !sh.Balance(ctx).Covers(o.PriceUSD.Mul(shop.DecimalInt(minQuantity(o)))) {
		return &flows.Reply{Answer: env.T("catalog.paused_alert"), Alert: true, NoScreen: true}, false
	}
	s.Set(u.item, id)
	s.Goto(u.qty)
	return nil, true
}

// setQuantity checks n against the item's bounds and stock, then quotes.
func (u *units) setQuantity(ctx context.Context, env *flows.Env, sh *shop.Shop, f shop.Pricer, s *flows.Session, n int) (*flows.Reply, error) {
	o, _, err := u.offer(ctx, s, s.Get(u.item))
	if err != nil {
		return &flows.Reply{Screen: shop.FailScreen(env, err), Save: true}, nil
	}
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		return sh.Again(ctx, env, f, s, reason)
	}
	s.Set("qty", strconv.Itoa(n))
	return sh.Quote(ctx, env, f, s)
}

// quantityReason says why n units cannot be ordered, or "".
func quantityReason(env *flows.Env, n, lo, hi, stock int) string {
	lo, hi = max(lo, 1), min(max(hi, 1), 100)
	switch {
	case n > stock && stock >= lo:
		return env.N("qty.stock", int64(stock))
	case n < lo || n > hi:
		return env.T("qty.range", "min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
	}
	return ""
}

// Price quotes the chosen quantity of the chosen item.
func (u *units) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	o, stale, err := u.offer(ctx, s, s.Get(u.item))
	if err != nil {
		return nil, false, err
	}
	n, _ := strconv.Atoi(s.Get("qty"))
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		s.Step = u.qty
		return nil, false, &shop.BadInput{Text: reason}
	}
	return &flows.Quote{
		Line: u.line, Item: o.ID, Category: s.Get(u.cat), ItemName: o.Name, Quantity: n,
		UpstreamUSD: o.PriceUSD.Mul(shop.DecimalInt(n)),
	}, stale, nil
}

// qtyScreen asks how many, within the bounds, the stock and what the
// balance pays for, under the category's image.
func (u *units) qtyScreen(ctx context.Context, env *flows.Env, sh *shop.Shop, s *flows.Session) *flows.Screen {
	offers, o, stale, err := u.offerIn(ctx, s, s.Get(u.item))
	if err != nil {
		return shop.FailScreen(env, err)
	}
	lo, hi := minQuantity(o), sh.Balance(ctx).Affordable(o.PriceUSD, min(o.MaxQuantity, o.Stock, 100))
	if hi < lo {
		return &flows.Screen{Text: env.T("catalog.paused_quote"), Rows: [][]flows.Button{shop.NavRow(env)}}
	}
	text := env.T("qty.prompt", "item", locales.Escape(shop.ClipName(o.Name)),
		"price", sh.Pricing.Price(env.Lang, u.line, o.PriceUSD),
		"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
	rows := append(shop.QuickQuantities(env, lo, hi, u.quick), shop.NavRow(env))
	return &flows.Screen{Text: shop.WithStale(env, text, stale), Rows: rows, Image: offers.Image}
}

// handleQty takes a quantity typed or pressed at the quantity step; it
// reports false for anything else.
func (u *units) handleQty(ctx context.Context, env *flows.Env, sh *shop.Shop, f shop.Pricer, s *flows.Session, ev flows.Event) (*flows.Reply, bool, error) {
	switch {
	case ev.Kind == flows.EvButton && ev.Button.Action == shop.ActQty:
		n, _ := strconv.Atoi(ev.Button.Arg)
		r, err := u.setQuantity(ctx, env, sh, f, s, n)
		return r, true, err
	case ev.Kind != flows.EvButton && s.Step == u.qty:
		n, ok := shop.ParseQuantity(ev.Text)
		if !ok {
			r, err := sh.Again(ctx, env, f, s, env.T("qty.bad_number"))
			return r, true, err
		}
		r, err := u.setQuantity(ctx, env, sh, f, s, n)
		return r, true, err
	}
	return nil, false, nil
}

// fielded describes a line whose offers need the buyer's fields: the
// offers of one category (the session's cat key), an offer, then the
// category's fields one by one.
type fielded struct {
	line             string
	cat              string
	title, withOffer string // locale keys of the fields step's title
	load             shop.Loader
}

// pick takes the offer chosen and asks the category's fields, or quotes
// at once when there are none.
func (u *fielded) pick(ctx context.Context, env *flows.Env, sh *shop.Shop, f shop.Pricer, s *flows.Session, id string) (*flows.Reply, error) {
	offers, _, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return &flows.Reply{Screen: shop.FailScreen(env, err), Save: true}, nil
	}
	s.Set("offer", id)
	fields := offerFields(offers)
	askFields(s, fields)
	if len(fields) == 0 {
		return sh.Quote(ctx, env, f, s)
	}
	return nil, nil
}

// offerFields are a category's buyer fields, typed as the upstream
// declares or as their keys and labels say.
func offerFields(o *flows.Offers) []field {
	var fields []field
	for _, fl := range o.Fields {
		fields = append(fields, newField(fl.Key, fl.Label, fl.Type, fl.Options))
	}
	return fields
}

// Price quotes the chosen offer with the buyer's answers.
func (u *fielded) Price(ctx context.Context, env *flows.Env, s *flows.Session) (*flows.Quote, bool, error) {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return nil, false, err
	}
	values := fieldValues(s)
	if missing := offers.MissingFields(values); len(missing) > 0 {
		// The category's fields changed since they were asked: ask again.
		askFields(s, offerFields(offers))
		return nil, false, &shop.BadInput{Text: env.T("fields.changed")}
	}
	if bad := firstInvalid(env, s); bad != nil {
		return nil, false, bad
	}
	if o, ok := offers.Offer(s.Get("offer")); ok {
		return &flows.Quote{
			Line: u.line, Item: o.ID, Category: offers.CategoryID, ItemName: offers.Name + " — " + o.Name,
			Fields: values, For: fieldsFor(s), Quantity: 1, UpstreamUSD: o.PriceUSD,
		}, stale, nil
	}
	return nil, false, flows.NotFound("offer gone")
}

// fieldsScreen asks the current field, under the category (and its image)
// and the offer.
func (u *fielded) fieldsScreen(ctx context.Context, env *flows.Env, sh *shop.Shop, s *flows.Session) *flows.Screen {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return shop.FailScreen(env, err)
	}
	name := locales.Escape(shop.ClipName(offers.Name))
	title := env.T(u.title, "name", name)
	if o, ok := offers.Offer(s.Get("offer")); ok {
		title = env.T(u.withOffer, "name", name, "offer", locales.Escape(shop.ClipName(o.Name)), "price", sh.Pricing.Price(env.Lang, u.line, o.PriceUSD))
	}
	sc := fieldsScreen(env, s, title)
	sc.Text = shop.WithStale(env, sc.Text, stale)
	sc.Image = offers.Image
	return sc
}

// handle takes what every fielded line takes before its own steps: the
// confirm screen's buttons and the answers to the fields (f is the line).
func (u *fielded) handle(ctx context.Context, env *flows.Env, sh *shop.Shop, f shop.Pricer, s *flows.Session, ev flows.Event) (*flows.Reply, bool, error) {
	if r, ok, err := sh.Confirm(ctx, env, f, s, ev, stepFields); ok {
		return r, true, err
	}
	return fieldsHandle(ctx, sh, env, f, s, ev)
}

// show renders the steps every fielded line has: the promo code, the
// confirm screen and the fields; ok is false at the line's own steps.
func (u *fielded) show(ctx context.Context, env *flows.Env, sh *shop.Shop, s *flows.Session) (sc *flows.Screen, ok bool, err error) {
	switch s.Step {
	case shop.StepPromo:
		return shop.PromoScreen(env), true, nil
	case shop.StepConfirm:
		sc, err := sh.ShowConfirm(ctx, env, s)
		return sc, true, err
	case stepFields:
		return u.fieldsScreen(ctx, env, sh, s), true, nil
	}
	return nil, false, nil
}

// offersScreen lists the chosen category's offers under the locale key
// title (given the category's name), with the category's note and image.
// describe, when not nil, adds to an offer's item on the list.
func (u *fielded) offersScreen(ctx context.Context, env *flows.Env, sh *shop.Shop, s *flows.Session, title string, describe func(o *flows.Offer, price string, it *shop.ListItem)) *flows.Screen {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return shop.FailScreen(env, err)
	}
	text := env.T(title, "name", locales.Escape(shop.ClipName(offers.Name)))
	if offers.Note != "" {
		text += "\n" + shop.Note(env, offers.Note, shop.MaxNoteLen)
	}
	items := make([]shop.ListItem, 0, len(offers.Offers))
	balance := sh.Balance(ctx)
	for i := range offers.Offers {
		o := &offers.Offers[i]
		price := sh.Pricing.Price(env.Lang, u.line, o.PriceUSD)
		it := shop.PricedItem(o.Name, price, o.ID, balance.Covers(o.PriceUSD))
		if describe != nil {
			describe(o, price, &it)
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		text += "\n\n" + env.T("catalog.empty")
	}
	sc := sh.ListScreen(env, s, text, items, stale)
	sc.Image = offers.Image
	return sc
}
