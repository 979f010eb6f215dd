package bot

import (
	"context"
	"sync"
	"time"

	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"github.com/shopspring/decimal"

	"shopbot/bot/admin"
	"shopbot/bot/books"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/orderchat"
	"shopbot/bot/referral"
	"shopbot/bot/support"
	"shopbot/flows"
	"shopbot/state"
)

// The shop's features are assembled here, and only here: each from its own
// options, over the shop's stores (built once) and the small interfaces it
// declares, which the Bot (the Telegram adapter) and the other features
// implement. No feature holds the Bot. The order of building follows the
// arrows, so nothing is wired late but checkout's view of the fulfilment
// worker's orphans (the worker's OnLoss runs the checkout's sweep, and the
// checkout asks the worker about unclaimed upstream orders):
//
//	alerts -> checkout -> chat relay -> fulfilment -> admin, books, support
//
// cmd/shopbot, the demo and the tests all get the same shop from bot.New.

// features are the shop's parts other than the Telegram adapter.
type features struct {
	// Alerts tell admins about trouble once per occurrence; they also
	// watch the upstream account (Alerts.WatchUpstream).
	Alerts *admin.Alerts
	// Checkout takes the payments (nil: payments are off); the product
	// lines hand it confirmed quotes (flows.Reply.Pay).
	Checkout *checkout.Checkout
	ful      *fulfil.Fulfiller
	chat     *orderchat.Relay
	support  *support.Support
	admin    *admin.Admin
	books    *books.Books
	orders   *records.Orders // the shop's one order store
	// Promos is the shop's promo code store (checkout holds and consumes
	// uses, fulfilment gives them back, admins manage the codes; the
	// product lines read it through bot/catalog.Promos).
	Promos  *records.Promos
	wallets *records.Wallets       // the shop's one wallet store
	durable *redisstore.Durability // shared by every money write
	// referral is the referral program; nil when it is off
	// (REFERRAL_PERCENT 0, or no wallet to credit rewards to).
	referral *referral.Program
}

// wire builds the features and registers their commands, buttons and flows
// with the engine.
func (b *Bot) wire(opts Options, rdb redisstore.Client, engine *flows.Engine) {
	b.durable = redisstore.NewDurability(rdb, opts.Prefix, redisstore.WithModeReport(func(p redisstore.Persistence) {
		opts.Logger.Info("redis durability", "mode", p.Summary(), "guarantee", p.Guarantee())
	}))
	b.Queue.Durable = b.durable // an acknowledged update survives a failover
	b.orders = records.NewOrders(rdb, opts.Prefix)
	b.orders.Now = opts.Now
	b.orders.Observe = func(o *state.Order, from string) {
		b.metrics.ObserveOrder(o, from)
		b.notify()
	}
	b.wallets = records.NewWallets(rdb, opts.Prefix)
	b.Promos = records.NewPromos(rdb, opts.Prefix)
	b.Promos.Now = opts.Now
	b.wallets.Durable, b.wallets.Now = b.durable, opts.Now
	schedule := sched.NewSchedule(rdb, opts.Prefix)
	reviews := records.NewChargeReviews(rdb, opts.Prefix)
	reviews.Now = opts.Now
	b.metrics.AddStore(b.Queue, b.orders, reviews)

	b.Alerts = admin.NewAlerts(admin.AlertsDeps{
		Telegram: b, Admins: opts.Admins, Lang: engine.DefaultLang, Store: work.NewAlerts(rdb, opts.Prefix),
		Log: opts.Logger, Now: opts.Now,
	})
	b.Alerts.OnBalance = func(usd decimal.Decimal) { b.metrics.Balance.Set(usd.InexactFloat64()) }

	journal := opts.Journal
	if journal == nil {
		journal, _ = state.OpenJournal("", fulfil.JournalKeep, opts.Now) // in memory: cannot fail
	}
	var onLoss func()
	if opts.Checkout != nil {
		b.Checkout = checkout.New(*opts.Checkout, checkout.Deps{
			Telegram: b, Alerts: b.Alerts, Engine: engine,
			Payments: work.NewPayments(rdb, opts.Prefix), Quotes: records.NewQuotes(rdb, opts.Prefix),
			Orders: b.orders, Wallets: b.wallets, Schedule: schedule, Reviews: reviews, Journal: journal,
			Promos: b.Promos, Log: opts.Logger, Now: opts.Now,
		})
		b.Checkout.Register(engine)
		onLoss = b.Checkout.SweepSoon
	}

	var chatUp orderchat.Upstream // no chats without an upstream
	var adminUp admin.Upstream    // no adopting without one
	var booksUp books.Upstream    // no upstream figures without one
	if opts.Reseller != nil {
		chatUp, adminUp, booksUp = opts.Reseller, opts.Reseller, opts.Reseller
	}
	b.chat = orderchat.New(opts.Chat, orderchat.Deps{
		Telegram: b, Upstream: chatUp, Orders: b.orders, Engine: engine, Chats: work.NewOrderChats(rdb, opts.Prefix),
		Schedule: sched.NewNamedSchedule(rdb, opts.Prefix, "chat"), Log: opts.Logger, Now: opts.Now,
	})
	b.wireReferral(opts, rdb, engine)
	var onDelivered func(context.Context, *state.Order) error
	if b.referral != nil {
		onDelivered = b.referral.OnDelivered
	}
	b.ful = fulfil.New(fulfil.Deps{
		Orders: b.orders, Schedule: schedule, Wallets: b.wallets,
		Upstream: opts.Reseller, Messenger: b, Alerts: b.Alerts, Chats: b.chat, Log: opts.Logger, Lang: engine.DefaultLang, Now: opts.Now,
		Durable: b.durable, OnLoss: onLoss, Journal: journal,
		OnRefunded:  func(ctx context.Context, o *state.Order) error { return checkout.ReturnPromo(ctx, b.Promos, o) },
		OnDelivered: onDelivered,
	}, opts.Fulfil)
	if b.Checkout != nil {
		b.Checkout.SetOrphans(b.ful)
	}

	b.admin = admin.New(opts.Admin, admin.Deps{
		Telegram: b, Upstream: adminUp, Fulfil: b.ful, Chats: b.chat,
		Orders: b.orders, Users: b.Users, Promos: b.Promos,
		Engine: engine, Broadcasts: work.NewBroadcasts(rdb, opts.Prefix), Log: opts.Logger, Now: opts.Now,
	})
	b.admin.Register(engine)
	booksOpts := opts.Books
	booksOpts.Wallet = b.Checkout != nil && b.Checkout.WalletEnabled()
	b.books = books.New(booksOpts, books.Deps{
		Telegram: b, Upstream: booksUp, Stars: booksStars{b}, Alerts: b.Alerts,
		Orders: b.orders, Wallets: b.wallets, Users: b.Users, Sessions: b.Queue, Referrals: b.referralStore(),
		Audit: records.NewCreditAudit(rdb, opts.Prefix), Reviews: reviews,
		Schedule: sched.NewNamedSchedule(rdb, opts.Prefix, "books"), Runs: work.NewReconcileRuns(rdb, opts.Prefix),
		Engine: engine, Log: opts.Logger, Now: opts.Now,
	})
	b.books.Register(engine)
	b.chat.Register(engine)
	b.support = support.New(opts.Support, support.Deps{
		Telegram: b, Orders: b.orders, Engine: engine, Admins: opts.Admins, Tickets: work.NewTickets(rdb, opts.Prefix),
		Log: opts.Logger, Now: opts.Now,
	})
	b.support.Register(engine)
}

// wireReferral builds the referral program when REFERRAL_PERCENT is above
// 0 and buyers have a wallet to receive rewards in; with the wallet off it
// says at start that referrals are off.
func (b *Bot) wireReferral(opts Options, rdb redisstore.Client, engine *flows.Engine) {
	if !opts.Referral.Percent.IsPositive() {
		return
	}
	if b.Checkout == nil || !b.Checkout.WalletEnabled() {
		opts.Logger.Warn("REFERRAL_PERCENT is set but the wallet is off (PAYMENT_METHODS has no wallet): referrals are off")
		return
	}
	ro := opts.Referral
	if !ro.StarsUSDRate.IsPositive() {
		ro.StarsUSDRate = opts.Books.StarsUSDRate // the rate of /stats
	}
	b.referral = referral.New(ro, referral.Deps{
		Telegram: b, Store: records.NewReferrals(rdb, opts.Prefix), Wallets: b.wallets, Orders: b.orders,
		Sessions: b.Queue, Engine: engine, BotName: b.botName, Log: opts.Logger, Now: opts.Now,
	})
	b.referral.Register(engine)
	opts.Logger.Info("referrals on", "percent", ro.Percent.String())
}

// referralStore is the referral program's store for the admins' totals, or
// nil when the program is off.
func (b *Bot) referralStore() *records.Referrals {
	if b.referral == nil {
		return nil
	}
	return b.referral.Store()
}

// botName is the bot's username from getMe ("" before the bot started).
func (b *Bot) botName() string {
	if p := b.username.Load(); p != nil {
		return *p
	}
	return ""
}

// runFeatures starts the features' background work under ctx: broadcasts,
// the upstream watch, and with an upstream the fulfilment worker and the
// chat relay, with payments the Stars sweep.
func (b *Bot) runFeatures(ctx context.Context, wg *sync.WaitGroup) {
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	run(b.admin.Run)
	run(b.books.Run)
	run(b.Alerts.RunWatch)
	if b.opts.Reseller != nil {
		run(b.ful.Run)
		run(b.chat.Run)
	}
	if b.Checkout != nil {
		run(b.Checkout.Run)
	}
}

// booksStars gives the books' reconciliation the Star transactions the
// payment sweep reads (Bot.StarTransactions), in its own terms.
type booksStars struct{ b *Bot }

func (s booksStars) StarTransactions(ctx context.Context, offset, limit int) ([]books.StarTx, error) {
	page, err := s.b.StarTransactions(ctx, offset, limit)
	if err != nil {
		return nil, err
	}
	out := make([]books.StarTx, len(page))
	for i, tx := range page {
		out[i] = books.StarTx{ID: tx.ID, Date: time.Unix(tx.Date, 0).UTC(), Amount: tx.Amount, Refund: tx.Refund}
		if tx.Buyer != nil {
			out[i].Incoming, out[i].User, out[i].Payload = true, tx.Buyer.UserID, tx.Buyer.Payload
		}
	}
	return out, nil
}
