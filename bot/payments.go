package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/bot/fulfil"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// PaymentOptions configure how buyers pay (DESIGN "How money flows").
type PaymentOptions struct {
	Stars    bool     // Telegram Stars invoices
	Wallet   bool     // the shop wallet
	Upstream Upstream // re-prices a quote and reads the balance at pre-checkout
	// InvoiceLimit invoices per buyer per InvoiceWindow (default 10 a minute).
	InvoiceLimit  int
	InvoiceWindow time.Duration
	// SweepEvery is how often the Stars sweep runs (default 10 minutes);
	// SweepWindow how far back it reads the Star transactions (default 30 days).
	SweepEvery  time.Duration
	SweepWindow time.Duration
	// CheckTimeout bounds the upstream checks of a pre-checkout query,
	// which Telegram wants answered within 10 s (default 7 s).
	CheckTimeout time.Duration
	// InvoiceSending is how long an invoice may be "being sent" (marked,
	// no message id recorded yet) before the next Pay takes it for lost
	// (a replica killed around sendInvoice) and sends a fresh one; until
	// then a second Pay is told it is on its way (default 30 s, measured
	// with the bot's clock).
	InvoiceSending time.Duration
}

// Upstream is what payments read from the reseller (reseller.Client
// implements it): the current price and stock of a quote's item, and the
// account balance.
type Upstream interface {
	Me(ctx context.Context) (*reseller.Account, error)
	GiftCardOffers(ctx context.Context, categoryID string) (*reseller.GiftCardOffers, error)
	GameKeyOffers(ctx context.Context, gameID string) (*reseller.GameKeyOffers, error)
	StarsPricing(ctx context.Context) (*reseller.StarsPricing, error)
	PremiumPricing(ctx context.Context) (*reseller.PremiumPricing, error)
	TopUpOffers(ctx context.Context, categoryID string) (*reseller.TopUpOffers, error)
	ManualServiceOffers(ctx context.Context, serviceID string) (*reseller.ManualOffers, error)
	StoreGiftOffers(ctx context.Context, appID int64) (*reseller.StoreGiftOffers, error)
	StoreRates(ctx context.Context) (*reseller.StoreRates, error)
}

// Payments takes the buyer's money exactly once: Stars invoices with
// pre-checkout checks, successful payments, the shop wallet and the sweep
// of Star transactions whose update was lost. Its Pay answers flows' Reply.Pay.
// A paid order is created with state.Orders.CreatePaid and scheduled as
// "order:<id>"; fulfilment takes it from there.
type Payments struct {
	opts     PaymentOptions
	b        *Bot
	rdb      redis.UniversalClient
	p        string // key prefix of payment bookkeeping
	Quotes   *state.Quotes
	Orders   *state.Orders
	Wallets  *state.Wallets
	Schedule *state.Schedule
	// Reviews lists the Star charges the sweep could not prove
	// undelivered, for admins.
	Reviews *state.ChargeReviews
	limiter *state.Limiter
	kick    chan struct{} // runs the sweep now (Redis lost recent writes)
}

// Button actions of the payment-method choice.
const (
	actPayStars  = "pst"
	actPayWallet = "pwl"
)

// Payload prefix of our invoices: "q:<quote id>".
const payloadPrefix = "q:"

// WalletRef is the wallet ledger ref (and the order's ChargeID) of a
// wallet payment for quote id.
func WalletRef(quoteID string) string { return "pay:quote:" + quoteID }

// AlertBalanceShort is raised when a pre-checkout finds the upstream
// balance below an order's cost, and cleared when one finds it enough.
const AlertBalanceShort = "upstream:balance-short"

// NewPayments returns payments configured by opts; Bot.UsePayments wires
// them to a bot.
func NewPayments(opts PaymentOptions) *Payments {
	if !opts.Stars && !opts.Wallet {
		opts.Stars = true
	}
	if opts.InvoiceLimit <= 0 {
		opts.InvoiceLimit = 10
	}
	if opts.InvoiceWindow <= 0 {
		opts.InvoiceWindow = time.Minute
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = 10 * time.Minute
	}
	if opts.SweepWindow <= 0 {
		opts.SweepWindow = 30 * 24 * time.Hour
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = 7 * time.Second
	}
	if opts.InvoiceSending <= 0 {
		opts.InvoiceSending = 30 * time.Second
	}
	return &Payments{opts: opts, kick: make(chan struct{}, 1)}
}

// UsePayments wires p into the bot: stores under the bot's prefix, the
// pre_checkout_query and successful_payment hooks, the payment-method
// buttons, /wallet when the wallet is enabled, and the Stars sweep in Run.
func (b *Bot) UsePayments(p *Payments) {
	p.b, p.rdb, p.p = b, b.rdb, b.opts.Prefix+"pay:"
	p.Quotes = state.NewQuotes(b.rdb, b.opts.Prefix)
	p.Orders = b.newOrders()
	p.Orders.Now = b.opts.Now
	p.Wallets = b.wallets()
	p.Wallets.Now = b.opts.Now
	p.Schedule = state.NewSchedule(b.rdb, b.opts.Prefix)
	p.Reviews = state.NewChargeReviews(b.rdb, b.opts.Prefix)
	p.Reviews.Now = b.opts.Now
	p.limiter = state.NewLimiter(b.rdb, b.opts.Prefix+"pay:", p.opts.InvoiceLimit, p.opts.InvoiceWindow)
	b.pay = p
	b.Hook(p.hook)
	b.Engine.HandleButton(actPayStars, p.chosen)
	b.Engine.HandleButton(actPayWallet, p.chosen)
	if p.opts.Wallet {
		b.Engine.HandleCommand("wallet", p.walletCommand)
		b.Engine.HelpPayment = "help.pay_wallet"
	}
}

// buyerCommandList is the buyers' command menu: /wallet joins it when the
// wallet is enabled.
func (b *Bot) buyerCommandList() []string {
	if b.pay == nil || !b.pay.opts.Wallet {
		return buyerCommands
	}
	var out []string
	for _, c := range buyerCommands {
		if c == "language" {
			out = append(out, "wallet")
		}
		out = append(out, c)
	}
	return out
}

// hook takes the payment updates before the flow engine.
func (p *Payments) hook(ctx context.Context, _ *Bot, u *models.Update) bool {
	switch {
	case u.PreCheckoutQuery != nil:
		p.preCheckout(ctx, u.PreCheckoutQuery)
		return true
	case u.Message != nil && u.Message.SuccessfulPayment != nil:
		p.successfulPayment(ctx, u.Message)
		return true
	case u.Message != nil && u.Message.RefundedPayment != nil:
		return true // our own refund echoed back: nothing to do or say
	}
	return false
}

// Pay starts paying a confirmed quote: an invoice (Stars), a wallet debit,
// or the choice between them.
func (p *Payments) Pay(ctx context.Context, env *flows.Env, s *flows.Session, q *state.Quote) (*flows.Reply, error) {
	if r, err := p.alreadyPaid(ctx, env, q); r != nil || err != nil {
		return r, err
	}
	switch {
	case p.opts.Stars && p.opts.Wallet:
		bal, err := p.Wallets.Balance(ctx, env.User.ID)
		if err != nil {
			return nil, err
		}
		total := locales.Stars(env.Lang, q.Stars) + " · " + locales.Money(env.Lang, q.ShopUSD)
		return &flows.Reply{Save: true, Screen: &flows.Screen{
			Text: env.T("pay.choose", "total", total, "balance", locales.Money(env.Lang, bal)),
			Rows: [][]flows.Button{
				{{Text: env.T("btn.pay_stars", "stars", locales.Stars(env.Lang, q.Stars)), Action: actPayStars, Arg: q.ID}},
				{{Text: env.T("btn.pay_wallet", "balance", locales.Money(env.Lang, bal)), Action: actPayWallet, Arg: q.ID}},
				{{Text: env.T("btn.back"), Action: "b"}, {Text: env.T("btn.cancel"), Action: "x"}},
			},
		}}, nil
	case p.opts.Wallet:
		return p.payWallet(ctx, env, s, q)
	default:
		return p.invoice(ctx, env, q)
	}
}

// chosen handles the payment-method buttons.
func (p *Payments) chosen(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	q, err := p.Quotes.Load(ctx, ev.Button.Arg)
	if err != nil && !errors.Is(err, state.ErrNoQuote) {
		return nil, err
	}
	if err != nil || q.UserID != env.User.ID || q.Expired(env.Now) {
		return &flows.Reply{Answer: env.T("pay.expired"), Alert: true, NoScreen: true}, nil
	}
	if r, err := p.alreadyPaid(ctx, env, q); r != nil || err != nil {
		return r, err
	}
	if ev.Button.Action == actPayWallet && p.opts.Wallet {
		return p.payWallet(ctx, env, s, q)
	}
	if ev.Button.Action == actPayStars && p.opts.Stars {
		return p.invoice(ctx, env, q)
	}
	return &flows.Reply{Answer: env.T("err.outdated"), NoScreen: true}, nil
}

// alreadyPaid answers politely when q already has an order.
func (p *Payments) alreadyPaid(ctx context.Context, env *flows.Env, q *state.Quote) (*flows.Reply, error) {
	o, err := p.Orders.ByQuote(ctx, q.ID)
	if errors.Is(err, state.ErrOrderNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Answer: env.T("pay.already_paid", "order", o.ID), Alert: true, NoScreen: true}, nil
}

// quoteKey holds a quote's payment bookkeeping (a HASH): the buyer's
// language ("lang") and the invoice state: "inv" is "sending" from the
// moment a Pay claims the right to send until sendInvoice returns, then the
// invoice's message id; "inv_at" is when the claim was made (ms, bot clock).
func (p *Payments) quoteKey(id string) string { return p.p + "q:" + id }

// invoiceClaimScript: KEYS[1] the quote key. ARGV: now ms, the sending
// bound ms, lang, key TTL ms. Returns {1, message id} when the invoice was
// sent, {2, ""} while another Pay is sending it (within the bound), and
// {0, ""} when the caller now holds the right to send: no invoice, or a
// "sending" mark older than the bound (its sender died or gave up).
var invoiceClaimScript = redis.NewScript(`
local inv = redis.call('HGET', KEYS[1], 'inv')
if inv and inv ~= 'sending' then return {1, inv} end
if inv == 'sending' then
  local at = tonumber(redis.call('HGET', KEYS[1], 'inv_at') or '0') or 0
  if tonumber(ARGV[1]) - at < tonumber(ARGV[2]) then return {2, ''} end
end
redis.call('HSET', KEYS[1], 'inv', 'sending', 'inv_at', ARGV[1], 'lang', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {0, ''}`)

// invoiceSentScript records the message id of a sent invoice over a
// "sending" mark (ours, or one that took ours over). KEYS[1] the quote
// key, ARGV[1] the message id.
var invoiceSentScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'inv') == 'sending' then
  redis.call('HSET', KEYS[1], 'inv', ARGV[1])
  return 1
end
return 0`)

// invoiceReleaseScript drops our own "sending" mark when nothing was sent.
// KEYS[1] the quote key, ARGV[1] the mark's inv_at.
var invoiceReleaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'inv') == 'sending' and redis.call('HGET', KEYS[1], 'inv_at') == ARGV[1] then
  return redis.call('HDEL', KEYS[1], 'inv', 'inv_at')
end
return 0`)

// invoice sends one Stars invoice per quote. A second Pay while it is
// being sent is told so; once it was sent, a second Pay is pointed to the
// invoice in the chat (it still pays). A "sending" mark with no message id
// after InvoiceSending (a replica killed around sendInvoice) is taken for
// lost: the next Pay sends a fresh invoice. Should both arrive, paying the
// second makes no second order (its charge is refunded, see settle).
func (p *Payments) invoice(ctx context.Context, env *flows.Env, q *state.Quote) (*flows.Reply, error) {
	if q.Stars <= 0 {
		return nil, fmt.Errorf("quote %s has no price in Stars", q.ID)
	}
	key := p.quoteKey(q.ID)
	// Every invoice is recorded after the store's epoch, so the sweep can
	// tell a charge for it from one older than the store.
	if _, err := p.storeEpoch(ctx); err != nil {
		return nil, err
	}
	at := p.b.opts.Now().UnixMilli()
	ttl := time.Until(q.Expires) + state.QuoteKeep
	res, err := invoiceClaimScript.Run(ctx, p.rdb, []string{key}, at, p.opts.InvoiceSending.Milliseconds(), string(env.Lang), ttl.Milliseconds()).Slice()
	if err != nil {
		return nil, fmt.Errorf("mark invoice of quote %s: %w", q.ID, err)
	}
	switch code, _ := res[0].(int64); code {
	case 1:
		return &flows.Reply{Answer: env.T("pay.invoice_again"), Alert: true, NoScreen: true}, nil
	case 2:
		return &flows.Reply{Answer: env.T("pay.invoice_sending"), Alert: true, NoScreen: true}, nil
	}
	release := func() {
		if err := invoiceReleaseScript.Run(context.WithoutCancel(ctx), p.rdb, []string{key}, at).Err(); err != nil {
			p.b.log.Warn("release invoice mark", "quote", q.ID, "err", err)
		}
	}
	ok, wait, err := p.limiter.Allow(ctx, "inv:u:"+strconv.FormatInt(env.User.ID, 10))
	if err != nil || !ok {
		release()
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		n := max(int64((wait+time.Second-1)/time.Second), 1)
		return &flows.Reply{Answer: env.N("err.rate_limited", n), Alert: true, NoScreen: true}, nil
	}
	title := locales.Clip(q.ItemName, 32)
	if title == "" {
		title = locales.Clip(env.T("line."+q.Line), 32)
	}
	desc := locales.Clip(env.T("pay.invoice_description", "item", q.ItemName, "n", q.Quantity), 255)
	var msgID int
	err = p.b.API.Do(ctx, "sendInvoice", q.ChatID, func(ctx context.Context) error {
		m, err := p.b.API.TG.SendInvoice(ctx, &tgbot.SendInvoiceParams{
			ChatID: q.ChatID, Title: title, Description: desc, Payload: payloadPrefix + q.ID,
			Currency: "XTR", Prices: []models.LabeledPrice{{Label: env.T("pay.invoice_label"), Amount: int(q.Stars)}},
		})
		if err == nil {
			msgID = m.ID
		}
		return err
	})
	if err != nil {
		release() // nothing was sent: a new tap may try again
		return nil, fmt.Errorf("send invoice for quote %s: %w", q.ID, err)
	}
	if err := invoiceSentScript.Run(context.WithoutCancel(ctx), p.rdb, []string{key}, msgID).Err(); err != nil {
		// The mark goes stale and the next Pay sends a fresh invoice; both pay.
		p.b.log.Warn("record invoice message", "quote", q.ID, "err", err)
	}
	p.b.log.Info("invoice sent", "chat", q.ChatID, "quote", q.ID, "stars", q.Stars)
	return &flows.Reply{Answer: env.T("pay.invoice_sent"), NoScreen: true}, nil
}

// invoiceRecorded reports whether this store recorded an invoice for the
// quote (sent, or being sent when its sender died).
func (p *Payments) invoiceRecorded(ctx context.Context, quoteID string) (bool, error) {
	if quoteID == "" {
		return false, nil
	}
	ok, err := p.rdb.HExists(ctx, p.quoteKey(quoteID), "inv").Result()
	if err != nil {
		return false, fmt.Errorf("read invoice of quote %s: %w", quoteID, err)
	}
	return ok, nil
}

// langOf returns the language the buyer used for quote id, or the one
// their Telegram client suggests.
func (p *Payments) langOf(ctx context.Context, quoteID string, code string) locales.Lang {
	if quoteID != "" {
		if v, err := p.rdb.HGet(ctx, p.quoteKey(quoteID), "lang").Result(); err == nil {
			if l, ok := locales.Parse(v); ok {
				return l
			}
		}
	}
	return p.b.Engine.LangFor(&flows.Session{}, flows.User{LanguageCode: code})
}

// preCheckout answers a pre_checkout_query: ok only for a live, unpaid
// quote of this buyer whose upstream price, stock and balance still hold.
func (p *Payments) preCheckout(ctx context.Context, pq *models.PreCheckoutQuery) {
	qid, _ := strings.CutPrefix(pq.InvoicePayload, payloadPrefix)
	var from int64
	code := ""
	if pq.From != nil {
		from, code = pq.From.ID, pq.From.LanguageCode
	}
	lang := p.langOf(ctx, qid, code)
	reason := p.checkQuote(ctx, pq, from, lang)
	err := p.b.API.Do(ctx, "answerPreCheckoutQuery", 0, func(ctx context.Context) error {
		params := &tgbot.AnswerPreCheckoutQueryParams{PreCheckoutQueryID: pq.ID, OK: reason == ""}
		if reason != "" {
			params.ErrorMessage = locales.T(lang, reason)
		}
		_, err := p.b.API.TG.AnswerPreCheckoutQuery(ctx, params)
		return err
	})
	if err != nil {
		p.b.log.Warn("answer pre-checkout query", "quote", qid, "err", err)
	}
	p.b.log.Info("pre-checkout", "quote", qid, "user", from, "ok", reason == "", "reason", reason)
}

// checkQuote returns "" when the payment may go ahead, else the locale
// key of the reason.
func (p *Payments) checkQuote(ctx context.Context, pq *models.PreCheckoutQuery, from int64, lang locales.Lang) string {
	qid, ok := strings.CutPrefix(pq.InvoicePayload, payloadPrefix)
	if !ok || qid == "" {
		return "pay.refuse_unknown"
	}
	q, err := p.Quotes.Load(ctx, qid)
	switch {
	case errors.Is(err, state.ErrNoQuote):
		return "pay.refuse_expired"
	case err != nil:
		p.b.log.Warn("pre-checkout: load quote", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	case q.UserID != from:
		return "pay.refuse_unknown"
	case q.Expired(p.b.opts.Now()):
		return "pay.refuse_expired"
	case pq.Currency != "XTR" || int64(pq.TotalAmount) != q.Stars:
		return "pay.refuse_price"
	}
	if _, err := p.Orders.ByQuote(ctx, q.ID); err == nil {
		return "pay.refuse_paid"
	} else if !errors.Is(err, state.ErrOrderNotFound) {
		return "pay.refuse_unavailable"
	}
	if p.opts.Upstream == nil {
		return "pay.refuse_unavailable"
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CheckTimeout)
	defer cancel()
	cur, err := Reprice(cctx, p.opts.Upstream, q)
	switch {
	case reseller.IsNotFound(err):
		return "pay.refuse_stock"
	case err != nil:
		p.b.log.Warn("pre-checkout: re-price", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	case !cur.UpstreamUSD.Equal(q.UpstreamUSD):
		return "pay.refuse_price"
	case cur.Stock >= 0 && cur.Stock < q.Quantity:
		return "pay.refuse_stock"
	}
	me, err := p.opts.Upstream.Me(cctx)
	if err != nil {
		p.b.log.Warn("pre-checkout: read upstream account", "quote", qid, "err", err)
		return "pay.refuse_unavailable"
	}
	if me.Status == reseller.AccountBlocked {
		return "pay.refuse_unavailable"
	}
	al, admin := p.b.Alerts(), p.b.Engine.DefaultLang
	if me.BalanceUSD.LessThan(q.UpstreamUSD) {
		_, _ = al.Raise(ctx, AlertBalanceShort, locales.T(admin, "alert.balance_short",
			"balance", locales.Money(admin, me.BalanceUSD.Decimal), "need", locales.Money(admin, q.UpstreamUSD)))
		return "pay.refuse_unavailable"
	}
	_, _ = al.Clear(ctx, AlertBalanceShort)
	return ""
}

// starCharge is one incoming Stars payment, from an update or the sweep.
type starCharge struct {
	ID      string
	UserID  int64
	ChatID  int64
	Payload string
	Amount  int64
	At      time.Time // when it was paid
}

// successfulPayment records a Stars payment.
func (p *Payments) successfulPayment(ctx context.Context, m *models.Message) {
	sp := m.SuccessfulPayment
	if sp.Currency != "XTR" || m.From == nil {
		p.b.log.Warn("successful payment not in Stars; ignored", "chat", m.Chat.ID, "currency", sp.Currency)
		return
	}
	c := starCharge{ID: sp.TelegramPaymentChargeID, UserID: m.From.ID, ChatID: m.Chat.ID, Payload: sp.InvoicePayload, Amount: int64(sp.TotalAmount), At: time.Unix(int64(m.Date), 0)}
	if _, err := p.settle(ctx, c, m.From.LanguageCode, false); errors.Is(err, errSettleLater) {
		p.b.log.Info("payment settles later", "charge", c.ID, "chat", c.ChatID)
	} else if err != nil {
		// The sweep finds the charge again and finishes the job.
		p.b.log.Error("record payment", "charge", c.ID, "chat", c.ChatID, "err", err)
	}
}

// settle turns a Stars charge into a paid, scheduled order, exactly once:
// a charge that already has an order changes nothing; a charge for a quote
// paid by another charge, or that does not match its quote, is refunded.
// A charge whose quote is gone is refunded only when this store provably
// holds every record of it (it recorded the invoice) and no order was made
// for the quote; otherwise nothing proves it bought nothing, and it is
// listed for admin review instead (reviewed = true).
//
// repair says the sweep found the charge without an order: Redis may have
// lost the order after it was placed upstream, so the new order looks for
// its create above the orphan scan's mark (everything below it is claimed
// or reported) rather than above the newest number seen now.
func (p *Payments) settle(ctx context.Context, c starCharge, langCode string, repair bool) (reviewed bool, err error) {
	if o, err := p.Orders.ByCharge(ctx, c.ID); err == nil {
		return false, p.ensureScheduled(ctx, o)
	} else if !errors.Is(err, state.ErrOrderNotFound) {
		return false, err
	}
	if done, err := p.rdb.Exists(ctx, p.p+"refunded:"+c.ID).Result(); err != nil {
		return false, fmt.Errorf("read refund mark of charge %s: %w", c.ID, err)
	} else if done > 0 {
		return false, nil
	}
	qid, ok := strings.CutPrefix(c.Payload, payloadPrefix)
	lang := p.langOf(ctx, qid, langCode)
	amount := locales.Stars(lang, c.Amount)
	if !ok {
		return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
	}
	q, err := p.Quotes.Load(ctx, qid)
	if errors.Is(err, state.ErrNoQuote) {
		return p.settleQuoteGone(ctx, c, qid, lang)
	}
	if err != nil {
		return false, err
	}
	if c.Amount < q.Stars || q.UserID != c.UserID {
		return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
	}
	order := p.newOrder(q, lang, state.PayStars, c.ID, c.Amount)
	if repair {
		if mark, err := p.Orders.OrphanMark(ctx); err == nil && mark > 0 {
			order.Watermark = mark
		}
	}
	o, dup, err := p.Orders.CreatePaid(ctx, order)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return false, p.refund(ctx, c, lang, "pay.refund_twice", "amount", amount, "order", o.ID)
	}
	if err != nil {
		return false, err
	}
	if dup {
		return false, p.ensureScheduled(ctx, o)
	}
	p.b.log.Info("order paid", "order", o.ID, "quote", q.ID, "charge", c.ID, "method", state.PayStars)
	p.journalPaid(o)
	if err := p.Schedule.Put(ctx, fulfil.OrderJob(o.ID), p.b.opts.Now()); err != nil {
		return false, err
	}
	if _, err := p.b.Send(ctx, c.ChatID, locales.T(lang, "pay.paid", "amount", amount, "order", o.ID), nil); err != nil {
		p.b.log.Warn("tell buyer the payment arrived", "order", o.ID, "err", err)
	}
	return false, nil
}

// settleQuoteGone settles a charge (with no order) whose quote is not
// stored. Orders are indexed by quote forever, so an order of the quote
// under another charge proves this one bought nothing (refund_twice). With
// no order at all, the refund is safe only when the store recorded the
// invoice: then it has seen this purchase from before the charge, and its
// order index covers it. Without that record (a lost or restored store)
// the order may have been made, and delivered, elsewhere: review.
func (p *Payments) settleQuoteGone(ctx context.Context, c starCharge, qid string, lang locales.Lang) (bool, error) {
	amount := locales.Stars(lang, c.Amount)
	o, err := p.Orders.ByQuote(ctx, qid)
	if err == nil {
		return false, p.refund(ctx, c, lang, "pay.refund_twice", "amount", amount, "order", o.ID)
	}
	if !errors.Is(err, state.ErrOrderNotFound) {
		return false, err
	}
	if rebuilt, err := p.rebuildJournaled(ctx, c); err != nil || rebuilt {
		return false, err
	}
	sent, err := p.invoiceRecorded(ctx, qid)
	if err != nil {
		return false, err
	}
	if !sent {
		// The store existed when the charge was made (the callers check),
		// yet holds neither the quote nor its invoice: a Redis crash took
		// them, and perhaps an order made for the charge with them. Such
		// an order's upstream create would be unclaimed now; when every
		// upstream order since the orphan scan's mark is claimed, nothing
		// was bought and the refund is safe. Unclaimed ones may still be
		// claimed by orders being repaired: look again soon, and list the
		// charge for review once that has had its time.
		// Only while the charge is young: the orphan scan's mark passes an
		// unclaimed order once it is reported (after OrphanAfter), and
		// then "all claimed" would no longer speak for this charge.
		if wait := p.b.ful.OrphanAfter() / 2; p.b.opts.Now().Sub(c.At) < wait {
			// An unclaimed order seen before the charge is not its; the
			// margin covers our clock running behind Telegram's.
			all, known, err := p.b.ful.AllClaimed(ctx, c.At.Add(-clockMargin))
			if err != nil {
				return false, err
			}
			if all {
				p.b.log.Info("payment whose quote a Redis crash took bought nothing; refunding", "charge", c.ID, "user", c.UserID)
				return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
			}
			if known {
				p.b.log.Info("payment whose quote is gone waits for unclaimed upstream orders to be claimed", "charge", c.ID, "user", c.UserID)
				time.AfterFunc(min(wait/10, time.Minute), p.SweepSoon)
				return false, errSettleLater
			}
		}
		p.b.log.Warn("payment for a quote this store does not hold; listed for review", "charge", c.ID, "user", c.UserID)
		return true, p.review(ctx, c, state.ReviewQuoteGone)
	}
	return false, p.refund(ctx, c, lang, "pay.refund_gone", "amount", amount)
}

// journalPaid writes the new paid order to the journal (state.Journal), so
// that a Redis that loses it together with its quote does not lose what
// the buyer paid for.
func (p *Payments) journalPaid(o *state.Order) {
	if err := p.b.ful.Journal().Append(state.JournalEntry{Kind: state.JournalPaid, Charge: o.ChargeID, Order: o}); err != nil {
		p.b.log.Error("journal a paid order", "order", o.ID, "err", err)
	}
}

// rebuildJournaled makes the paid order of charge c again from the
// journal, when Redis lost it together with its quote; it reports whether
// it did. The order keeps its own watermark, so its placement reconciles
// with everything created since it was paid (and a journaled create of it
// is put back before any new one).
func (p *Payments) rebuildJournaled(ctx context.Context, c starCharge) (bool, error) {
	e, ok, err := p.b.ful.Journal().ByCharge(state.JournalPaid, c.ID)
	if err != nil {
		p.b.log.Warn("read the journal", "err", err)
	}
	if !ok || e.Order == nil || e.Order.UserID != c.UserID {
		return false, nil
	}
	o, dup, err := p.Orders.CreatePaid(ctx, e.Order)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return false, nil // the quote is back with another charge's order: settle as usual
	}
	if err != nil {
		return false, err
	}
	if !dup {
		p.b.log.Info("paid order Redis lost rebuilt from the journal", "order", o.ID, "charge", c.ID)
	}
	return true, p.ensureScheduled(ctx, o)
}

// clockMargin is how far our clock may run behind Telegram's where the two
// are compared.
const clockMargin = 30 * time.Second

// errSettleLater means a charge cannot be settled yet; the sweep looks at
// it again soon.
var errSettleLater = errors.New("charge settles later")

// newOrder is the paid order for q (the contract with fulfilment).
func (p *Payments) newOrder(q *state.Quote, lang locales.Lang, method, charge string, stars int64) *state.Order {
	item, _ := json.Marshal(q) // a struct of strings, numbers and times always marshals
	o := &state.Order{
		QuoteID: q.ID, ChatID: q.ChatID, UserID: q.UserID, Lang: string(lang), Line: q.Line, Item: item,
		UpstreamUSD: q.UpstreamUSD, ShopUSD: q.ShopUSD, PayMethod: method, ChargeID: charge,
	}
	if method == state.PayStars {
		o.Stars = stars
	}
	return o
}

// ensureScheduled puts a paid order that has no fulfilment job (its
// payment was recorded but the process died before scheduling) on the
// schedule. A job that exists is left alone: it may be leased.
func (p *Payments) ensureScheduled(ctx context.Context, o *state.Order) error {
	if o.Status != state.OrderPaid {
		return nil
	}
	_, ok, err := p.Schedule.Due(ctx, fulfil.OrderJob(o.ID))
	if err != nil || ok {
		return err
	}
	return p.Schedule.Put(ctx, fulfil.OrderJob(o.ID), p.b.opts.Now())
}

// refund gives a Stars charge back at once. CHARGE_ALREADY_REFUNDED counts
// as done. The buyer is told once; a failure alerts admins and is retried
// by the sweep.
func (p *Payments) refund(ctx context.Context, c starCharge, lang locales.Lang, key string, kv ...any) error {
	if err := p.b.RefundStars(ctx, c.UserID, c.ID); err != nil {
		admin := p.b.Engine.DefaultLang
		_, _ = p.b.Alerts().Raise(ctx, "refund:"+c.ID, locales.T(admin, "alert.refund_failed", "charge", locales.Escape(c.ID)))
		return fmt.Errorf("refund charge %s: %w", c.ID, err)
	}
	p.b.log.Info("charge refunded", "charge", c.ID, "user", c.UserID, "reason", key)
	first, err := p.rdb.SetNX(ctx, p.p+"refunded:"+c.ID, p.b.opts.Now().Unix(), 400*24*time.Hour).Result()
	if err != nil {
		return fmt.Errorf("mark charge %s refunded: %w", c.ID, err)
	}
	if first {
		_, _ = p.b.Alerts().Clear(ctx, "refund:"+c.ID)
		if _, err := p.b.Send(ctx, c.ChatID, locales.T(lang, key, kv...), nil); err != nil {
			p.b.log.Warn("tell buyer about a refund", "charge", c.ID, "err", err)
		}
	}
	return nil
}

// walletPending lists wallet payments between the debit and the order
// (member "<user>:<quote>", score ms), so the sweep finishes any that a
// crash interrupted.
func (p *Payments) walletPending() string { return p.p + "wallet-pending" }

// payWallet debits the buyer's wallet for q (idempotent by the quote's
// ref) and creates the paid order.
func (p *Payments) payWallet(ctx context.Context, env *flows.Env, s *flows.Session, q *state.Quote) (*flows.Reply, error) {
	member := strconv.FormatInt(q.UserID, 10) + ":" + q.ID
	if err := p.rdb.ZAdd(ctx, p.walletPending(), redis.Z{Score: float64(p.b.opts.Now().UnixMilli()), Member: member}).Err(); err != nil {
		return nil, fmt.Errorf("mark wallet payment: %w", err)
	}
	p.rdb.HSet(ctx, p.quoteKey(q.ID), "lang", string(env.Lang))
	p.rdb.Expire(ctx, p.quoteKey(q.ID), time.Until(q.Expires)+state.QuoteKeep)
	bal, err := p.Wallets.Debit(ctx, q.UserID, q.ShopUSD, WalletRef(q.ID), "order")
	if errors.Is(err, state.ErrInsufficientFunds) {
		p.rdb.ZRem(ctx, p.walletPending(), member)
		return &flows.Reply{Answer: env.T("pay.wallet_short", "balance", locales.Money(env.Lang, bal), "total", locales.Money(env.Lang, q.ShopUSD)), Alert: true, NoScreen: true}, nil
	}
	if err != nil {
		return nil, err
	}
	o, err := p.settleWallet(ctx, q, env.Lang)
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		return &flows.Reply{Answer: env.T("pay.already_paid", "order", o.ID), Alert: true, NoScreen: true}, nil
	}
	if err != nil {
		return nil, err
	}
	s.Clear()
	text := env.T("pay.paid_wallet", "amount", locales.Money(env.Lang, q.ShopUSD), "order", o.ID, "balance", locales.Money(env.Lang, bal))
	return &flows.Reply{Save: true, Screen: &flows.Screen{Text: text, Rows: [][]flows.Button{{{Text: env.T("btn.menu"), Action: "m"}}}}}, nil
}

// settleWallet creates and schedules the order of a debited wallet
// payment. When the quote was paid otherwise meanwhile, the debit is
// credited back and ErrQuoteAlreadyPaid returned with that order.
func (p *Payments) settleWallet(ctx context.Context, q *state.Quote, lang locales.Lang) (*state.Order, error) {
	ref := WalletRef(q.ID)
	member := strconv.FormatInt(q.UserID, 10) + ":" + q.ID
	o, dup, err := p.Orders.CreatePaid(ctx, p.newOrder(q, lang, state.PayWallet, ref, 0))
	if errors.Is(err, state.ErrQuoteAlreadyPaid) {
		if _, _, cerr := p.Wallets.Credit(ctx, q.UserID, q.ShopUSD, "refund:"+ref, "refund", "refund"); cerr != nil {
			return nil, cerr
		}
		p.rdb.ZRem(ctx, p.walletPending(), member)
		return o, err
	}
	if err != nil {
		return nil, err
	}
	if dup {
		err = p.ensureScheduled(ctx, o)
	} else {
		p.b.log.Info("order paid", "order", o.ID, "quote", q.ID, "method", state.PayWallet)
		err = p.Schedule.Put(ctx, fulfil.OrderJob(o.ID), p.b.opts.Now())
	}
	if err != nil {
		return nil, err
	}
	p.rdb.ZRem(ctx, p.walletPending(), member)
	return o, nil
}

// walletCommand shows the balance and the last ten movements.
func (p *Payments) walletCommand(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	bal, err := p.Wallets.Balance(ctx, env.User.ID)
	if err != nil {
		return nil, err
	}
	entries, err := p.Wallets.Ledger(ctx, env.User.ID, 0, 10)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(env.T("wallet.title", "balance", locales.Money(env.Lang, bal)))
	b.WriteString("\n\n")
	if len(entries) == 0 {
		b.WriteString(env.T("wallet.empty"))
	} else {
		b.WriteString(env.T("wallet.history"))
		for _, e := range entries {
			b.WriteString("\n")
			what := env.T(entryKind(e))
			if id := p.entryOrder(ctx, e); id > 0 {
				what = env.T(entryKind(e)+"_order", "id", id)
			}
			b.WriteString(env.T("wallet.entry", "date", locales.Date(env.Lang, e.At), "amount", signedMoney(env.Lang, e.Amount), "what", what))
		}
	}
	return &flows.Reply{Notices: []flows.Notice{{Text: b.String()}}, NoScreen: true}, nil
}

// entryOrder is the shop order a wallet movement paid or refunded, or 0:
// payments and refunds of a quote name its order, refunds of an order name
// it directly.
func (p *Payments) entryOrder(ctx context.Context, e state.Entry) int64 {
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

func signedMoney(lang locales.Lang, d decimal.Decimal) string {
	if d.IsNegative() {
		return "−" + locales.Money(lang, d.Neg())
	}
	return "+" + locales.Money(lang, d)
}

func entryKind(e state.Entry) string {
	switch {
	case strings.HasPrefix(e.Ref, "pay:quote:"):
		return "wallet.kind_pay"
	case e.Actor == "refund" || strings.HasPrefix(e.Ref, "refund:"):
		return "wallet.kind_refund"
	case e.Amount.IsPositive():
		return "wallet.kind_credit"
	}
	return "wallet.kind_debit"
}
