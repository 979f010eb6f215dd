package books

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// /balance: the upstream account, the bot's Star balance and what buyers
// paid for orders not yet delivered.

// upstreamWait bounds an upstream read of a report.
const upstreamWait = 10 * time.Second

// starsUSD is the USD value of n Stars at STARS_USD_RATE.
func (r *Books) starsUSD(n int64) decimal.Decimal {
	return decimal.NewFromInt(n).Mul(r.opts.StarsUSDRate)
}

// balance reports the upstream account, the bot's Star balance and what
// buyers paid for orders not yet delivered. A part that cannot be read
// says why; the other parts still show.
func (r *Books) balance(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	pending, err := r.pendingSection(ctx, env)
	if err != nil {
		return nil, err
	}
	parts := []string{env.T("rep.bal.title"), r.upstreamSection(ctx, env), r.starsSection(ctx, env), pending}
	return &flows.Reply{Notices: []flows.Notice{{Text: strings.Join(parts, "\n\n")}}, NoScreen: true}, nil
}

func (r *Books) upstreamSection(ctx context.Context, env *flows.Env) string {
	if r.up == nil {
		return env.T("rep.bal.upstream_failed", "reason", env.T("rep.up.not_configured"))
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamWait)
	defer cancel()
	me, err := r.up.Me(ctx)
	if err != nil {
		return env.T("rep.bal.upstream_failed", "reason", r.upstreamProblem(env, "account", err))
	}
	status := env.T("rep.bal.active")
	if me.Status != reseller.AccountActive {
		status = env.T("rep.bal.blocked")
	}
	return env.T("rep.bal.upstream", "nickname", locales.Escape(me.Nickname), "status", status,
		"balance", locales.Money(env.Lang, me.BalanceUSD.Decimal), "orders", locales.Number(env.Lang, me.TotalOrders),
		"spent", locales.Money(env.Lang, me.TotalSpentUSD.Decimal))
}

func (r *Books) starsSection(ctx context.Context, env *flows.Env) string {
	amount, nano, err := r.tg.StarBalance(ctx)
	if err != nil {
		r.log.Warn("admin report: read the Star balance", "err", err)
		return env.T("rep.bal.stars_failed")
	}
	stars := locales.Stars(env.Lang, amount)
	exact := decimal.NewFromInt(amount).Add(decimal.New(nano, -9))
	if nano != 0 {
		stars = locales.Decimal(env.Lang, exact, 2) + "\u00a0⭐"
	}
	return env.T("rep.bal.stars", "stars", stars, "usd", locales.Money(env.Lang, exact.Mul(r.opts.StarsUSDRate)),
		"rate", r.opts.StarsUSDRate)
}

// pendingSection sums what buyers paid for the orders not yet finished
// (paid, placing, placed, refunding, needs review): Stars for Stars
// payments, USD for wallet payments; then the Star charges waiting for
// review (/charges), which have no order, and those whose refund an admin
// decided and is under way.
func (r *Books) pendingSection(ctx context.Context, env *flows.Env) (string, error) {
	orders, err := r.pendingOrders(ctx, env)
	if err != nil {
		return "", err
	}
	charges, err := r.pendingCharges(ctx, env)
	if err != nil || charges == "" {
		return orders, err
	}
	return orders + "\n" + charges, nil
}

// pendingOrders is the part of pendingSection about orders.
func (r *Books) pendingOrders(ctx context.Context, env *flows.Env) (string, error) {
	ids, err := r.orders.Unfinished(ctx)
	if err != nil {
		return "", err
	}
	var stars, n, review, refunding int64
	wallet := decimal.Zero
	for _, id := range ids {
		o, err := r.orders.Get(ctx, id)
		if errors.Is(err, state.ErrOrderNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if state.Terminal(o.Status) {
			continue // finished since the index was read
		}
		n++
		switch o.PayMethod {
		case state.PayStars:
			stars += o.Stars
		case state.PayWallet:
			wallet = wallet.Add(o.ShopUSD)
		}
		switch o.Status {
		case state.OrderNeedsReview:
			review++
		case state.OrderRefunding:
			refunding++
		}
	}
	if n == 0 {
		return env.T("rep.bal.pending_none"), nil
	}
	text := env.N("rep.bal.pending", n, "stars", locales.Stars(env.Lang, stars),
		"stars_usd", locales.Money(env.Lang, r.starsUSD(stars)), "wallet", locales.Money(env.Lang, wallet),
		"total", locales.Money(env.Lang, r.starsUSD(stars).Add(wallet)))
	if review > 0 {
		text += "\n" + env.N("rep.bal.pending_review", review)
	}
	if refunding > 0 {
		text += "\n" + env.N("rep.bal.pending_refunding", refunding)
	}
	return text, nil
}

// pendingCharges is the part of pendingSection about the Star charges
// listed for review that no admin resolved yet ("" when there are none).
func (r *Books) pendingCharges(ctx context.Context, env *flows.Env) (string, error) {
	if r.reviews == nil {
		return "", nil
	}
	waiting, refunding, err := r.reviews.Totals(ctx)
	if err != nil {
		return "", err
	}
	var parts []string
	if waiting.N > 0 {
		parts = append(parts, env.N("rep.bal.charges_review", waiting.N, "stars", locales.Stars(env.Lang, waiting.Stars),
			"usd", locales.Money(env.Lang, r.starsUSD(waiting.Stars))))
	}
	if refunding.N > 0 {
		parts = append(parts, env.N("rep.bal.charges_refunding", refunding.N, "stars", locales.Stars(env.Lang, refunding.Stars),
			"usd", locales.Money(env.Lang, r.starsUSD(refunding.Stars))))
	}
	return strings.Join(parts, "\n"), nil
}
