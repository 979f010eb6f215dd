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

// Session variables of the offers steps.
const (
	// keyCategory is the category chosen (its id): a gift card's region,
	// an in-game top-up's game.
	keyCategory flows.Key = "cat"
	// keyQty is the quantity chosen (a number).
	keyQty flows.Key = "qty"
	// keyOffer is the offer chosen (its id) of a line that asks fields.
	keyOffer flows.Key = "offer"
)

// units describes a line of items sold by the unit: its offers come from
// one category (kept under the cat key), the buyer picks one (kept under
// the item key) and a quantity (keyQty) at step qty.
type units struct {
	line      string
	cat, item flows.Key
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

// notify takes the "notify me" button of a sold-out item at the offers
// step (counted against the rate limit): the buyer is told once when it is
// back; an item in stock again since the list was shown is shown again.
// It reports false for other buttons.
func (u *units) notify(ctx context.Context, env *flows.Env, sh *shop.Shop, f flows.Flow, s *flows.Session, ev flows.Event) (*flows.Reply, bool, error) {
	if ev.Kind != flows.EvButton || ev.Button.Action != shop.ActNotify || sh.Restock == nil {
		return nil, false, nil
	}
	id, ok := shop.Picked(s, ev.Button.Arg)
	if !ok {
		r, err := sh.ShowStep(ctx, env, f, s)
		return r, true, err
	}
	o, _, err := u.offer(ctx, s, id)
	if err != nil || o.Stock >= minQuantity(o) {
		r, err := sh.ShowStep(ctx, env, f, s)
		return r, true, err
	}
	if r, err := sh.Limited(ctx, env); r != nil || err != nil {
		return r, true, err
	}
	added, err := sh.Restock.Watch(ctx, flows.Watch{
		User: env.User.ID, Chat: env.User.ID, Lang: string(env.Lang),
		Line: u.line, Category: s.Get(u.cat), Item: id, Name: o.Name,
	})
	if err != nil {
		return nil, true, err
	}
	key := "restock.watching"
	if !added {
		key = "restock.already"
	}
	return &flows.Reply{Answer: env.T(key, "item", locales.Clip(o.Name, 60)), Alert: true, NoScreen: true}, true, nil
}

// minQuantity is the least an order of o takes.
func minQuantity(o *flows.Offer) int { return max(o.MinQuantity, 1) }

// items are the category's items as a list: sold out and paused ones are
// only described.
func (u *units) items(env *flows.Env, sh *shop.Shop, f shop.Balance, offers *flows.Offers) []shop.ListItem {
	items := make([]shop.ListItem, 0, len(offers.Offers))
	for _, o := range offers.Offers {
		items = append(items, shop.OfferItem(env, sh.Pricing.Price(env.Lang, u.line, o.PriceUSD), o.Name, o.ID,
			soldOut(&o), !f.Covers(o.PriceUSD.Mul(shop.DecimalInt(minQuantity(&o)))), sh.Restock != nil))
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
	if soldOut(o) {
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
	s.SetInt(keyQty, int64(n))
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
	n := s.Int(keyQty)
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		s.Step = u.qty
		return nil, false, &shop.BadInput{Text: reason}
	}
	return u.quote(s.Get(u.cat), o, n), stale, nil
}

// quote is the quote of n units of item o of category cat, before
// StoreQuote prices it (the chat's Price and the Mini App's Quote).
func (u *units) quote(cat string, o *flows.Offer, n int) *flows.Quote {
	return &flows.Quote{
		Line: u.line, Item: o.ID, Category: cat, ItemName: o.Name, Quantity: n,
		UpstreamUSD: o.PriceUSD.Mul(shop.DecimalInt(n)),
	}
}

// soldOut reports whether o has fewer units in stock than an order takes.
func soldOut(o *flows.Offer) bool { return o.Stock < minQuantity(o) }

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
// offers of one category (kept under the cat key), an offer (keyOffer),
// then the category's fields one by one.
type fielded struct {
	line             string
	cat              flows.Key
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
	s.Set(keyOffer, id)
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
	if o, ok := offers.Offer(s.Get(keyOffer)); ok {
		return u.quote(offers, o, values, fieldsFor(s)), stale, nil
	}
	return nil, false, flows.NotFound("offer gone")
}

// quote is the quote of offer o of offers with the buyer's answers (values)
// and their summary (who), before StoreQuote prices it (the chat's Price
// and the Mini App's Quote).
func (u *fielded) quote(offers *flows.Offers, o *flows.Offer, values map[string]string, who string) *flows.Quote {
	return &flows.Quote{
		Line: u.line, Item: o.ID, Category: offers.CategoryID, ItemName: offers.Name + " — " + o.Name,
		Fields: values, For: who, Quantity: 1, UpstreamUSD: o.PriceUSD,
	}
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
	if o, ok := offers.Offer(s.Get(keyOffer)); ok {
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
	text := sh.WithReviews(ctx, env, env.T(title, "name", locales.Escape(shop.ClipName(offers.Name))), flows.ProductLink(u.line, offers.CategoryID))
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
