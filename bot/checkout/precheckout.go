package checkout

import (
	"context"
	"errors"
	"strings"

	"shopbot/bot/upstreamorder"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// PreCheckout answers a pre_checkout_query: ok only for a live, unpaid
// quote of this buyer whose upstream price, stock and balance still hold.
func (p *Checkout) PreCheckout(ctx context.Context, pq PreCheckoutQuery) {
	if strings.HasPrefix(pq.Payload, topupPrefix) {
		p.preCheckoutTopup(ctx, pq)
		return
	}
	qid, _ := strings.CutPrefix(pq.Payload, payloadPrefix)
	from := pq.UserID
	lang := p.langOf(ctx, qid, pq.LanguageCode)
	reason := p.checkQuote(ctx, pq, from, lang)
	refusal := ""
	if reason != "" {
		refusal = locales.T(lang, reason)
	}
	if err := p.tg.AnswerPreCheckout(ctx, pq.ID, refusal); err != nil {
		p.log.Warn("answer pre-checkout query", "quote", qid, "err", err)
	}
	p.log.Info("pre-checkout", "quote", qid, "user", from, "ok", reason == "", "reason", reason)
}

// checkQuote returns "" when the payment may go ahead, else the locale
// key of the reason.
func (p *Checkout) checkQuote(ctx context.Context, pq PreCheckoutQuery, from int64, lang locales.Lang) string {
	qid, ok := strings.CutPrefix(pq.Payload, payloadPrefix)
	if !ok || qid == "" {
		return "pay.refuse_unknown"
	}
	q, err := p.Quotes.Load(ctx, qid)
	switch {
	case errors.Is(err, state.ErrNoQuote):
		return "pay.refuse_expired"
	case err != nil:
		p.log.Warn("pre-checkout: load quote", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	case q.UserID != from:
		return "pay.refuse_unknown"
	case q.Cancelled:
		return "pay.refuse_cancelled"
	case q.Expired(p.now()):
		return "pay.refuse_expired"
	case pq.Currency != "XTR" || pq.Total != q.Stars:
		return "pay.refuse_price"
	}
	if _, err := p.Orders.ByQuote(ctx, q.ID); err == nil {
		return "pay.refuse_paid"
	} else if !errors.Is(err, state.ErrOrderNotFound) {
		return "pay.refuse_unavailable"
	}
	if p.opts.Upstream == nil {
		return "pay.refuse_unavailable"
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CheckTimeout)
	defer cancel()
	cur, err := upstreamorder.Reprice(cctx, p.opts.Upstream, q)
	switch {
	case reseller.IsNotFound(err):
		return "pay.refuse_stock"
	case err != nil:
		p.log.Warn("pre-checkout: re-price", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	case !cur.UpstreamUSD.Equal(q.UpstreamUSD):
		return "pay.refuse_price"
	case cur.Stock >= 0 && cur.Stock < q.Quantity:
		return "pay.refuse_stock"
	}
	me, err := p.opts.Upstream.Me(cctx)
	if err != nil {
		p.log.Warn("pre-checkout: read upstream account", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	}
	if me.Status == reseller.AccountBlocked {
		return "pay.refuse_unavailable"
	}
	al, admin := p.alerts, p.engine.DefaultLang
	if me.BalanceUSD.LessThan(q.UpstreamUSD) {
		_, _ = al.Raise(ctx, AlertBalanceShort, locales.T(admin, "alert.balance_short",
			"balance", locales.Money(admin, me.BalanceUSD.Decimal), "need", locales.Money(admin, q.UpstreamUSD)))
		return "pay.refuse_unavailable"
	}
	_, _ = al.Clear(ctx, AlertBalanceShort)
	// Last, so that nothing refuses the payment after the use is held.
	if err := p.reservePromo(ctx, q); errors.Is(err, state.ErrPromoUnavailable) {
		return "pay.refuse_promo"
	} else if err != nil {
		p.log.Warn("pre-checkout: hold promo use", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	}
	return ""
}
