package flows

import (
	"context"
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
	load      loader
}

// offer returns the item of the chosen category, with stale.
func (u *units) offer(ctx context.Context, s *Session, id string) (*Offer, bool, error) {
	_, o, stale, err := u.offerIn(ctx, s, id)
	return o, stale, err
}

// offerIn returns the chosen category and its item id, with stale.
func (u *units) offerIn(ctx context.Context, s *Session, id string) (*Offers, *Offer, bool, error) {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return nil, nil, false, err
	}
	if o, ok := offers.offer(id); ok {
		return offers, o, stale, nil
	}
	return nil, nil, false, notFound("item not offered")
}

// minQuantity is the least an order of o takes.
func minQuantity(o *Offer) int { return max(o.MinQuantity, 1) }

// items are the category's items as a list: sold out and paused ones are
// only described.
func (u *units) items(env *Env, sh *Shop, f funds, offers *Offers) []listItem {
	items := make([]listItem, 0, len(offers.Offers))
	for _, o := range offers.Offers {
		items = append(items, offerItem(env, sh.Pricing.Price(env.Lang, u.line, o.PriceUSD), o.Name, o.ID,
			o.Stock < minQuantity(&o), !f.covers(o.PriceUSD.Mul(decimalInt(minQuantity(&o))))))
	}
	return items
}

// pick takes the item chosen on the list, unless it sold out or the
// balance cannot pay for it since the list was shown; r is then the alert.
func (u *units) pick(ctx context.Context, env *Env, sh *Shop, s *Session, id string) (r *Reply, ok bool) {
	o, _, err := u.offer(ctx, s, id)
	if err != nil {
		return nil, false
	}
	if o.Stock < minQuantity(o) {
		return &Reply{Answer: env.T("gc.sold_out_alert"), Alert: true, NoScreen: true}, false
	}
	if !sh.funds(ctx).covers(o.PriceUSD.Mul(decimalInt(minQuantity(o)))) {
		return &Reply{Answer: env.T("catalog.paused_alert"), Alert: true, NoScreen: true}, false
	}
	s.Set(u.item, id)
	s.Goto(u.qty)
	return nil, true
}

// setQuantity checks n against the item's bounds and stock, then quotes.
func (u *units) setQuantity(ctx context.Context, env *Env, sh *Shop, f pricer, s *Session, n int) (*Reply, error) {
	o, _, err := u.offer(ctx, s, s.Get(u.item))
	if err != nil {
		return &Reply{Screen: failScreen(env, err), Save: true}, nil
	}
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		return sh.again(ctx, env, f, s, reason)
	}
	s.Set("qty", strconv.Itoa(n))
	return sh.quote(ctx, env, f, s)
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

// price quotes the chosen quantity of the chosen item.
func (u *units) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	o, stale, err := u.offer(ctx, s, s.Get(u.item))
	if err != nil {
		return nil, false, err
	}
	n, _ := strconv.Atoi(s.Get("qty"))
	if reason := quantityReason(env, n, o.MinQuantity, o.MaxQuantity, o.Stock); reason != "" {
		s.Step = u.qty
		return nil, false, &badInput{reason}
	}
	return &Quote{
		Line: u.line, Item: o.ID, Category: s.Get(u.cat), ItemName: o.Name, Quantity: n,
		UpstreamUSD: o.PriceUSD.Mul(decimalInt(n)),
	}, stale, nil
}

// qtyScreen asks how many, within the bounds, the stock and what the
// balance pays for, under the category's image.
func (u *units) qtyScreen(ctx context.Context, env *Env, sh *Shop, s *Session) *Screen {
	offers, o, stale, err := u.offerIn(ctx, s, s.Get(u.item))
	if err != nil {
		return failScreen(env, err)
	}
	lo, hi := minQuantity(o), sh.funds(ctx).affordable(o.PriceUSD, min(o.MaxQuantity, o.Stock, 100))
	if hi < lo {
		return &Screen{Text: env.T("catalog.paused_quote"), Rows: [][]Button{navRow(env)}}
	}
	text := env.T("qty.prompt", "item", locales.Escape(clipName(o.Name)),
		"price", sh.Pricing.Price(env.Lang, u.line, o.PriceUSD),
		"min", locales.Number(env.Lang, int64(lo)), "max", locales.Number(env.Lang, int64(hi)))
	rows := append(quickQuantities(env, lo, hi, u.quick), navRow(env))
	return &Screen{Text: withStale(env, text, stale), Rows: rows, Image: offers.Image}
}

// handleQty takes a quantity typed or pressed at the quantity step; it
// reports false for anything else.
func (u *units) handleQty(ctx context.Context, env *Env, sh *Shop, f pricer, s *Session, ev Event) (*Reply, bool, error) {
	switch {
	case ev.Kind == EvButton && ev.Button.Action == actQty:
		n, _ := strconv.Atoi(ev.Button.Arg)
		r, err := u.setQuantity(ctx, env, sh, f, s, n)
		return r, true, err
	case ev.Kind != EvButton && s.Step == u.qty:
		n, ok := parseQuantity(ev.Text)
		if !ok {
			r, err := sh.again(ctx, env, f, s, env.T("qty.bad_number"))
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
	load             loader
}

// pick takes the offer chosen and asks the category's fields, or quotes
// at once when there are none.
func (u *fielded) pick(ctx context.Context, env *Env, sh *Shop, f pricer, s *Session, id string) (*Reply, error) {
	offers, _, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return &Reply{Screen: failScreen(env, err), Save: true}, nil
	}
	s.Set("offer", id)
	fields := offerFields(offers)
	askFields(s, fields)
	if len(fields) == 0 {
		return sh.quote(ctx, env, f, s)
	}
	return nil, nil
}

// offerFields are a category's buyer fields, typed as the upstream
// declares or as their keys and labels say.
func offerFields(o *Offers) []field {
	var fields []field
	for _, fl := range o.Fields {
		fields = append(fields, newField(fl.Key, fl.Label, fl.Type, fl.Options))
	}
	return fields
}

// price quotes the chosen offer with the buyer's answers.
func (u *fielded) price(ctx context.Context, env *Env, s *Session) (*Quote, bool, error) {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return nil, false, err
	}
	values := fieldValues(s)
	if missing := offers.MissingFields(values); len(missing) > 0 {
		// The category's fields changed since they were asked: ask again.
		askFields(s, offerFields(offers))
		return nil, false, &badInput{env.T("fields.changed")}
	}
	if bad := firstInvalid(env, s); bad != nil {
		return nil, false, bad
	}
	if o, ok := offers.offer(s.Get("offer")); ok {
		return &Quote{
			Line: u.line, Item: o.ID, Category: offers.CategoryID, ItemName: offers.Name + " — " + o.Name,
			Fields: values, For: fieldsFor(s), Quantity: 1, UpstreamUSD: o.PriceUSD,
		}, stale, nil
	}
	return nil, false, notFound("offer gone")
}

// fieldsScreen asks the current field, under the category (and its image)
// and the offer.
func (u *fielded) fieldsScreen(ctx context.Context, env *Env, sh *Shop, s *Session) *Screen {
	offers, stale, err := u.load(ctx, s.Get(u.cat))
	if err != nil {
		return failScreen(env, err)
	}
	name := locales.Escape(clipName(offers.Name))
	title := env.T(u.title, "name", name)
	if o, ok := offers.offer(s.Get("offer")); ok {
		title = env.T(u.withOffer, "name", name, "offer", locales.Escape(clipName(o.Name)), "price", sh.Pricing.Price(env.Lang, u.line, o.PriceUSD))
	}
	sc := fieldsScreen(env, s, title)
	sc.Text = withStale(env, sc.Text, stale)
	sc.Image = offers.Image
	return sc
}
