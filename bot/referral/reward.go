package referral

import (
	"context"
	"errors"
	"strconv"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// RewardRef is the wallet ledger ref of the reward for order id: the
// credit happens once per order, however often it is asked for.
func RewardRef(id int64) string { return "ref:order:" + strconv.FormatInt(id, 10) }

// RewardOf is the reward of a delivered order with margin, at percent:
// percent of the margin, rounded down to the cent; zero when the margin is
// not positive.
func RewardOf(margin, percent decimal.Decimal) decimal.Decimal {
	if !margin.IsPositive() || !percent.IsPositive() {
		return decimal.Zero
	}
	return margin.Mul(percent).Shift(-2).Truncate(2)
}

// OnDelivered rewards the referrer of a delivered order's buyer (the
// fulfilment worker's Deps.OnDelivered, run each time the order's finished
// job looks at it until it succeeds). Every step is idempotent by the
// order, so a repeated run or a crash anywhere in between pays once:
//   - the reward is decided once (records.Referrals.Decide) from the order's
//     margin as /stats counts it (state.Order.Margin: what the buyer paid
//     minus a cost that is never negative, so a reward is at most percent
//     of what the buyer paid); the first decision stands, also when REFERRAL_PERCENT
//     changes later; no margin, no reward; an impossible upstream cost
//     (state.Order.ChargeFault) decides nothing;
//   - the referrer's wallet is credited with ledger ref ref:order:<id>
//     (records.Wallets.Credit: a second credit with that ref changes nothing);
//   - the referrer is told once, in their language.
//
// Delivered orders are final in this shop (no status leads out of
// delivered; an admin refund refuses them), so a reward is never taken
// back; a refunded order was never delivered and earns nothing.
func (p *Program) OnDelivered(ctx context.Context, o *state.Order) error {
	if !p.Enabled() || o.Status != state.OrderDelivered {
		return nil
	}
	referrer, ok, err := p.d.Store.Referrer(ctx, o.UserID)
	if err != nil || !ok || referrer == o.UserID {
		return err
	}
	rw, decided, err := p.d.Store.RewardOf(ctx, o.ID)
	if err != nil {
		return err
	}
	if !decided {
		margin, ok := o.Margin(p.opts.StarsUSDRate)
		if !ok {
			// An impossible upstream cost (state.Order.ChargeFault): no
			// reward is decided from it.
			p.d.Log.Warn("referral reward: the order's cost is not plausible", "order", o.ID, "charged_usd", o.ChargedUSD.String())
			return nil
		}
		rw, err = p.d.Store.Decide(ctx, state.Reward{Order: o.ID, Referrer: referrer, USD: RewardOf(margin, p.opts.Percent), At: p.d.Now()})
		if err != nil {
			return err
		}
		p.d.Log.Info("referral reward decided", "order", o.ID, "referrer", rw.Referrer, "usd", rw.USD.StringFixed(2))
	}
	if !rw.USD.IsPositive() {
		return nil
	}
	bal, _, err := p.d.Wallets.Credit(ctx, rw.Referrer, rw.USD, RewardRef(o.ID), "referral reward, order "+strconv.FormatInt(o.ID, 10), "referral")
	if err != nil {
		return err
	}
	return p.tell(ctx, rw, bal)
}

// tell tells the referrer about a reward, at most once (a notice that
// cannot be sent is not tried again: the reward is in their wallet and its
// ledger either way).
func (p *Program) tell(ctx context.Context, rw state.Reward, balance decimal.Decimal) error {
	mine, err := p.d.Store.ClaimTold(ctx, rw.Order)
	if err != nil || !mine {
		return err
	}
	lang := p.langOf(ctx, rw.Referrer)
	text := locales.T(lang, "ref.rewarded", "amount", locales.Money(lang, rw.USD), "balance", locales.Money(lang, balance))
	if _, err := p.d.Telegram.Send(ctx, rw.Referrer, text, nil); err != nil && !errors.Is(err, flows.ErrBlocked) {
		p.d.Log.Warn("tell a referrer about a reward", "order", rw.Order, "referrer", rw.Referrer, "err", err)
	}
	return nil
}
