package shop

import (
	"context"
	"errors"
	"shopbot/flows"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"shopbot/locales"
)

// Promo codes on the confirmation step: the "🏷 Promo code" button asks
// for a code; a code the buyer may use makes a new quote at the discounted
// Price (the old one is left as it was), and the confirmation shows it.
// A code that cannot be used is explained and the confirmation stays.
// Checkout holds and consumes the use when the buyer pays.

// StepPromo is the step that asks for the code.
const StepPromo = "promo"

// actPromo is the confirmation's button that asks for a promo code.
const actPromo flows.Action = "pc"

// keyPromoRetry marks a confirmation shown after a code that could not be
// used: the buyer was told to send it again, so the next text message
// there is taken as a code.
const keyPromoRetry flows.Key = "pcr"

// minPriceUSD is the least a discounted order costs.
var minPriceUSD = decimal.RequireFromString("0.01")

// PromoScreen asks for the code.
func PromoScreen(env *flows.Env) *flows.Screen {
	return &flows.Screen{Text: env.T("promo.prompt"), Rows: [][]flows.Button{NavRow(env)}}
}

// promoRow is the confirmation's promo button, when codes are on.
func (sh *Shop) promoRow(env *flows.Env) []flows.Button {
	if sh.Promos == nil {
		return nil
	}
	return []flows.Button{{Text: env.T("btn.promo"), Action: actPromo}}
}

// handlePromo takes the promo button on the confirmation step and
// everything on the promo step. It reports false for anything else.
func (sh *Shop) handlePromo(ctx context.Context, env *flows.Env, f Pricer, s *flows.Session, ev flows.Event) (*flows.Reply, bool, error) {
	if sh.Promos == nil {
		return nil, false, nil
	}
	if s.Step == StepConfirm && ev.Kind == flows.EvButton && ev.Button.Action == actPromo {
		s.Set(keyPromoRetry, "")
		s.Goto(StepPromo)
		return &flows.Reply{Screen: PromoScreen(env), Save: true}, true, nil
	}
	if s.Step == StepConfirm && ev.Kind == flows.EvText && s.Get(keyPromoRetry) != "" {
		r, err := sh.applyPromo(ctx, env, f, s, ev.Text)
		return r, true, err
	}
	if s.Step == StepConfirm {
		s.Set(keyPromoRetry, "") // anything else ends the invitation to retry
	}
	if s.Step != StepPromo {
		return nil, false, nil
	}
	if ev.Kind == flows.EvButton {
		if ev.Button.Action == ActBack {
			s.GoBack()
			r, err := sh.ShowStep(ctx, env, f, s)
			return r, true, err
		}
		r, err := sh.ShowStep(ctx, env, f, s)
		return r, true, err
	}
	r, err := sh.applyPromo(ctx, env, f, s, ev.Text)
	return r, true, err
}

// applyPromo applies the code the buyer typed to the quote of the
// confirmation and goes back to it, with the discount or the reason why
// there is none.
func (sh *Shop) applyPromo(ctx context.Context, env *flows.Env, f Pricer, s *flows.Session, text string) (*flows.Reply, error) {
	if s.Step == StepPromo {
		s.GoBack() // to the confirmation, whatever happens
	}
	if s.Step != StepConfirm {
		s.Step = StepConfirm
	}
	s.Set(keyPromoRetry, "")
	// Every try counts against the rate limit: codes cannot be guessed fast.
	if r, err := sh.Limited(ctx, env); r != nil || err != nil {
		return r, err
	}
	q, err := sh.Quotes.Load(ctx, s.Get(KeyQuote))
	if err != nil && !errors.Is(err, flows.ErrNoQuote) {
		return nil, err
	}
	if err != nil || q.Expired(env.Now) || q.UserID != env.User.ID {
		s.GoBack()
		return sh.Quote(ctx, env, f, s, flows.Notice{Text: env.T("quote.repriced")})
	}
	nq, applied, reason, err := sh.promoQuote(ctx, env, q, text)
	switch {
	case err != nil:
		return nil, err
	case reason != "" && nq == nil && applied == "retry":
		s.Set(keyPromoRetry, "1")
		return sh.Again(ctx, env, f, s, reason)
	case reason != "":
		return sh.Again(ctx, env, f, s, reason)
	}
	s.Set(KeyQuote, nq.ID)
	return &flows.Reply{Notices: []flows.Notice{{Text: applied}}, Screen: sh.confirmScreen(env, nq), Save: true}, nil
}

// promoQuote applies the code text to quote q: the new quote, stored, and
// the words saying what was applied; or the reason (Telegram HTML) why the
// code cannot be used, with applied "retry" when the code itself is not
// one the buyer may use (they are invited to send another). The chat's
// promo step and the Mini App's (ApplyPromo) both.
func (sh *Shop) promoQuote(ctx context.Context, env *flows.Env, q *flows.Quote, text string) (nq *flows.Quote, applied, reason string, err error) {
	code := strings.ToUpper(strings.TrimSpace(text))
	p, err := sh.Promos.Promo(ctx, code, env.User.ID)
	if err != nil {
		key := ""
		switch {
		case errors.Is(err, flows.ErrPromoUnknown):
			key = "promo.unknown"
		case errors.Is(err, flows.ErrPromoExpired):
			key = "promo.expired"
		case errors.Is(err, flows.ErrPromoUsedUp):
			key = "promo.used_up"
		case errors.Is(err, flows.ErrPromoUsed):
			key = "promo.used"
		default:
			return nil, "", "", err
		}
		return nil, "retry", env.T(key, "code", locales.Escape(locales.Clip(code, 32))), nil
	}
	nq, reason, full := sh.discounted(env, q, p)
	if reason != "" {
		return nil, "", reason, nil
	}
	if err := sh.Quotes.Save(ctx, nq); err != nil {
		return nil, "", "", err
	}
	applied = env.T("promo.applied", "code", locales.Escape(p.Code))
	if nq.DiscountUSD.LessThan(full) {
		// The code's terms give more than the price may lose: the buyer
		// is told what they get and why, not left to do the sum.
		applied = env.T("promo.applied_capped", "code", locales.Escape(p.Code),
			"discount", locales.Money(env.Lang, nq.DiscountUSD), "full", locales.Money(env.Lang, full))
	}
	return nq, applied, "", nil
}

// ErrNoPromos is ApplyPromo's error when the shop has no promo codes.
var ErrNoPromos = errors.New("promo codes are off")

// ApplyPromo applies promo code text to env's buyer's quote quoteID from a
// form (the Mini App), as the chat's promo step does: counted against the
// rate limit, the same checks and discount, a new quote stored. reason
// (Telegram HTML) says why not: the quote is gone or expired (price it
// again), or the code cannot be used. Errors: *RateLimited, ErrNoPromos,
// the store's.
func (sh *Shop) ApplyPromo(ctx context.Context, env *flows.Env, quoteID, text string) (nq *flows.Quote, applied, reason string, err error) {
	if sh.Promos == nil {
		return nil, "", "", ErrNoPromos
	}
	if err := sh.Allow(ctx, env); err != nil {
		return nil, "", "", err
	}
	q, err := sh.Quotes.Load(ctx, quoteID)
	if err != nil && !errors.Is(err, flows.ErrNoQuote) {
		return nil, "", "", err
	}
	if err != nil || q.Expired(env.Now) || q.UserID != env.User.ID {
		return nil, "", env.T("quote.gone"), nil
	}
	nq, applied, reason, err = sh.promoQuote(ctx, env, q, text)
	if applied == "retry" {
		applied = ""
	}
	return nq, applied, reason, err
}

// discounted is a new quote for q at the price code p gives, or the
// buyer's reason why p does not apply, and the discount p's terms give
// before any floor. A code replaces one applied before. The discount never
// takes the price below the upstream cost unless the code allows it, nor
// below a cent (or one Star).
func (sh *Shop) discounted(env *flows.Env, q *flows.Quote, p *flows.Promo) (*flows.Quote, string, decimal.Decimal) {
	base := *q
	if base.PromoCode != "" {
		base.ShopUSD, base.Stars = base.ListUSD, base.ListStars
	}
	code := locales.Escape(p.Code)
	if len(p.Lines) > 0 && !slices.Contains(p.Lines, q.Line) {
		return nil, env.T("promo.not_line", "code", code), decimal.Zero
	}
	if base.ShopUSD.LessThan(p.MinUSD) {
		return nil, env.T("promo.min_order", "code", code, "min", locales.Money(env.Lang, p.MinUSD)), decimal.Zero
	}
	off := p.OffUSD.Add(base.ShopUSD.Mul(p.Percent).Div(hundred)).RoundDown(2)
	price := base.ShopUSD.Sub(off)
	floor := minPriceUSD
	if !p.BelowCost {
		floor = decimal.Max(floor, base.UpstreamUSD.RoundUp(2))
	}
	price = decimal.Max(price, floor)
	if !price.LessThan(base.ShopUSD) {
		return nil, env.T("promo.no_discount", "code", code), off
	}
	stars := min(max(sh.Pricing.Stars(price), 1), base.Stars)
	nq := base
	nq.ID = ""
	nq.PromoCode, nq.ListUSD, nq.ListStars = p.Code, base.ShopUSD, base.Stars
	nq.ShopUSD, nq.Stars, nq.DiscountUSD = price, stars, base.ShopUSD.Sub(price)
	nq.Created = env.Now
	return &nq, "", off
}
