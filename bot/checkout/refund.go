package checkout

import (
	"context"
	"fmt"
	"time"

	"shopbot/locales"
)

// refundedKeep is how long the mark that a charge was refunded is kept.
const refundedKeep = 400 * 24 * time.Hour

// refund gives a Stars charge back at once. CHARGE_ALREADY_REFUNDED counts
// as done. The buyer is told once; a failure alerts admins and is retried
// by the sweep.
func (p *Checkout) refund(ctx context.Context, c starCharge, lang locales.Lang, key string, kv ...any) error {
	if err := p.tg.RefundStars(ctx, c.UserID, c.ID); err != nil {
		admin := p.engine.DefaultLang
		_, _ = p.alerts.Raise(ctx, "refund:"+c.ID, locales.T(admin, "alert.refund_failed", "charge", locales.Escape(c.ID)))
		return fmt.Errorf("refund charge %s: %w", c.ID, err)
	}
	p.log.Info("charge refunded", "charge", c.ID, "user", c.UserID, "reason", key)
	first, err := p.pay.MarkRefunded(ctx, c.ID, p.now(), refundedKeep)
	if err != nil {
		return err
	}
	if first {
		_, _ = p.alerts.Clear(ctx, "refund:"+c.ID)
		if _, err := p.tg.Send(ctx, c.ChatID, locales.T(lang, key, kv...), nil); err != nil {
			p.log.Warn("tell buyer about a refund", "charge", c.ID, "err", err)
		}
	}
	return nil
}
