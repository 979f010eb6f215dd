package webapp

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// The shop wallet in the app: Pay from it (checkout's walletPay, the
// chat's one path: the debit by the quote's ref makes the order), its
// page (the balance, the statement, a top-up paid in Stars through an
// invoice link), and the buyer's orders.

// payWallet pays quote id from the buyer's wallet: the upstream balance
// checked first, as the chat's Pay does, then checkout's wallet payment.
func (a *App) payWallet(q *request, id string) (any, *apiError) {
	env := q.env
	if a.d.Wallet == nil {
		return nil, fail(http.StatusServiceUnavailable, "wallet_off", env, "wtopup.off")
	}
	ctx := q.r.Context()
	qt, err := a.d.Shop.Quotes.Load(ctx, id)
	switch {
	case errors.Is(err, flows.ErrNoQuote):
		return nil, fail(http.StatusConflict, "refused", env, "pay.expired")
	case err != nil:
		a.log.Warn("mini app: load quote", "user", env.User.ID, "quote", id, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	case qt.UserID == env.User.ID && !qt.Expired(env.Now) && !a.d.Shop.Balance(ctx).Covers(qt.UpstreamUSD):
		return nil, fail(http.StatusConflict, "paused", env, "catalog.paused_quote")
	}
	o, refusal, err := a.d.Wallet.PayFromWallet(ctx, env, id)
	switch {
	case err != nil:
		a.log.Error("mini app: wallet payment", "user", env.User.ID, "quote", id, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	case refusal != "":
		return nil, &apiError{status: http.StatusConflict, Code: "refused", Message: plain(refusal)}
	}
	return map[string]any{"order": a.orderJSON(env, o)}, nil
}

// walletPage is how many movements the wallet page shows.
const walletPage = 20

type entryJSON struct {
	At     time.Time `json:"at"`
	Date   string    `json:"date"`
	Amount string    `json:"amount"` // signed, in the buyer's language
	What   string    `json:"what"`
	Order  int64     `json:"order,omitempty"`
}

type amountJSON struct {
	USD       string `json:"usd"`
	Text      string `json:"text"`
	StarsText string `json:"stars_text"`
}

// wallet is the wallet page: the balance, the last movements and what a
// top-up may be.
func (a *App) wallet(q *request) (any, *apiError) {
	env := q.env
	if a.d.Wallet == nil {
		return nil, fail(http.StatusNotFound, "wallet_off", env, "wtopup.off")
	}
	ctx := q.r.Context()
	bal, lines, err := a.d.Wallet.WalletStatement(ctx, env, 0, walletPage)
	if err != nil {
		a.log.Warn("mini app: wallet", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	}
	entries := make([]entryJSON, 0, len(lines))
	for _, l := range lines {
		entries = append(entries, entryJSON{At: l.At, Date: locales.Date(env.Lang, l.At), Amount: locales.SignedMoney(env.Lang, l.Amount), What: plain(l.What), Order: l.Order})
	}
	out := map[string]any{"balance": bal.StringFixed(2), "balance_text": locales.Money(env.Lang, bal), "entries": entries}
	lo, hi, amounts, on, err := a.d.Wallet.TopupRange(ctx, env)
	if err != nil {
		a.log.Warn("mini app: top-up range", "user", env.User.ID, "err", err)
	}
	if on && err == nil {
		quick := []amountJSON{}
		for _, u := range amounts {
			quick = append(quick, a.amount(env, u))
		}
		out["topup"] = map[string]any{"min": a.amount(env, lo), "max": a.amount(env, hi), "full": hi.LessThan(lo), "amounts": quick}
	}
	return out, nil
}

func (a *App) amount(env *flows.Env, usd decimal.Decimal) amountJSON {
	return amountJSON{USD: usd.StringFixed(2), Text: locales.Money(env.Lang, usd), StarsText: locales.Stars(env.Lang, a.d.Wallet.TopupStars(usd))}
}

type topupBody struct {
	USD string `json:"usd"`
}

// topup answers a top-up of the wallet with its Stars invoice link; the
// wallet is credited only by the payment's update.
func (a *App) topup(q *request) (any, *apiError) {
	var b topupBody
	if e := q.decode(&b); e != nil {
		return nil, e
	}
	env := q.env
	if a.d.Wallet == nil {
		return nil, fail(http.StatusNotFound, "wallet_off", env, "wtopup.off")
	}
	text := strings.ReplaceAll(strings.TrimSpace(b.USD), ",", ".")
	usd, err := decimal.NewFromString(text)
	if err != nil || len(text) > 12 {
		return nil, &apiError{status: http.StatusUnprocessableEntity, Code: "bad_field", Field: "usd",
			Message: plain(env.T("wtopup.bad_amount", "value", locales.Clip(b.USD, 40)))}
	}
	link, refusal, err := a.d.Wallet.TopupLink(q.r.Context(), env, usd)
	switch {
	case err != nil:
		a.log.Error("mini app: top-up link", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "pay.refuse_unavailable")
	case refusal != "":
		return nil, &apiError{status: http.StatusUnprocessableEntity, Code: "bad_field", Field: "usd", Message: plain(refusal)}
	}
	return map[string]any{"link": link}, nil
}

// ordersPage is how many orders a page of My orders lists.
const ordersPage = 20

// orders lists the buyer's orders, newest first (?page=0, 1, ...).
func (a *App) orders(q *request) (any, *apiError) {
	env := q.env
	page, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	page = min(max(page, 0), 1000)
	ctx := q.r.Context()
	list, err := a.d.Orders.ListByUser(ctx, env.User.ID, page*ordersPage, ordersPage)
	var total int64
	if err == nil {
		total, err = a.d.Orders.CountByUser(ctx, env.User.ID)
	}
	if err != nil {
		a.log.Warn("mini app: orders", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	}
	out := make([]orderView, 0, len(list))
	for _, o := range list {
		if o == nil || o.UserID != env.User.ID {
			continue
		}
		v := a.orderJSON(env, o)
		v.Codes = nil // the list shows no codes: the order's page does
		out = append(out, v)
	}
	return map[string]any{"orders": out, "total": total, "more": int64((page+1)*ordersPage) < total}, nil
}
