// Package storefront is the whole shop: the Telegram adapter (package bot)
// and the features it hands events to, assembled once. cmd/shopbot, the
// demo and the tests (bot/bottest) all get the same shop from New.
//
// Each feature is built here, and only here: from its own options, over
// the shop's stores (built once) and the small interfaces it declares,
// which the Bot (the Telegram adapter) and the other features implement.
// No feature holds the Bot, and the Bot builds none of them: it gets what
// it dispatches to as bot.Features. The order of building follows the
// arrows, so nothing is wired late but checkout's view of the fulfilment
// worker's orphans (the worker's OnLoss runs the checkout's sweep, and the
// checkout asks the worker about unclaimed upstream orders):
//
//	adapter -> alerts -> checkout -> chat relay -> referral -> fulfilment -> admin, books, support
package storefront

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot"
	"shopbot/bot/admin"
	"shopbot/bot/books"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/images"
	"shopbot/bot/orderchat"
	"shopbot/bot/referral"
	"shopbot/bot/support"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// Options configure the whole shop: the adapter's own (bot.Options) and
// each feature's.
type Options struct {
	bot.Options // the Telegram adapter

	Reseller *reseller.Client // places and tracks paid orders; nil: no fulfilment worker
	// Journal records paid orders and upstream creates outside Redis
	// (state.Journal); nil keeps them in this process's memory only.
	Journal *state.Journal
	// Checkout configures payments; nil: payments are off (a pre-checkout
	// query is refused).
	Checkout *checkout.Options
	Fulfil   fulfil.Config    // fulfilment timing and test failpoints
	Chat     orderchat.Config // order chat relay timing
	Support  support.Options  // the helpdesk link and the shop's terms
	Admin    admin.Options    // the Star rate of an order's margin on /order N
	Books    books.Options    // the Star rate of the figures, the daily reconciliation
	// Images shows the catalog's images on the screens that have one
	// (package images); nil: every screen is text (SHOW_IMAGES=false).
	Images *ImageOptions
	// Referral configures the referral program (REFERRAL_PERCENT); it
	// runs only with a percent above 0 and the wallet on.
	Referral referral.Options
}

// ImageOptions turns product images on (Options.Images).
type ImageOptions = images.Options

// Defaults of ImageOptions.
const (
	DefaultImageTimeout   = images.DefaultTimeout
	DefaultImageBrokenFor = images.DefaultBrokenFor
)

// Shop is one shop process: the Telegram adapter (whose Run serves the
// whole shop) and its features. Several may share one Redis.
type Shop struct {
	*bot.Bot

	// Alerts tell admins about trouble once per occurrence; they also
	// watch the upstream account (Alerts.WatchUpstream).
	Alerts *admin.Alerts
	// Checkout takes the payments (nil: payments are off); the product
	// lines hand it confirmed quotes (flows.Reply.Pay).
	Checkout *checkout.Checkout
	// Promos is the shop's promo code store (checkout holds and consumes
	// uses, fulfilment gives them back, admins manage the codes; the
	// product lines read it through bot/catalog.Promos).
	Promos *records.Promos

	ful     *fulfil.Fulfiller
	chat    *orderchat.Relay
	support *support.Support
	admin   *admin.Admin
	books   *books.Books
	orders  *records.Orders        // the shop's one order store
	wallets *records.Wallets       // the shop's one wallet store
	durable *redisstore.Durability // shared by every money write and the intake
	// referral is the referral program; nil when it is off
	// (REFERRAL_PERCENT 0, or no wallet to credit rewards to).
	referral *referral.Program
}

// New builds the shop over rdb with the flow engine: the adapter, the
// shop's stores, and the features, which it registers with the engine and
// hands to the adapter.
func New(opts Options, rdb redisstore.Client, engine *flows.Engine) (*Shop, error) {
	ao := opts.Options.WithDefaults() // the adapter's options, as it runs with them
	durable := redisstore.NewDurability(rdb, ao.Prefix, redisstore.WithModeReport(func(p redisstore.Persistence) {
		ao.Logger.Info("redis durability", "mode", p.Summary(), "guarantee", p.Guarantee())
	}))
	ao.Durable = durable // an acknowledged update survives a failover
	ao.ScreenImages = images.New(opts.Images, opts.Reseller, work.NewImages(rdb, ao.Prefix), ao.Logger)
	b, err := bot.New(ao, rdb, engine)
	if err != nil {
		return nil, err
	}
	opts.Options = ao
	if opts.Journal == nil {
		opts.Journal, _ = state.OpenJournal("", fulfil.JournalKeep, ao.Now) // in memory: cannot fail
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bindJournal(ctx, opts, rdb); err != nil {
		return nil, err
	}
	ao.Logger.Info("journal", "dir", opts.Journal.Dir(), "shop", opts.Journal.Shop().String())
	s := &Shop{Bot: b, durable: durable}
	s.wire(opts, rdb, engine)
	return s, nil
}

// bindJournal names the shop the journal's entries belong to: the bot, the
// upstream account and the store, whose epoch it records when the store is
// new (state.JournalShop says why each).
func bindJournal(ctx context.Context, opts Options, rdb redisstore.Client) error {
	id, _, _ := strings.Cut(opts.Token, ":")
	botID, _ := strconv.ParseInt(id, 10, 64)
	shop := state.JournalShop{Bot: botID}
	if opts.Reseller != nil {
		shop.Account = opts.Reseller.AccountFingerprint()
	}
	epoch, err := redisstore.StoreEpoch(ctx, rdb, opts.Prefix, opts.Now())
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	shop.Store = epoch.UnixMilli()
	if old := opts.Journal.Shop(); old != shop && old != (state.JournalShop{}) {
		opts.Logger.Warn("the store's epoch changed (a flushed or new Redis): the journal's earlier entries are not applied to it", "was", old.String(), "now", shop.String())
	}
	return opts.Journal.Bind(shop, opts.Logger)
}

// wire builds the features and registers their commands, buttons and flows
// with the engine, then hands the adapter what it dispatches to.
func (s *Shop) wire(opts Options, rdb redisstore.Client, engine *flows.Engine) {
	metrics, prefix, log, now := opts.Metrics, opts.Prefix, opts.Logger, opts.Now
	s.orders = records.NewOrders(rdb, prefix)
	s.orders.Now = now
	s.orders.Observe = func(o *state.Order, from string) {
		metrics.ObserveOrder(o, from)
		if opts.Notify != nil {
			opts.Notify()
		}
	}
	s.wallets = records.NewWallets(rdb, prefix)
	s.Promos = records.NewPromos(rdb, prefix)
	s.Promos.Now = now
	s.wallets.Durable, s.wallets.Now = s.durable, now
	schedule := sched.NewSchedule(rdb, prefix)
	reviews := records.NewChargeReviews(rdb, prefix)
	reviews.Now = now
	metrics.AddStore(s.Queue, s.orders, reviews)

	s.Alerts = admin.NewAlerts(admin.AlertsDeps{
		Telegram: s.Bot, Admins: opts.Admins, Lang: engine.DefaultLang, Store: work.NewAlerts(rdb, prefix),
		Log: log, Now: now,
	})
	s.Alerts.OnBalance = func(usd decimal.Decimal) { metrics.Balance.Set(usd.InexactFloat64()) }

	journal := opts.Journal
	// A Redis that lost writes may have been flushed: a new store, whose
	// journal entries are its own from now on.
	onLoss := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := bindJournal(ctx, opts, rdb); err != nil {
			log.Warn("read the store epoch after a loss", "err", err)
		}
	}
	if opts.Checkout != nil {
		s.Checkout = checkout.New(*opts.Checkout, checkout.Deps{
			Telegram: s.Bot, Alerts: s.Alerts, Engine: engine,
			Payments: work.NewPayments(rdb, prefix), Quotes: records.NewQuotes(rdb, prefix),
			Orders: s.orders, Wallets: s.wallets, Schedule: schedule, Reviews: reviews, Journal: journal,
			Promos: s.Promos, Log: log, Now: now,
		})
		s.Checkout.Register(engine)
		rebind := onLoss
		onLoss = func() { rebind(); s.Checkout.SweepSoon() }
	}

	var chatUp orderchat.Upstream // no chats without an upstream
	var adminUp admin.Upstream    // no adopting without one
	var booksUp books.Upstream    // no upstream figures without one
	if opts.Reseller != nil {
		chatUp, adminUp, booksUp = opts.Reseller, opts.Reseller, opts.Reseller
	}
	s.chat = orderchat.New(opts.Chat, orderchat.Deps{
		Telegram: s.Bot, Upstream: chatUp, Orders: s.orders, Engine: engine, Chats: work.NewOrderChats(rdb, prefix),
		Schedule: sched.NewNamedSchedule(rdb, prefix, "chat"), Log: log, Now: now,
	})
	s.wireReferral(opts, rdb, engine)
	var onDelivered func(context.Context, *state.Order) error
	if s.referral != nil {
		onDelivered = s.referral.OnDelivered
	}
	s.ful = fulfil.New(fulfil.Deps{
		Orders: s.orders, Schedule: schedule, Wallets: s.wallets,
		Upstream: opts.Reseller, Messenger: s.Bot, Alerts: s.Alerts, Chats: s.chat, Log: log, Lang: engine.DefaultLang, Now: now,
		Durable: s.durable, OnLoss: onLoss, Journal: journal,
		OnRefunded:  func(ctx context.Context, o *state.Order) error { return checkout.ReturnPromo(ctx, s.Promos, o) },
		OnDelivered: onDelivered,
	}, opts.Fulfil)
	if s.Checkout != nil {
		s.Checkout.SetOrphans(s.ful)
	}

	s.admin = admin.New(opts.Admin, admin.Deps{
		Telegram: s.Bot, Upstream: adminUp, Fulfil: s.ful, Chats: s.chat,
		Orders: s.orders, Users: s.Users, Promos: s.Promos,
		Engine: engine, Broadcasts: work.NewBroadcasts(rdb, prefix), Log: log, Now: now,
	})
	s.admin.Register(engine)
	booksOpts := opts.Books
	booksOpts.Wallet = s.Checkout != nil && s.Checkout.WalletEnabled()
	s.books = books.New(booksOpts, books.Deps{
		Telegram: s.Bot, Upstream: booksUp, Stars: booksStars{s.Bot}, Alerts: s.Alerts,
		Orders: s.orders, Wallets: s.wallets, Users: s.Users, Sessions: s.Queue, Referrals: s.referralStore(),
		Audit: records.NewCreditAudit(rdb, prefix), Reviews: reviews,
		Schedule: sched.NewNamedSchedule(rdb, prefix, "books"), Runs: work.NewReconcileRuns(rdb, prefix),
		Engine: engine, Log: log, Now: now,
	})
	s.books.Register(engine)
	s.chat.Register(engine)
	s.support = support.New(opts.Support, support.Deps{
		Telegram: s.Bot, Orders: s.orders, Engine: engine, Admins: opts.Admins, Tickets: work.NewTickets(rdb, prefix),
		Schedule: sched.NewNamedSchedule(rdb, prefix, "support"),
		Limiter:  redisstore.NewLimiter(rdb, prefix, support.Limit, support.Window),
		Told:     redisstore.NewLimiter(rdb, prefix, 1, support.Window),
		Log:      log, Now: now,
	})
	s.support.Register(engine)
	s.SetFeatures(s.features(opts.Reseller != nil))
}

// features are what the adapter dispatches to and runs: the payments (when
// on), the helpdesk, the referral program (when on), the fulfilment
// worker's redeliveries; in the background broadcasts, the daily
// reconciliation, the upstream watch, and with an upstream the fulfilment
// worker and the chat relay, with payments the Stars sweep.
func (s *Shop) features(upstream bool) bot.Features {
	f := bot.Features{
		Support:    s.support,
		Deliveries: s.ful,
		Background: []func(context.Context){s.admin.Run, s.books.Run, s.Alerts.RunWatch, s.support.Run},
	}
	if upstream {
		f.Background = append(f.Background, s.ful.Run, s.chat.Run)
	}
	if s.Checkout != nil { // a nil *Checkout would be a non-nil bot.Checkout
		f.Checkout = s.Checkout
		f.Background = append(f.Background, s.Checkout.Run)
	}
	if s.referral != nil {
		f.Referral = s.referral
	}
	return f
}

// wireReferral builds the referral program when REFERRAL_PERCENT is above
// 0 and buyers have a wallet to receive rewards in; with the wallet off it
// says at start that referrals are off.
func (s *Shop) wireReferral(opts Options, rdb redisstore.Client, engine *flows.Engine) {
	if !opts.Referral.Percent.IsPositive() {
		return
	}
	if s.Checkout == nil || !s.Checkout.WalletEnabled() {
		opts.Logger.Warn("REFERRAL_PERCENT is set but the wallet is off (PAYMENT_METHODS has no wallet): referrals are off")
		return
	}
	ro := opts.Referral
	if !ro.StarsUSDRate.IsPositive() {
		ro.StarsUSDRate = opts.Books.StarsUSDRate // the rate of /stats
	}
	s.referral = referral.New(ro, referral.Deps{
		Telegram: s.Bot, Store: records.NewReferrals(rdb, opts.Prefix), Wallets: s.wallets, Orders: s.orders,
		Sessions: s.Queue, Engine: engine, BotName: s.Username, Log: opts.Logger, Now: opts.Now,
	})
	s.referral.Register(engine)
	opts.Logger.Info("referrals on", "percent", ro.Percent.String())
}

// referralStore is the referral program's store for the admins' totals, or
// nil when the program is off.
func (s *Shop) referralStore() *records.Referrals {
	if s.referral == nil {
		return nil
	}
	return s.referral.Store()
}

// booksStars gives the books' reconciliation the Star transactions the
// payment sweep reads (Bot.StarTransactions), in its own terms.
type booksStars struct{ b *bot.Bot }

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
