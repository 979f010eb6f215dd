package checkout

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/fulfil"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore/work"
)

// payWallet debits the buyer's wallet for q (idempotent by the quote's
// ref) and creates the paid order.
func (p *Checkout) payWallet(ctx context.Context, env *flows.Env, s *flows.Session, q *state.Quote) (*flows.Reply, error) {
	o, bal, refusal, err := p.walletPay(ctx, env, q)
	if err != nil {
		return nil, err
	}
	if refusal != "" {
		return &flows.Reply{Answer: refusal, Alert: true, NoScreen: true}, nil
	}
	s.Clear()
	text := env.T("pay.paid_wallet", "amount", locales.Money(env.Lang, q.ShopUSD), "order", o.ID, "balance", locales.Money(env.Lang, bal))
	return &flows.Reply{Save: true, Screen: &flows.Screen{Text: text, Rows: [][]flows.Button{{{Text: env.T("btn.menu"), Action: flows.ActMenu}}}}}, nil
}

// walletPay is the one wallet payment of the chat and the Mini App: it
// debits the buyer's wallet for q (idempotent by the quote's ref) and
// creates the paid order, returning it and the balance left. refusal (in
// env's language) says why nothing was paid: the balance is short, the
// promo code's last use is gone, or the quote was paid otherwise (o is
// then that order).
func (p *Checkout) walletPay(ctx context.Context, env *flows.Env, q *state.Quote) (o *state.Order, bal decimal.Decimal, refusal string, err error) {
	member := work.WalletPending{UserID: q.UserID, QuoteID: q.ID}
	// The promo use is held before any money moves.
	if err := p.reservePromo(ctx, q); errors.Is(err, state.ErrPromoUnavailable) {
		return nil, bal, env.T("pay.promo_gone", "code", q.PromoCode), nil
	} else if err != nil {
		return nil, bal, "", err
	}
	// Listed as under way, so the sweep finishes it should this stop
	// between the debit and the order.
	began := p.now()
	if err := p.pay.AddWalletPending(ctx, q.UserID, q.ID, began); err != nil {
		return nil, bal, "", err
	}
	_ = p.pay.SetQuoteLang(ctx, q.ID, string(env.Lang), time.Until(q.Expires)+state.QuoteKeep)
	bal, err = p.Wallets.Debit(ctx, q.UserID, q.ShopUSD, WalletRef(q.ID), "order")
	if errors.Is(err, state.ErrInsufficientFunds) {
		_ = p.pay.DropWalletPending(ctx, member)
		p.releasePromo(ctx, q)
		return nil, bal, env.T("pay.wallet_short", "balance", locales.Money(env.Lang, bal), "total", locales.Money(env.Lang, q.ShopUSD)), nil
	}
	if err != nil {
		return nil, bal, "", err
	}
	o, err = p.settleWallet(ctx, q, env.Lang, began)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return o, bal, env.T("pay.already_paid", "order", o.ID), nil
	}
	if errors.Is(err, state.ErrPromoUnavailable) {
		return nil, bal, env.T("pay.promo_gone", "code", q.PromoCode), nil
	}
	if err != nil {
		return nil, bal, "", err
	}
	return o, bal, "", nil
}

// settleWallet creates and schedules the order of a debited wallet
// payment begun at began. When the quote was paid otherwise meanwhile, the
// debit is credited back and ErrQuoteAlreadyPaid returned with that order.
func (p *Checkout) settleWallet(ctx context.Context, q *state.Quote, lang locales.Lang, began time.Time) (*state.Order, error) {
	ref := WalletRef(q.ID)
	member := work.WalletPending{UserID: q.UserID, QuoteID: q.ID}
	// giveBack credits the debit back (nothing is bought) and returns
	// o with why.
	giveBack := func(o *state.Order, why error) (*state.Order, error) {
		if err := p.refundDebit(ctx, q.UserID, q.ShopUSD, ref); err != nil {
			return nil, err
		}
		_ = p.pay.DropWalletPending(ctx, member)
		return o, why
	}
	if err := p.commitPromo(ctx, q); errors.Is(err, state.ErrPromoUnavailable) {
		// The hold lapsed and the last use went to someone else.
		return giveBack(nil, err)
	} else if err != nil {
		return nil, err
	}
	o, dup, err := p.Orders.CreatePaid(ctx, p.newOrder(q, lang, state.PayWallet, ref, 0, began))
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return giveBack(o, err)
	}
	if err != nil {
		return nil, err
	}
	if dup {
		err = p.ensureScheduled(ctx, o)
	} else {
		p.log.Info("order paid", "order", o.ID, "line", o.Line, "quote", q.ID, "method", state.PayWallet)
		p.journalPaid(o)
		err = p.Schedule.Put(ctx, fulfil.OrderJob(o.ID), p.now())
	}
	if err != nil {
		return nil, err
	}
	_ = p.pay.DropWalletPending(ctx, member)
	return o, nil
}

// refundDebit gives back the wallet debit ref (of amount) that bought
// nothing: the one credit-back of a wallet payment. The refund's ref,
// "refund:"+ref, makes it once.
func (p *Checkout) refundDebit(ctx context.Context, userID int64, amount decimal.Decimal, ref string) error {
	_, _, err := p.Wallets.Credit(ctx, userID, amount, "refund:"+ref, "refund", "refund")
	return err
}

// walletCommand shows the balance and the last ten movements.
func (p *Checkout) walletCommand(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	bal, lines, err := p.WalletStatement(ctx, env, 0, 10)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(env.T("wallet.title", "balance", locales.Money(env.Lang, bal)))
	b.WriteString("\n\n")
	if len(lines) == 0 {
		b.WriteString(env.T("wallet.empty"))
	} else {
		b.WriteString(env.T("wallet.history"))
		for _, l := range lines {
			b.WriteString("\n")
			b.WriteString(env.T("wallet.entry", "date", locales.Date(env.Lang, l.At), "amount", locales.SignedMoney(env.Lang, l.Amount), "what", l.What))
		}
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: b.String(), Rows: p.topupRows(env)}}, NoScreen: true}, nil
}

// WalletStatement is the buyer's balance and count of their wallet
// movements from offset (newest first), each as they read it in env's
// language: /wallet's and the Mini App's wallet page.
func (p *Checkout) WalletStatement(ctx context.Context, env *flows.Env, offset, count int) (decimal.Decimal, []state.StatementLine, error) {
	bal, err := p.Wallets.Balance(ctx, env.User.ID)
	if err != nil {
		return bal, nil, err
	}
	entries, err := p.Wallets.Ledger(ctx, env.User.ID, offset, count)
	if err != nil {
		return bal, nil, err
	}
	lines := make([]state.StatementLine, 0, len(entries))
	for _, e := range entries {
		l := state.StatementLine{At: e.At, Amount: e.Amount, What: env.T(entryKind(e))}
		if id := p.entryOrder(ctx, e); id > 0 {
			l.Order, l.What = id, env.T(entryKind(e)+"_order", "id", id)
		}
		lines = append(lines, l)
	}
	return bal, lines, nil
}

// entryOrder is the shop order a wallet movement paid or refunded, or 0:
// payments and refunds of a quote name its order, refunds of an order name
// it directly.
func (p *Checkout) entryOrder(ctx context.Context, e state.Entry) int64 {
	ref := e.Ref
	if id, ok := strings.CutPrefix(ref, "refund:order:"); ok {
		n, _ := strconv.ParseInt(id, 10, 64)
		return n
	}
	ref = strings.TrimPrefix(ref, "refund:")
	qid, ok := strings.CutPrefix(ref, "pay:quote:")
	if !ok || qid == "" {
		return 0
	}
	if o, err := p.Orders.ByQuote(ctx, qid); err == nil {
		return o.ID
	}
	return 0
}

func entryKind(e state.Entry) string {
	switch {
	case strings.HasPrefix(e.Ref, "topup:"):
		return "wtopup.kind"
	case strings.HasPrefix(e.Ref, "pay:quote:"):
		return "wallet.kind_pay"
	case e.Actor == "refund" || strings.HasPrefix(e.Ref, "refund:"):
		return "wallet.kind_refund"
	case strings.HasPrefix(e.Ref, "ref:order:"):
		return "wallet.kind_referral" // a referral reward (bot/referral)
	case e.Amount.IsPositive():
		return "wallet.kind_credit"
	}
	return "wallet.kind_debit"
}
