package webapp

import (
	"errors"
	"net/http"
	"time"

	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/state"
)

// quoteBody is the page's order form.
type quoteBody struct {
	Line     string            `json:"line"`
	Category string            `json:"category"`
	Item     string            `json:"item"`
	Quantity int               `json:"quantity"`
	Fields   map[string]string `json:"fields"`
}

// quoteJSON is a quote as the page shows it before Pay.
type quoteJSON struct {
	ID       string    `json:"id"`
	Line     string    `json:"line"`
	Item     string    `json:"item"`
	For      string    `json:"for,omitempty"`
	Quantity int       `json:"quantity"`
	Unit     *price    `json:"unit,omitempty"` // several units: the price of one
	Total    *price    `json:"total"`
	Expires  time.Time `json:"expires"`
	Valid    string    `json:"valid"` // how long the price holds, in words
	Stale    bool      `json:"stale,omitempty"`
	Promo    string    `json:"promo,omitempty"` // the promo code applied
	List     *price    `json:"list,omitempty"`  // with a promo code: the price before it
}

// quote prices the form with the chat's checks and pricing (lines.Quote)
// and stores the quote the page then pays.
func (a *App) quote(q *request) (any, *apiError) {
	var b quoteBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if !lines.IsFormLine(b.Line) {
		return nil, badRequest(q.env, "unknown line")
	}
	if !lines.ByUnit(b.Line) {
		b.Quantity = 1
	}
	env, sh := q.env, a.d.Shop
	qt, stale, err := lines.Quote(q.r.Context(), sh, env, lines.Order{Line: b.Line, Category: b.Category, Item: b.Item, Quantity: b.Quantity, Fields: b.Fields})
	var oe *lines.OrderError
	switch {
	case errors.As(err, &oe):
		return nil, &apiError{status: http.StatusUnprocessableEntity, Code: "bad_field", Field: oe.Field, Message: plain(oe.Reason)}
	case errors.Is(err, shop.ErrPaused):
		return nil, fail(http.StatusConflict, "paused", env, "catalog.paused_quote")
	case err != nil:
		return nil, a.catalogError(q, err)
	}
	return map[string]any{"quote": a.quoteJSON(env, qt, stale)}, nil
}

// quoteJSON is quote qt as the page shows it.
func (a *App) quoteJSON(env *flows.Env, qt *flows.Quote, stale bool) quoteJSON {
	sh := a.d.Shop
	out := quoteJSON{
		ID: qt.ID, Line: qt.Line, Item: qt.ItemName, For: qt.For, Quantity: qt.Quantity,
		Total: priceOf(env, qt.ShopUSD, qt.Stars), Expires: qt.Expires,
		Valid: plain(env.N("confirm.valid", int64(sh.QuoteTTL/time.Minute))), Stale: stale,
	}
	if usd, stars, ok := sh.UnitPrice(qt); ok && qt.PromoCode == "" {
		out.Unit = priceOf(env, usd, stars)
	}
	if qt.PromoCode != "" {
		out.Promo, out.List = qt.PromoCode, priceOf(env, qt.ListUSD, qt.ListStars)
	}
	return out
}

// promoBody is a promo code for a quote.
type promoBody struct {
	Code string `json:"code"`
}

// promo applies a promo code to the buyer's quote as the chat's promo
// step does (shop.Shop.ApplyPromo): the new quote, or why not, with what
// was typed kept on the page.
func (a *App) promo(q *request) (any, *apiError) {
	var b promoBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	env := q.env
	nq, applied, reason, err := a.d.Shop.ApplyPromo(q.r.Context(), env, q.r.PathValue("quote"), b.Code)
	switch {
	case errors.Is(err, shop.ErrNoPromos):
		return nil, errNotFound
	case err != nil:
		return nil, a.catalogError(q, err)
	case reason != "":
		return nil, &apiError{status: http.StatusUnprocessableEntity, Code: "bad_field", Field: "promo", Message: plain(reason)}
	}
	return map[string]any{"quote": a.quoteJSON(env, nq, false), "applied": plain(applied)}, nil
}

// payBody names the quote to pay and how: "stars" (the default) or
// "wallet".
type payBody struct {
	Quote  string `json:"quote"`
	Method string `json:"method,omitempty"`
}

// pay answers Pay on a quote with its Stars invoice link, which the page
// opens with Telegram.WebApp.openInvoice; a quote already paid answers
// with its order. The order is made only by the payment's update.
func (a *App) pay(q *request) (any, *apiError) {
	var b payBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	if b.Quote == "" {
		return nil, badRequest(q.env, "no quote")
	}
	if o, e := a.orderOfQuote(q, b.Quote); e != nil || o != nil {
		if e != nil {
			return nil, e
		}
		return map[string]any{"order": a.orderJSON(q.env, o)}, nil
	}
	if b.Method == "wallet" {
		return a.payWallet(q, b.Quote)
	}
	if b.Method != "" && b.Method != "stars" {
		return nil, badRequest(q.env, "method is stars or wallet")
	}
	if a.d.Payments == nil {
		return nil, fail(http.StatusServiceUnavailable, "payments_off", q.env, "pay.disabled")
	}
	link, refusal, err := a.d.Payments.InvoiceLink(q.r.Context(), q.env, b.Quote)
	switch {
	case err != nil:
		a.log.Error("mini app: invoice link", "user", q.env.User.ID, "quote", b.Quote, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", q.env, "pay.refuse_unavailable")
	case refusal != "":
		return nil, &apiError{status: http.StatusConflict, Code: "refused", Message: plain(refusal)}
	}
	return map[string]any{"link": link}, nil
}

// orderOfQuote is the buyer's order of quote id, nil while it has none.
func (a *App) orderOfQuote(q *request, id string) (*state.Order, *apiError) {
	o, err := a.d.Orders.ByQuote(q.r.Context(), id)
	switch {
	case errors.Is(err, state.ErrOrderNotFound):
		return nil, nil
	case err != nil:
		a.log.Warn("mini app: order of quote", "user", q.env.User.ID, "quote", id, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", q.env, "webapp.error")
	case o.UserID != q.env.User.ID:
		return nil, errNotFound
	}
	return o, nil
}

// quoteOrder is what the page polls after Pay: the quote's order once the
// payment made it, else "awaiting payment". Only the buyer's own quote.
func (a *App) quoteOrder(q *request) (any, *apiError) {
	id := q.r.PathValue("quote")
	o, e := a.orderOfQuote(q, id)
	if e != nil {
		return nil, e
	}
	if o != nil {
		return map[string]any{"order": a.orderJSON(q.env, o)}, nil
	}
	qt, err := a.d.Shop.Quotes.Load(q.r.Context(), id)
	switch {
	case errors.Is(err, flows.ErrNoQuote):
		return nil, errNotFound
	case err != nil:
		a.log.Warn("mini app: load quote", "user", q.env.User.ID, "quote", id, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", q.env, "webapp.error")
	case qt.UserID != q.env.User.ID:
		return nil, errNotFound
	}
	return map[string]any{"status": "awaiting_payment", "expired": qt.Expired(q.env.Now)}, nil
}

// order is one of the buyer's orders by its Ref; anyone else's is not found.
func (a *App) order(q *request) (any, *apiError) {
	id, tag, ok := state.ParseRef(q.r.PathValue("ref"))
	if !ok || tag == "" {
		return nil, errNotFound
	}
	o, err := a.d.Orders.Get(q.r.Context(), id)
	switch {
	case errors.Is(err, state.ErrOrderNotFound):
		return nil, errNotFound
	case err != nil:
		a.log.Warn("mini app: order", "user", q.env.User.ID, "order", id, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", q.env, "webapp.error")
	case o.UserID != q.env.User.ID || !o.Is(tag):
		return nil, errNotFound
	}
	return map[string]any{"order": a.orderJSON(q.env, o)}, nil
}

// orderView is an order as its buyer follows it: the codes only once
// delivered.
type orderView struct {
	Ref        string   `json:"ref"`
	Number     int64    `json:"number"`
	Status     string   `json:"status"`
	StatusText string   `json:"status_text"`
	Item       string   `json:"item"`
	Total      *price   `json:"total"`
	Codes      []string `json:"codes,omitempty"`
	Done       bool     `json:"done"` // delivered or refunded: nothing more will change
	Line       string   `json:"line"`
	Paid       string   `json:"paid,omitempty"`   // when, in the buyer's language
	Method     string   `json:"method,omitempty"` // stars or wallet
	Refund     string   `json:"refund,omitempty"` // refunded: what went back where
}

func (a *App) orderJSON(env *flows.Env, o *state.Order) orderView {
	out := orderView{
		Ref: o.Ref(), Number: o.ID, Status: o.Status, StatusText: plain(env.T("order.status." + o.Status)),
		Item: upstreamorder.ItemName(env.Lang, o), Total: priceOf(env, o.ShopUSD, o.Stars), Done: state.Terminal(o.Status),
	}
	out.Line, out.Method = plain(env.T("line."+o.Line)), o.PayMethod
	if !o.PaidAt.IsZero() {
		out.Paid = locales.Date(env.Lang, o.PaidAt)
	}
	switch o.Status {
	case state.OrderDelivered:
		out.Codes = o.Codes
	case state.OrderRefunded:
		if o.PayMethod == state.PayWallet {
			out.Refund = plain(env.T("webapp.refund_wallet", "amount", locales.Money(env.Lang, o.ShopUSD)))
		} else {
			out.Refund = plain(env.T("webapp.refund_stars", "stars", locales.Stars(env.Lang, o.Stars)))
		}
	}
	return out
}
