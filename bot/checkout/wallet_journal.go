package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"shopbot/bot/upstreamorder"
	"shopbot/locales"
	"shopbot/state"
)

// sweepWalletJournal rebuilds the wallet-paid orders Redis lost (a crash
// of a Redis without a synced copy, a failover to a replica that was
// behind, a restore): every wallet order is journaled when it is created
// (journalPaid), so one the journal holds and Redis does not is made again
// with the same debit ref. When the debit was lost too, it is taken again
// (the ref makes it once); a buyer who has spent the money since is told
// that nothing was bought and nothing taken. An order whose quote was paid
// otherwise meanwhile gives its debit back. It reports how many it
// repaired.
func (p *Checkout) sweepWalletJournal(ctx context.Context) (int, error) {
	if !p.opts.Wallet {
		return 0, nil
	}
	entries, err := p.journal.Recent(state.JournalPaid)
	if err != nil {
		p.log.Warn("read the journal", "err", err)
	}
	n := 0
	for _, e := range entries {
		o := e.Order
		if o == nil || o.PayMethod != state.PayWallet || e.Charge == "" {
			continue
		}
		if _, err := p.Orders.ByCharge(ctx, e.Charge); err == nil {
			continue // in the store: nothing was lost
		} else if !errors.Is(err, state.ErrOrderNotFound) {
			return n, err
		}
		if done, err := p.restoreArchived(ctx, e.Charge, o.UserID, false); err != nil {
			return n, err
		} else if done {
			continue // delivered by the store this one continues
		}
		repaired, err := p.rebuildWalletOrder(ctx, o)
		if err != nil {
			return n, err
		}
		if repaired {
			n++
		}
	}
	return n, nil
}

// rebuildWalletOrder makes the lost wallet order o again (see
// sweepWalletJournal) and reports whether it changed anything.
func (p *Checkout) rebuildWalletOrder(ctx context.Context, o *state.Order) (bool, error) {
	lang, ok := locales.Parse(o.Lang)
	if !ok {
		lang = p.langOf(ctx, o.QuoteID, "")
	}
	bal, err := p.Wallets.Debit(ctx, o.UserID, o.ShopUSD, o.ChargeID, "order")
	if errors.Is(err, state.ErrInsufficientFunds) {
		// The debit went with the order and the money is spent since:
		// nothing can be bought for it. Told once: a refusal mark by the
		// debit's ref.
		first, err := p.pay.MarkWalletLost(ctx, o.ChargeID, p.now(), walletLostKeep)
		if err != nil || !first {
			return false, err
		}
		p.log.Error("wallet order Redis lost cannot be paid again; not rebuilt", "order", o.ID, "user", o.UserID, "ref", o.ChargeID)
		item := o.Line
		if q, err := upstreamorder.QuoteOf(o); err == nil {
			item = q.ItemName
		}
		if _, err := p.tg.Send(ctx, o.ChatID, locales.T(lang, "pay.wallet_lost", "item", locales.Escape(item), "balance", locales.Money(lang, bal)), nil); err != nil {
			p.log.Warn("tell buyer about a lost wallet payment", "user", o.UserID, "err", err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("debit the wallet of lost order %d again: %w", o.ID, err)
	}
	rebuilt, err := p.restorePaid(ctx, o)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		// Paid otherwise meanwhile (the buyer paid again after the loss):
		// the debit goes back.
		return true, p.refundDebit(ctx, o.UserID, o.ShopUSD, o.ChargeID)
	}
	return rebuilt, err
}

// walletLostKeep is how long the mark that a lost wallet payment's buyer
// was told is kept: longer than the journal holds the order.
const walletLostKeep = 24 * time.Hour
