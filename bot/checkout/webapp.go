package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/state"
)

// What the Mini App (bot/webapp) asks of checkout beside InvoiceLink: the
// chat's wallet payment, statement and top-up, each the very path the
// chat takes (walletPay, WalletStatement, newTopup), so a payment from the
// app is made, settled and swept exactly as one from the chat.

// PayFromWallet pays quote quoteID of env's buyer from their shop wallet
// (the chat's walletPay: one debit by the quote's ref, the order created
// by it). A quote already paid returns its order. refusal (plain text in
// env's language) says why nothing was paid: the wallet is off, the quote
// is unknown, another buyer's, expired or cancelled, the balance is short,
// the promo code's last use is gone.
func (p *Checkout) PayFromWallet(ctx context.Context, env *flows.Env, quoteID string) (o *state.Order, refusal string, err error) {
	if !p.opts.Wallet {
		return nil, env.T("wtopup.off"), nil
	}
	q, err := p.Quotes.Load(ctx, quoteID)
	if err != nil && !errors.Is(err, state.ErrNoQuote) {
		return nil, "", err
	}
	if err != nil || q.UserID != env.User.ID || q.Expired(env.Now) || q.Cancelled {
		return nil, env.T("pay.expired"), nil
	}
	if o, err := p.Orders.ByQuote(ctx, q.ID); err == nil {
		return o, "", nil
	} else if !errors.Is(err, state.ErrOrderNotFound) {
		return nil, "", err
	}
	o, _, refusal, err = p.walletPay(ctx, env, q)
	if refusal != "" && o != nil {
		return o, "", nil // paid otherwise meanwhile: that order
	}
	return o, refusal, err
}

// TopupRange is what a wallet top-up of env's buyer may be now, as the
// chat's amount step offers it (topupAmounts): the least and the most (hi
// below lo: the wallet is full) and the quick amounts within; on is false
// when top-ups are off.
func (p *Checkout) TopupRange(ctx context.Context, env *flows.Env) (lo, hi decimal.Decimal, amounts []decimal.Decimal, on bool, err error) {
	if !p.topupsOn() {
		return lo, hi, nil, false, nil
	}
	o := p.opts.Topup
	bal, err := p.Wallets.Balance(ctx, env.User.ID)
	if err != nil {
		return lo, hi, nil, false, err
	}
	hi = o.MaxUSD
	if room, bounded := p.room(bal); bounded {
		hi = decimal.Min(hi, room)
	}
	for _, a := range o.Amounts {
		if !a.LessThan(o.MinUSD) && !a.GreaterThan(hi) {
			amounts = append(amounts, a)
		}
	}
	return o.MinUSD, hi, amounts, true, nil
}

// TopupStars is the price in Stars of a wallet top-up of usd.
func (p *Checkout) TopupStars(usd decimal.Decimal) int64 { return p.topupStars(usd) }

// TopupLink answers a Mini App's top-up of usd with the Stars invoice link
// of a new top-up (the chat's top-up, its invoice linked rather than
// sent: the same payload, settled from the payment's update as in the
// chat). refusal (Telegram HTML in env's language) says why there is
// none: top-ups are off, the amount is outside the limits or over the
// wallet's bound, or the buyer asked for too many invoices.
func (p *Checkout) TopupLink(ctx context.Context, env *flows.Env, usd decimal.Decimal) (link, refusal string, err error) {
	if !p.topupsOn() {
		return "", env.T("wtopup.off"), nil
	}
	t, problem, limited, err := p.newTopup(ctx, env, usd)
	switch {
	case err != nil:
		return "", "", err
	case problem != "":
		return "", problem, nil
	case limited != "":
		return "", limited, nil
	}
	link, err = p.tg.CreateInvoiceLink(ctx, p.topupInvoice(env, t))
	if err != nil {
		return "", "", fmt.Errorf("create top-up invoice link %s: %w", t.ID, err)
	}
	p.log.Info("wallet top-up invoice link made", "user", t.UserID, "topup", t.ID, "usd", usd.StringFixed(2), "stars", t.Stars)
	return link, "", nil
}
