package admin

import (
	"context"
	"errors"
	"strings"
	"time"

	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/work"
)

// The admin side's operations the console (bot/console) calls besides the
// chat: the same promo and broadcast code as /promo and /broadcast, each
// taking the actor who acts and writing the audit log.

// audit records an admin's action in the audit log (Deps.Audit); a
// failure to record is logged, as the action itself is done.
func (ad *Admin) audit(ctx context.Context, by state.Actor, action, target, detail string) {
	if ad.auditLog == nil {
		return
	}
	e := state.AuditEntry{At: ad.now(), Actor: by, Action: action, Target: target, Detail: detail}
	if err := ad.auditLog.Record(ctx, e); err != nil {
		ad.log.Warn("audit an admin action", "action", action, "err", err)
	}
}

// AddPromo adds one promo code from /promo add's arguments ("SPRING 10%
// uses=100 until=2026-12-31"), checked as the chat checks them; refusal
// is why it was not added (the chat's words, in lang, plain text).
func (ad *Admin) AddPromo(ctx context.Context, by state.Actor, lang locales.Lang, spec string) (p *state.Promo, refusal string, err error) {
	if ad.promos == nil {
		return nil, "", errors.New("no promo store")
	}
	sp, bad := parsePromoSpec(strings.Fields(spec), false, ad.now())
	if bad != nil {
		text := locales.T(lang, bad.key, "value", locales.Escape(locales.Clip(bad.value, 40)), "max", MaxPromoBatch)
		if bad.key == "rep.promo.usage" {
			text = locales.T(lang, "rep.promo.usage", "max", MaxPromoBatch)
		}
		return nil, locales.Plain(text), nil
	}
	err = ad.promos.Add(ctx, &sp.promo)
	if errors.Is(err, state.ErrPromoExists) {
		return nil, locales.Plain(locales.T(lang, "rep.promo.exists", "code", sp.promo.Code)), nil
	}
	if err != nil {
		return nil, "", err
	}
	ad.log.Info("promo code added", "code", sp.promo.Code, "admin", by.ID, "via", by.Via)
	ad.audit(ctx, by, state.AuditPromoAdd, "promo "+sp.promo.Code, spec)
	return &sp.promo, "", nil
}

// DisablePromo disables a promo code; false when it already was.
// An unknown code is state.ErrPromoUnknown.
func (ad *Admin) DisablePromo(ctx context.Context, by state.Actor, code string) (bool, error) {
	if ad.promos == nil {
		return false, errors.New("no promo store")
	}
	did, err := ad.promos.Disable(ctx, code)
	if err != nil || !did {
		return did, err
	}
	norm, _ := state.NormalizePromoCode(code)
	ad.log.Info("promo code disabled", "code", norm, "admin", by.ID, "via", by.Via)
	ad.audit(ctx, by, state.AuditPromoDisable, "promo "+norm, "")
	return true, nil
}

// StartBroadcast sends text (plain; escaped here) to every buyer, as
// /broadcast does: a resumable job, whose progress message goes to the
// actor's chat too. It returns the job's id.
func (ad *Admin) StartBroadcast(ctx context.Context, by state.Actor, lang locales.Lang, text string) (string, error) {
	id, refusal, err := ad.PlanBroadcast(ctx, by, lang, state.BroadcastPlan{Text: text, Audience: state.Audience{Kind: state.AudienceAll}})
	if err == nil && refusal != "" {
		err = errors.New(refusal)
	}
	return id, err
}

// PlanBroadcast starts or (with p.At set) schedules broadcast p as
// /broadcast does: p.Text is plain text (escaped here), its buttons and
// audience are checked as the chat checks them. The progress message, or
// the scheduling message, goes to the actor's chat. refusal says in lang
// what is wrong (plain text), and nothing is made.
func (ad *Admin) PlanBroadcast(ctx context.Context, by state.Actor, lang locales.Lang, p state.BroadcastPlan) (id, refusal string, err error) {
	plain := strings.TrimSpace(p.Text)
	p.Text = locales.Escape(plain)
	bs, bad := checkButtons(p.Buttons, ad.bc.botName())
	if bad != "" {
		return "", locales.Plain(locales.T(lang, "bc.buttons_bad", "line", locales.Escape(locales.Clip(bad, 80)), "max", MaxBroadcastButtons)), nil
	}
	p.Buttons = bs
	if !p.At.IsZero() {
		p.At = p.At.Truncate(time.Minute)
	}
	now := ad.now()
	if key := ad.bc.check(p, now); key != "" {
		return "", locales.Plain(locales.T(lang, key, "max", textLimit(p.Media))), nil
	}
	id, err = ad.bc.start(ctx, by.ID, lang, p, now)
	if err != nil {
		return "", "", err
	}
	ad.audit(ctx, by, state.AuditBroadcast, "broadcast "+id, auditDetail(p))
	return id, "", nil
}

// AudienceSize is how many buyers audience a holds now, and of them how
// many turned news off or blocked the bot (a broadcast's preview).
func (ad *Admin) AudienceSize(ctx context.Context, a state.Audience) (state.AudienceCount, error) {
	return ad.bc.count(ctx, a)
}

// AudienceName is audience a as the admin reads it, in lang.
func (ad *Admin) AudienceName(lang locales.Lang, a state.Audience) string {
	return audienceName(lang, a)
}

// ScheduledBroadcasts are the ids of the broadcasts waiting for their
// time, soonest first.
func (ad *Admin) ScheduledBroadcasts(ctx context.Context) ([]string, error) {
	return ad.bc.jobs.Scheduled(ctx)
}

// RecentBroadcasts are the ids of the last n broadcasts, newest first.
func (ad *Admin) RecentBroadcasts(ctx context.Context, n int) ([]string, error) {
	return ad.bc.jobs.Recent(ctx, n)
}

// StopBroadcast stops a running broadcast or cancels a scheduled one;
// false when it was neither.
func (ad *Admin) StopBroadcast(ctx context.Context, by state.Actor, id string) (bool, error) {
	did, err := ad.bc.stop(ctx, id)
	if err == nil && did {
		ad.audit(ctx, by, state.AuditBroadcastStop, "broadcast "+id, "")
	}
	return did, err
}

// Broadcast reads one broadcast job (its progress).
func (ad *Admin) Broadcast(ctx context.Context, id string) (*work.BroadcastJob, error) {
	return ad.bc.jobs.Get(ctx, id)
}

// ActiveBroadcasts are the ids of the broadcasts still running.
func (ad *Admin) ActiveBroadcasts(ctx context.Context) ([]string, error) {
	return ad.bc.jobs.Active(ctx)
}

// BuyersCount is how many buyers a broadcast to all now reaches (its
// preview): those who did not turn news off or block the bot.
func (ad *Admin) BuyersCount(ctx context.Context) (int64, error) {
	c, err := ad.bc.count(ctx, state.Audience{Kind: state.AudienceAll})
	return c.Reach(), err
}
