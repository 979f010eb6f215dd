package checkout

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"shopbot/bot/notify"
	"shopbot/bot/upstreamorder"
	"shopbot/flows"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// Options configure how buyers pay (docs/design.md, "Payments").
type Options struct {
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
	// SweepDueCheck is how often a process looks for a sweep another
	// asked for (work.Payments.SweepDueAt; default 2 s).
	SweepDueCheck time.Duration
	// CheckTimeout bounds the upstream checks of a pre-checkout query,
	// which Telegram wants answered within 10 s (default 7 s).
	CheckTimeout time.Duration
	// InvoiceSending is how long an invoice may be "being sent" (marked,
	// no message id recorded yet) before the next Pay takes it for lost
	// (a replica killed around sendInvoice) and sends a fresh one; until
	// then a second Pay is told it is on its way (default 30 s, measured
	// with the bot's clock).
	InvoiceSending time.Duration
	// Topup configures buyers' wallet top-ups in Stars, on with the
	// wallet (wallettopup.go).
	Topup TopupOptions
}

// Upstream is what payments read from the reseller (reseller.Client
// implements it): the current price and stock of a quote's item
// (upstreamorder.Reprice), and the account balance.
type Upstream interface {
	upstreamorder.Prices
	Me(ctx context.Context) (*reseller.Account, error)
}

// Checkout takes the buyer's money exactly once: Stars invoices with
// pre-checkout checks, successful payments, the shop wallet and the sweep
// of Star transactions whose update was lost. Its Pay answers flows' Reply.Pay.
// A paid order is created with records.Orders.CreatePaid and scheduled as
// "order:<id>"; fulfilment takes it from there.
type Checkout struct {
	opts     Options
	tg       Telegram
	alerts   notify.Alerter
	orphans  Orphans // nil: a lost quote's charge goes to review
	engine   *flows.Engine
	log      *slog.Logger
	now      func() time.Time
	pay      *work.Payments // payment bookkeeping
	Quotes   *records.Quotes
	Orders   *records.Orders
	Wallets  *records.Wallets
	Schedule *sched.Schedule
	// Reviews lists the Star charges the sweep could not prove
	// undelivered, for admins.
	Reviews *records.ChargeReviews
	journal *state.Journal
	// archived are the archive's orders of the stores this one continues
	// (archived.go).
	archived archivedOrders
	promos   *records.Promos
	limiter  limiter
	kick     chan struct{} // runs the sweep now (Redis lost recent writes)
}

// limiter bounds the invoices a buyer asks for (redisstore.Limiter).
type limiter interface {
	Allow(ctx context.Context, key string) (bool, time.Duration, error)
}

// Button actions of the payment-method choice (arg: the quote's id).
const (
	actPayStars  flows.Action = "pst" // pay in Stars
	actPayWallet flows.Action = "pwl" // pay from the wallet
)

// Payload prefix of our invoices: "q:<quote id>".
const payloadPrefix = "q:"

// WalletRef is the wallet ledger ref (and the order's ChargeID) of a
// wallet payment for quote id.
func WalletRef(quoteID string) string { return "pay:quote:" + quoteID }

// AlertBalanceShort is raised when a pre-checkout finds the upstream
// balance below an order's cost, and cleared when one finds it enough.
const AlertBalanceShort = "upstream:balance-short"

// New returns the checkout configured by opts over d's stores and
// services. Register adds its buttons and commands to the engine; Run
// runs the Stars sweep.
func New(opts Options, d Deps) *Checkout {
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
	if opts.SweepDueCheck <= 0 {
		opts.SweepDueCheck = 2 * time.Second
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
	opts.Topup = opts.Topup.withDefaults()
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Checkout{
		opts: opts, tg: d.Telegram, alerts: d.Alerts, orphans: d.Orphans, engine: d.Engine, log: d.Log, now: d.Now,
		pay:    d.Payments,
		Quotes: d.Quotes, Orders: d.Orders, Wallets: d.Wallets,
		Schedule: d.Schedule, Reviews: d.Reviews, journal: d.Journal, promos: d.Promos,
		limiter: d.Payments.InvoiceLimiter(opts.InvoiceLimit, opts.InvoiceWindow),
		kick:    make(chan struct{}, 1),
	}
}

// Register adds the payment-method buttons and, when the wallet is
// enabled, /wallet and its line in /help.
func (p *Checkout) Register(e *flows.Engine) {
	e.HandleButton(actPayStars, p.chosen)
	e.HandleButton(actPayWallet, p.chosen)
	if p.opts.Wallet {
		e.HandleCommand("wallet", p.walletCommand)
		p.registerTopup(e)
		e.HelpPayment = "help.pay_wallet"
	}
}

// WalletEnabled reports whether buyers may pay from the shop wallet.
func (p *Checkout) WalletEnabled() bool { return p.opts.Wallet }

// Pay starts paying a confirmed quote: an invoice (Stars), a wallet debit,
// or the choice between them.
func (p *Checkout) Pay(ctx context.Context, env *flows.Env, s *flows.Session, q *state.Quote) (*flows.Reply, error) {
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
				{{Text: env.T("btn.back"), Action: shop.ActBack}, {Text: env.T("btn.cancel"), Action: flows.ActCancel}},
			},
		}}, nil
	case p.opts.Wallet:
		return p.payWallet(ctx, env, s, q)
	default:
		return p.invoice(ctx, env, q)
	}
}

// chosen handles the payment-method buttons.
func (p *Checkout) chosen(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
	q, err := p.Quotes.Load(ctx, ev.Button.Arg)
	if err != nil && !errors.Is(err, state.ErrNoQuote) {
		return nil, err
	}
	if err != nil || q.UserID != env.User.ID || q.Expired(env.Now) || q.Cancelled {
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
func (p *Checkout) alreadyPaid(ctx context.Context, env *flows.Env, q *state.Quote) (*flows.Reply, error) {
	o, err := p.Orders.ByQuote(ctx, q.ID)
	if errors.Is(err, state.ErrOrderNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &flows.Reply{Answer: env.T("pay.already_paid", "order", o.ID), Alert: true, NoScreen: true}, nil
}
