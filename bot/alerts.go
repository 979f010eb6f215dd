package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/locales"
	"shopbot/reseller"
)

// Alerts tell admins about trouble once per occurrence: an alert's key is
// remembered in Redis (shared by every process) until the condition clears,
// so polling the same condition again sends nothing.
type Alerts struct {
	b *Bot
	p string
}

// Alerts returns the bot's admin alerts.
func (b *Bot) Alerts() *Alerts { return &Alerts{b: b, p: b.opts.Prefix + "alert:"} }

// Raise sends text to every admin unless the alert key is already raised.
// It reports whether it sent.
func (a *Alerts) Raise(ctx context.Context, key, text string) (bool, error) {
	ok, err := a.b.rdb.SetArgs(ctx, a.p+key, a.b.opts.Now().Unix(), redis.SetArgs{Mode: "NX", TTL: 30 * 24 * time.Hour}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil || ok != "OK" {
		return false, fmt.Errorf("raise alert %s: %w", key, err)
	}
	a.b.log.Warn("admin alert", "alert", key)
	for _, id := range a.b.opts.Admins {
		if _, err := a.b.Send(ctx, id, text, nil); err != nil {
			a.b.log.Warn("send admin alert", "admin", id, "alert", key, "err", err)
		}
	}
	return true, nil
}

// Clear ends an alert's occurrence, so the next Raise alerts again. It
// reports whether the alert was raised.
func (a *Alerts) Clear(ctx context.Context, key string) (bool, error) {
	n, err := a.b.rdb.Del(ctx, a.p+key).Result()
	return n > 0, err
}

// AccountReader reads the upstream account (the reseller client does).
type AccountReader interface {
	Me(ctx context.Context) (*reseller.Account, error)
}

// Alert keys of the upstream watch.
const (
	AlertLowBalance  = "upstream:low-balance"
	AlertKeyRejected = "upstream:unauthorized"
	AlertBlocked     = "upstream:blocked"
)

// WatchUpstream makes Run poll the upstream account every interval and
// alert admins when the key is rejected (401), the account is blocked
// (403 or BLOCKED), or the balance drops below low; each once per
// occurrence, with a note when the balance recovers.
func (b *Bot) WatchUpstream(acct AccountReader, low decimal.Decimal, every time.Duration) {
	b.watch = &upstreamWatch{acct: acct, low: low, every: every}
}

type upstreamWatch struct {
	acct  AccountReader
	low   decimal.Decimal
	every time.Duration
}

func (b *Bot) watchUpstream(ctx context.Context) {
	if b.watch == nil {
		return
	}
	t := time.NewTicker(b.watch.every)
	defer t.Stop()
	for {
		b.CheckUpstream(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckUpstream reads the upstream account once and raises or clears the
// upstream alerts. It returns the account when it could be read.
func (b *Bot) CheckUpstream(ctx context.Context) *reseller.Account {
	if b.watch == nil {
		return nil
	}
	al, lang := b.Alerts(), b.Engine.DefaultLang
	me, err := b.watch.acct.Me(ctx)
	switch {
	case reseller.IsUnauthorized(err):
		_, _ = al.Raise(ctx, AlertKeyRejected, locales.T(lang, "alert.key_rejected"))
		return nil
	case reseller.IsForbidden(err):
		_, _ = al.Raise(ctx, AlertBlocked, locales.T(lang, "alert.blocked"))
		return nil
	case err != nil:
		if ctx.Err() == nil {
			b.log.Warn("read upstream account", "err", err)
		}
		return nil
	}
	_, _ = al.Clear(ctx, AlertKeyRejected)
	if me.Status == reseller.AccountBlocked {
		_, _ = al.Raise(ctx, AlertBlocked, locales.T(lang, "alert.blocked"))
	} else {
		_, _ = al.Clear(ctx, AlertBlocked)
	}
	bal := me.BalanceUSD.Decimal
	b.metrics.Balance.Set(bal.InexactFloat64())
	if bal.LessThan(b.watch.low) {
		_, _ = al.Raise(ctx, AlertLowBalance, locales.T(lang, "alert.low_balance", "balance", locales.Money(lang, bal), "low", locales.Money(lang, b.watch.low)))
	} else if was, _ := al.Clear(ctx, AlertLowBalance); was {
		for _, id := range b.opts.Admins {
			_, _ = b.Send(ctx, id, locales.T(lang, "alert.balance_recovered", "balance", locales.Money(lang, bal)), nil)
		}
	}
	return me
}
