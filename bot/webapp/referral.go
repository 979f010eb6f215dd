package webapp

import (
	"context"
	"net/http"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
)

// The referral program in the app: the buyer's invite link with a Share
// button, shown only while referrals are on. Share sends the inline mode's
// invite card (a prepared inline message, Telegram.WebApp.shareMessage)
// where the client has shareMessage and the bot could prepare it, else
// Telegram's share link (openTelegramLink to t.me/share/url).

// Referrals is the referral program with the bot's prepared messages
// (bot/referral and bot.Bot.PrepareInvite; storefront wires them); nil:
// referrals are off.
type Referrals interface {
	// PageOf is the buyer's referral page (the chat's /referrals).
	PageOf(ctx context.Context, env *flows.Env) (*ReferralPage, error)
	// PrepareInvite stores the invite card with the buyer's invite as a
	// prepared inline message and returns its id, for shareMessage.
	PrepareInvite(ctx context.Context, user flows.User) (string, error)
}

// ReferralPage is what the referral page shows.
type ReferralPage struct {
	Link, ShareURL string
	Percent        decimal.Decimal
	Buyers         int64
	Earned         decimal.Decimal
}

// referral is the buyer's referral page: the link, the share link and the
// figures, in the buyer's words.
func (a *App) referral(q *request) (any, *apiError) {
	env := q.env
	if a.d.Referrals == nil {
		return nil, fail(http.StatusNotFound, "referrals_off", env, "webapp.ref_off")
	}
	pg, err := a.d.Referrals.PageOf(q.r.Context(), env)
	if err != nil {
		a.log.Warn("mini app: referral page", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	}
	return map[string]any{
		"link": pg.Link, "share_url": pg.ShareURL,
		"how":    plain(env.T("ref.how", "pct", pg.Percent)),
		"buyers": plain(env.N("ref.buyers", pg.Buyers)),
		"earned": plain(env.T("ref.earned", "earned", locales.Money(env.Lang, pg.Earned))),
	}, nil
}

// referralShare prepares the invite card for shareMessage; the page falls
// back to the share link on any error. It counts against the chat's
// limit on costly actions (it is a Bot API call).
func (a *App) referralShare(q *request) (any, *apiError) {
	env := q.env
	if a.d.Referrals == nil {
		return nil, fail(http.StatusNotFound, "referrals_off", env, "webapp.ref_off")
	}
	ctx := q.r.Context()
	if err := a.d.Shop.Allow(ctx, env); err != nil {
		return nil, a.catalogError(q, err)
	}
	id, err := a.d.Referrals.PrepareInvite(ctx, env.User)
	if err != nil {
		a.log.Info("mini app: prepare the invite to share; the page shares the link instead", "user", env.User.ID, "err", err)
		return nil, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error")
	}
	return map[string]any{"id": id}, nil
}
