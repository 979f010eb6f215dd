package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/notify"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state/redisstore/work"
)

// Alerts tell admins about trouble once per occurrence: an alert's key is
// remembered in the store (work.Alerts, shared by every process) until the
// condition clears, so polling the same condition again sends nothing. They also watch the
// upstream account (AlertsDeps.Watch).
type Alerts struct {
	tg     notify.Sender
	store  *work.Alerts
	admins []int64
	lang   locales.Lang // the admins' language
	log    *slog.Logger
	now    func() time.Time
	watch  *Watch
	// onBalance, when set, is told every upstream balance the watch reads.
	onBalance func(usd decimal.Decimal)
}

// AlertsDeps are what alerts use.
type AlertsDeps struct {
	Telegram notify.Sender
	Admins   []int64      // the owners (ADMIN_IDS): alerts go to them only
	Lang     locales.Lang // the admins' language
	Store    *work.Alerts // which alerts are raised
	// Watch is the upstream account's watch (RunWatch); nil: none.
	Watch *Watch
	// OnBalance, when set, is told every upstream balance the watch reads
	// (the bot's balance gauge).
	OnBalance func(usd decimal.Decimal)
	Log       *slog.Logger
	Now       func() time.Time
}

// Watch is the watch of the upstream account: RunWatch reads it every
// Every and alerts admins when the key is rejected (401), the account is
// blocked (403 or BLOCKED), or the balance drops below Low; each once per
// occurrence, with a note when the balance recovers. Every defaults to a
// minute.
type Watch struct {
	Account AccountReader
	Low     decimal.Decimal
	Every   time.Duration
}

// NewAlerts returns the admins' alerts.
func NewAlerts(d AlertsDeps) *Alerts {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Watch != nil && d.Watch.Every <= 0 {
		w := *d.Watch
		w.Every = time.Minute
		d.Watch = &w
	}
	return &Alerts{tg: d.Telegram, store: d.Store, admins: d.Admins, lang: d.Lang, log: d.Log, now: d.Now, watch: d.Watch, onBalance: d.OnBalance}
}

// Raise sends text to every admin unless the alert key is already raised.
// It reports whether it sent.
func (a *Alerts) Raise(ctx context.Context, key, text string) (bool, error) {
	if raised, err := a.store.Raise(ctx, key, a.now()); !raised || err != nil {
		return false, err
	}
	a.log.Warn("admin alert", "alert", key)
	for _, id := range a.admins {
		if _, err := a.tg.Send(ctx, id, text, nil); err != nil {
			a.log.Warn("send admin alert", "admin", id, "alert", key, "err", err)
		}
	}
	return true, nil
}

// Mark raises the alert key without telling anyone, and reports whether
// it was not raised before: a caller that alerts about many items at once
// marks each and tells admins about the new ones in one message (Tell).
func (a *Alerts) Mark(ctx context.Context, key string) (bool, error) {
	return a.store.Raise(ctx, key, a.now())
}

// Tell sends text to every admin (an alert whose keys Mark raised).
func (a *Alerts) Tell(ctx context.Context, text string) {
	for _, id := range a.admins {
		if _, err := a.tg.Send(ctx, id, text, nil); err != nil {
			a.log.Warn("send admin alert", "admin", id, "err", err)
		}
	}
}

// Clear ends an alert's occurrence, so the next Raise alerts again. It
// reports whether the alert was raised.
func (a *Alerts) Clear(ctx context.Context, key string) (bool, error) {
	return a.store.Clear(ctx, key)
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

// RunWatch polls the upstream account until ctx ends (nothing to do
// without a Watch).
func (a *Alerts) RunWatch(ctx context.Context) {
	if a.watch == nil {
		return
	}
	t := time.NewTicker(a.watch.Every)
	defer t.Stop()
	for {
		a.CheckUpstream(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckUpstream reads the upstream account once and raises or clears the
// upstream alerts. It returns the account when it could be read.
func (a *Alerts) CheckUpstream(ctx context.Context) *reseller.Account {
	if a.watch == nil {
		return nil
	}
	al, lang := a, a.lang
	me, err := a.watch.Account.Me(ctx)
	switch {
	case reseller.IsUnauthorized(err):
		_, _ = al.Raise(ctx, AlertKeyRejected, locales.T(lang, "alert.key_rejected"))
		return nil
	case reseller.IsForbidden(err):
		_, _ = al.Raise(ctx, AlertBlocked, locales.T(lang, "alert.blocked"))
		return nil
	case err != nil:
		if ctx.Err() == nil {
			a.log.Warn("read upstream account", "err", err)
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
	if a.onBalance != nil {
		a.onBalance(bal)
	}
	if bal.LessThan(a.watch.Low) {
		_, _ = al.Raise(ctx, AlertLowBalance, locales.T(lang, "alert.low_balance", "balance", locales.Money(lang, bal), "low", locales.Money(lang, a.watch.Low)))
	} else if was, _ := al.Clear(ctx, AlertLowBalance); was {
		for _, id := range a.admins {
			_, _ = a.tg.Send(ctx, id, locales.T(lang, "alert.balance_recovered", "balance", locales.Money(lang, bal)), nil)
		}
	}
	return me
}
