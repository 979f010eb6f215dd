package bot

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/redis/go-redis/v9"

	"shopbot/locales"
	"shopbot/state"
)

// sweepLoop runs the sweep at start and then every SweepEvery until ctx
// ends.
func (p *Payments) sweepLoop(ctx context.Context) {
	t := time.NewTicker(p.opts.SweepEvery)
	defer t.Stop()
	for {
		if n, err := p.Sweep(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, ErrSweepBusy) {
			p.b.log.Warn("payment sweep", "err", err)
		} else if n > 0 {
			p.b.log.Info("payment sweep repaired payments", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ErrSweepBusy means another process (or the periodic run) is sweeping.
var ErrSweepBusy = errors.New("another payment sweep is running")

// sweepPage is the getStarTransactions page size (Telegram's maximum).
const sweepPage = 100

// Sweep repairs payments whose update was lost or whose handling was cut
// short. It pages through the bot's Star transactions (newest first, back
// SweepWindow): an incoming invoice payment with payload "q:<id>" and no
// order becomes a paid order (then fulfilled), or is refunded when its
// quote is gone or already paid. It also finishes wallet payments
// interrupted between the debit and the order. It is idempotent and
// returns how many payments it repaired. Only one process sweeps at a
// time: the others get ErrSweepBusy.
func (p *Payments) Sweep(ctx context.Context) (int, error) {
	lock := p.p + "sweep-lock"
	ok, err := p.rdb.SetNX(ctx, lock, 1, 5*time.Minute).Result()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrSweepBusy
	}
	defer p.rdb.Del(context.WithoutCancel(ctx), lock)
	n, err := p.sweepWallet(ctx)
	if err != nil {
		return n, err
	}
	if !p.opts.Stars {
		return n, nil
	}
	cutoff := p.b.opts.Now().Add(-p.opts.SweepWindow).Unix()
	refunded := map[string]bool{}
	var firstErr error
	for offset := 0; offset < 1000*sweepPage; offset += sweepPage {
		var page *models.StarTransactions
		err := p.b.API.Do(ctx, "getStarTransactions", 0, func(ctx context.Context) error {
			var err error
			page, err = p.b.API.TG.GetStarTransactions(ctx, &tgbot.GetStarTransactionsParams{Offset: offset, Limit: sweepPage})
			return err
		})
		if err != nil {
			return n, err
		}
		for _, tx := range page.Transactions {
			if tx.Receiver != nil && tx.Receiver.User != nil {
				refunded[tx.ID] = true // a refund carries its charge's id
				continue
			}
			if int64(tx.Date) < cutoff {
				return n, firstErr
			}
			src := tx.Source
			if src == nil || src.User == nil || !strings.HasPrefix(src.User.InvoicePayload, payloadPrefix) || refunded[tx.ID] {
				continue
			}
			o, err := p.Orders.ByCharge(ctx, tx.ID)
			if err == nil {
				if err := p.ensureScheduled(ctx, o); err != nil && firstErr == nil {
					firstErr = err
				}
				continue
			}
			if !errors.Is(err, state.ErrOrderNotFound) {
				return n, err
			}
			u := src.User.User
			c := starCharge{ID: tx.ID, UserID: u.ID, ChatID: u.ID, Payload: src.User.InvoicePayload, Amount: int64(tx.Amount)}
			p.b.log.Info("sweep: payment without an order", "charge", c.ID, "user", c.UserID)
			if err := p.settle(ctx, c, u.LanguageCode); err != nil {
				p.b.log.Warn("sweep: settle payment", "charge", c.ID, "err", err)
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			n++
		}
		if len(page.Transactions) < sweepPage {
			break
		}
	}
	return n, firstErr
}

// sweepWallet finishes wallet payments left between the debit and the
// order for more than a minute: the order is created, or the money
// credited back when the quote is gone or was paid otherwise.
func (p *Payments) sweepWallet(ctx context.Context) (int, error) {
	max := strconv.FormatInt(p.b.opts.Now().Add(-time.Minute).UnixMilli(), 10)
	members, err := p.rdb.ZRangeByScore(ctx, p.walletPending(), &redis.ZRangeBy{Min: "-inf", Max: max, Count: 100}).Result()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range members {
		us, qid, _ := strings.Cut(m, ":")
		user, _ := strconv.ParseInt(us, 10, 64)
		_, moved, err := p.Wallets.Moved(ctx, user, WalletRef(qid))
		if err != nil {
			return n, err
		}
		if !moved {
			p.rdb.ZRem(ctx, p.walletPending(), m)
			continue
		}
		lang := p.langOf(ctx, qid, "")
		q, err := p.Quotes.Load(ctx, qid)
		if errors.Is(err, state.ErrNoQuote) {
			if o, err := p.Orders.ByCharge(ctx, WalletRef(qid)); err == nil {
				_ = p.ensureScheduled(ctx, o)
				p.rdb.ZRem(ctx, p.walletPending(), m)
				continue
			}
			amt, _, _ := p.Wallets.Moved(ctx, user, WalletRef(qid))
			if _, _, err := p.Wallets.Credit(ctx, user, amt.Neg(), "refund:"+WalletRef(qid), "refund", "refund"); err != nil {
				return n, err
			}
			p.rdb.ZRem(ctx, p.walletPending(), m)
			n++
			continue
		}
		if err != nil {
			return n, err
		}
		o, err := p.settleWallet(ctx, q, lang)
		if errors.Is(err, state.ErrQuoteAlreadyPaid) {
			n++
			continue
		}
		if err != nil {
			return n, err
		}
		if o.CreatedAt.After(p.b.opts.Now().Add(-time.Minute)) { // created just now: the buyer never heard
			bal, _ := p.Wallets.Balance(ctx, q.UserID)
			_, _ = p.b.Send(ctx, q.ChatID, locales.T(lang, "pay.paid_wallet", "amount", locales.Money(lang, q.ShopUSD), "order", o.ID, "balance", locales.Money(lang, bal)), nil)
		}
		n++
	}
	return n, nil
}
