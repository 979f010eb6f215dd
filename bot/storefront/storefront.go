// Package storefront is the whole shop: the Telegram adapter (package bot)
// and the features it hands events to, assembled once. cmd/shopbot, the
// demo and the tests (bot/bottest) all get the same shop from New.
//
// Each feature is built here, and only here: from its own options, over
// the shop's stores (built once) and the small interfaces it declares,
// which the Bot (the Telegram adapter) and the other features implement.
// No feature holds the Bot, and the Bot builds none of them: Shop.Run
// hands it what it dispatches to as bot.Features. The order of building
// follows the arrows, so every constructor gets what it needs and nothing
// is wired in later:
//
//	adapter -> alerts -> chat relay -> referral, reviews -> fulfilment -> checkout -> admin, books, support
//
// The one loop, fulfilment noticing that Redis lost writes and the
// checkout's sweep rebuilding the lost orders, is closed at call time:
// the worker's OnLoss is the shop's lost, which reads the checkout built
// after the worker when it runs.
package storefront

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot"
	"shopbot/bot/admin"
	"shopbot/bot/books"
	"shopbot/bot/checkout"
	"shopbot/bot/console"
	"shopbot/bot/fulfil"
	"shopbot/bot/images"
	"shopbot/bot/orderchat"
	"shopbot/bot/referral"
	"shopbot/bot/remind"
	"shopbot/bot/restock"
	"shopbot/bot/reviews"
	"shopbot/bot/settings"
	"shopbot/bot/support"
	"shopbot/bot/webapp"
	"shopbot/flows"
	"shopbot/flows/shop"
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
	Images *images.Options
	// Referral configures the referral program (REFERRAL_PERCENT); it
	// runs only with a percent above 0 and the wallet on.
	Referral referral.Options
	// Watch polls the upstream account for the admins' alerts (a rejected
	// key, a blocked account, a low balance); nil: no watch.
	Watch *admin.Watch
	// Restock checks the sold-out items buyers wait for in the product
	// lines' catalog (Restock.Catalog; nil: off).
	Restock restock.Options
	// Console configures the admin console, served with the Mini App
	// under its path + "admin/" (ServeWebApp).
	Console console.Options
	// Remind reminds buyers of a quote they did not pay (QUOTE_REMINDER;
	// After 0: off). The product lines' quote store tells it of each
	// quote (bot/catalog.Quotes.Saved: Shop.Reminders.Quoted).
	Remind remind.Options
}

// Shop is one shop process: the Telegram adapter (whose Run serves the
// whole shop) and its features. Several may share one Redis.
type Shop struct {
	*bot.Bot

	// Alerts tell admins about trouble once per occurrence; they also
	// watch the upstream account (Options.Watch).
	Alerts *admin.Alerts
	// Checkout takes the payments (nil: payments are off); the product
	// lines hand it confirmed quotes (flows.Reply.Pay).
	Checkout *checkout.Checkout
	// Promos is the shop's promo code store (checkout holds and consumes
	// uses, fulfilment gives them back, admins manage the codes; the
	// product lines read it through bot/catalog.Promos).
	Promos *records.Promos
	// Reviews is the store of the buyers' reviews (the reviews feature
	// writes them, the product lines read them through
	// bot/catalog.Reviews).
	Reviews *records.Reviews
	// Reminders remind buyers of the quotes they did not pay; the product
	// lines' quote store hands it each quote (Quoted).
	Reminders *remind.Reminders
	// Audit is the log of the admin actions that changed something, from
	// the chat and the console.
	Audit *records.AuditLog

	ful     *fulfil.Fulfiller
	reviews *reviews.Reviews
	restock *restock.Restock
	chat    *orderchat.Relay
	support *support.Support
	admin   *admin.Admin
	books   *books.Books
	console *console.Console       // the admin console (mounted by ServeWebApp)
	orders  *records.Orders        // the shop's one order store
	wallets *records.Wallets       // the shop's one wallet store
	durable *redisstore.Durability // shared by every money write and the intake
	// referral is the referral program; nil when it is off
	// (REFERRAL_PERCENT 0, or no wallet to credit rewards to).
	referral *referral.Program

	opts   Options           // as the shop runs with them (the adapter's defaults filled in)
	rdb    redisstore.Client // the shop's Redis, for features built after New (ServeWebApp)
	handed bot.Features      // what Run hands the adapter (features)
}

// New builds the shop over rdb with the flow engine: the adapter, the
// shop's stores, and the features, which it registers with the engine and
// hands to the adapter.
func New(opts Options, rdb redisstore.Client, engine *flows.Engine) (*Shop, error) {
	ao := opts.Options.WithDefaults() // the adapter's options, as it runs with them
	durable := redisstore.NewDurability(rdb, ao.Prefix, redisstore.WithModeReport(func(p redisstore.Persistence) {
		ao.Logger.Info("redis durability", "mode", p.Summary(), "guarantee", p.Guarantee())
	}), redisstore.WithSyncObserver(ao.Metrics.ObserveSync))
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
	s := &Shop{Bot: b, durable: durable, opts: opts, rdb: rdb}
	s.wire(opts, rdb, engine)
	return s, nil
}

// ServeWebApp serves the Mini App (package webapp) on the shop's HTTP
// listener at opts.Path, and the admin console (package console) at
// opts.Path + "admin/", over sh: the product lines' shop that
// lines.Register gave the engine, so the app's catalog, prices, checks,
// quotes and limits are the chat's. Its invoice links come from checkout
// (none while payments are off), its orders from the shop's store. Call it
// before Run; it returns the app.
func (s *Shop) ServeWebApp(opts webapp.Options, sh *shop.Shop) (*webapp.App, error) {
	opts = opts.WithDefaults()
	d := webapp.Deps{
		Token: s.opts.Token, Shop: sh, Engine: s.Engine, Orders: s.orders,
		Limiter: redisstore.NewLimiter(s.rdb, s.opts.Prefix, opts.Limit, opts.Window),
		BotName: s.Username, Log: s.opts.Logger, Now: s.opts.Now,
	}
	if im := s.opts.ScreenImages; im != nil { // the chat's images, served through the shop
		d.Images = appImages{im}
	}
	d.Support = appSupport{s.support}
	if s.referral != nil { // referrals on
		d.Referrals = appReferrals{s.referral, s.Bot}
	}
	if s.Checkout != nil { // a nil *Checkout would be a non-nil Payments
		d.Payments = s.Checkout
		if s.Checkout.WalletEnabled() {
			d.Wallet = s.Checkout
		}
	}
	app := webapp.New(opts, d)
	if err := s.Mount(app.Path(), app.Handler()); err != nil {
		return nil, fmt.Errorf("mini app: %w", err)
	}
	if err := s.Mount(app.Path()+"admin/", s.console.Handler(app.Path()+"admin/")); err != nil {
		return nil, fmt.Errorf("admin console: %w", err)
	}
	return app, nil
}

// appImages gives the Mini App the chat's product images (bot/images) in
// its own terms.
type appImages struct{ im *images.Images }

func (a appImages) Names(ctx context.Context, urls []string) []string { return a.im.Names(ctx, urls) }

func (a appImages) Image(ctx context.Context, key string) ([]byte, string, string, error) {
	img, err := a.im.Image(ctx, key)
	if err != nil {
		return nil, "", "", err
	}
	return img.Data, img.Type, img.ETag, nil
}

// appSupport gives the Mini App the shop's support and terms in its own
// terms.
type appSupport struct{ *support.Support }

func (a appSupport) BuyerThread(ctx context.Context, buyer int64, limit int) (bool, []webapp.SupportMsg, error) {
	open, msgs, err := a.Support.BuyerThread(ctx, buyer, limit)
	out := make([]webapp.SupportMsg, len(msgs))
	for i, m := range msgs {
		out[i] = webapp.SupportMsg{At: m.At, Staff: m.From != 0, Text: m.Text, Photo: m.Photo}
	}
	return open, out, err
}

// appReferrals gives the Mini App the referral program's page and the
// bot's prepared invite (shareMessage) in its own terms.
type appReferrals struct {
	p *referral.Program
	b *bot.Bot
}

func (a appReferrals) PageOf(ctx context.Context, env *flows.Env) (*webapp.ReferralPage, error) {
	pg, err := a.p.PageOf(ctx, env)
	if err != nil {
		return nil, err
	}
	return &webapp.ReferralPage{Link: pg.Link, ShareURL: pg.ShareURL, Percent: pg.Percent, Buyers: pg.Buyers, Earned: pg.Earned}, nil
}

func (a appReferrals) PrepareInvite(ctx context.Context, user flows.User) (string, error) {
	p, err := a.b.PrepareInvite(ctx, user)
	return p.ID, err
}

// Console is the admin console (served by ServeWebApp under the Mini
// App's path + "admin/").
func (s *Shop) Console() *console.Console { return s.console }

// Books returns the shop's books (/balance, /charges, ...).
func (s *Shop) Books() *books.Books { return s.books }

// Run serves the shop until ctx is cancelled (bot.Bot.Run with the
// shop's features).
func (s *Shop) Run(ctx context.Context) error {
	s.restoreWallets(ctx)
	go s.archiveBalances(ctx)
	return s.Bot.Run(ctx, s.handed)
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
	lin, err := redisstore.StoreLineage(ctx, rdb, opts.Prefix, opts.Now(), storeLineage(opts.Journal, shop))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	shop.Store = lin.Epoch.UnixMilli()
	if old := opts.Journal.Shop(); old != shop && old != (state.JournalShop{}) {
		opts.Logger.Warn("the store's epoch changed (a flushed or new Redis)", "was", old.String(), "now", shop.String(), "continues", lin.Continues)
	}
	if len(lin.Continues) > 0 {
		opts.Logger.Info("the store continues earlier stores of this bot and account: their journal entries and wallets are this store's", "store", shop.Store, "continues", lin.Continues)
	}
	return opts.Journal.BindLineage(shop, lin.Continues, opts.Logger)
}

// storeLineage returns the stores a store of shop (bot and account)
// created now continues: the store the journal is bound to and what that
// one continues (Redis came back empty under this process), else the
// latest store the journal's directory served (every process was down).
func storeLineage(j *state.Journal, shop state.JournalShop) []int64 {
	if cur := j.Shop(); cur.Bot == shop.Bot && cur.Account == shop.Account && cur.Store != 0 {
		return append([]int64{cur.Store}, j.Continues()...)
	}
	return j.LastStore(shop.Bot, shop.Account)
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
	// Numbers buyers were told stay theirs when Redis goes back.
	s.orders.Floor = opts.Journal.NewestOrder
	s.wallets = records.NewWallets(rdb, prefix)
	s.Promos = records.NewPromos(rdb, prefix)
	s.Reviews = records.NewReviews(rdb, prefix)
	s.Promos.Now = now
	s.wallets.Durable, s.wallets.Now = s.durable, now
	s.wallets.Archive = state.OpenArchive(opts.Journal, state.ArchiveKeep)
	s.wallets.ArchiveFailed = func(user int64, ref string, err error) {
		log.Error("archive a wallet movement (the daily record of balances catches up)", "user", user, "ref", ref, "err", err)
	}
	schedule := sched.NewSchedule(rdb, prefix)
	chargeReviews := records.NewChargeReviews(rdb, prefix)
	chargeReviews.Now = now
	metrics.AddStore(s.Queue, s.orders, chargeReviews, rdb)
	// One audit log of the admin actions, written by every feature that
	// acts for staff (the chat's and the console's alike).
	s.Audit = records.NewAuditLog(rdb, prefix)
	s.Audit.Now = now

	// Alerts go to the owners (ADMIN_IDS) only.
	s.Alerts = admin.NewAlerts(admin.AlertsDeps{
		Telegram: s.Bot, Admins: opts.Admins, Lang: engine.DefaultLang, Store: work.NewAlerts(rdb, prefix),
		Watch: opts.Watch, OnBalance: func(usd decimal.Decimal) { metrics.Balance.Set(usd.InexactFloat64()) },
		Log: log, Now: now,
	})

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
	s.reviews = reviews.New(reviews.Deps{
		Telegram: s.Bot, Store: s.Reviews, Orders: s.orders, Lang: engine.DefaultLang, Log: log, Now: now,
	})
	s.reviews.Register(engine)
	s.Reminders = remind.New(opts.Remind, remind.Deps{
		Telegram: s.Bot, Store: records.NewReminders(rdb, prefix), Orders: s.orders,
		Schedule: sched.NewNamedSchedule(rdb, prefix, "remind"), Sessions: s.Queue, Engine: engine,
		BotName: s.Username, Log: log, Now: now,
	})
	s.Reminders.Register(engine)
	var remindStore *records.Reminders
	if s.Reminders.Enabled() {
		remindStore = records.NewReminders(rdb, prefix)
	}
	settings.New(settings.Deps{Users: s.Users, Reminders: remindStore}).Register(engine)
	s.restock = restock.New(opts.Restock, restock.Deps{
		Telegram: s.Bot, Store: records.NewRestock(rdb, prefix), BotName: s.Username, Lang: engine.DefaultLang, Log: log, Now: now,
	})
	// After a delivery: the referrer's reward, then the buyer is asked to
	// rate the order (each once; an error brings the order's job back).
	// The buyer's profile records the purchase first, for the broadcasts'
	// audiences (a failure is only logged: the next delivery or the
	// profile's fill from orders makes up for it).
	onDelivered := s.reviews.OnDelivered
	if s.referral != nil {
		onDelivered = func(ctx context.Context, o *state.Order) error {
			return errors.Join(s.referral.OnDelivered(ctx, o), s.reviews.OnDelivered(ctx, o))
		}
	}
	notify := onDelivered
	onDelivered = func(ctx context.Context, o *state.Order) error {
		s.recordPurchase(ctx, o)
		s.archiveOrder(o)
		return notify(ctx, o)
	}
	journal := opts.Journal
	s.ful = fulfil.New(fulfil.Deps{
		Orders: s.orders, Schedule: schedule, Wallets: s.wallets,
		Upstream: opts.Reseller, Messenger: s.Bot, Alerts: s.Alerts, Chats: s.chat, Log: log, Lang: engine.DefaultLang, Now: now,
		Durable: s.durable, OnLoss: func() { s.lost(opts, rdb) }, Journal: journal,
		OnRefunded: func(ctx context.Context, o *state.Order) error {
			s.archiveOrder(o)
			return checkout.ReturnPromo(ctx, s.Promos, o)
		},
		OnDelivered: onDelivered, Audit: s.Audit,
	}, opts.Fulfil)
	if opts.Checkout != nil {
		payments := work.NewPayments(rdb, prefix)
		payments.Lineage = func() []int64 { return storeLineage(journal, journal.Shop()) }
		s.Checkout = checkout.New(*opts.Checkout, checkout.Deps{
			Telegram: s.Bot, Alerts: s.Alerts, Orphans: s.ful, Engine: engine,
			Payments: payments, Quotes: records.NewQuotes(rdb, prefix),
			Orders: s.orders, Wallets: s.wallets, Schedule: schedule, Reviews: chargeReviews, Journal: journal,
			Promos: s.Promos, Log: log, Now: now,
		})
		s.Checkout.Register(engine)
	}

	s.admin = admin.New(opts.Admin, admin.Deps{
		Telegram: s.Bot, Upstream: adminUp, Fulfil: s.ful, Chats: s.chat,
		Orders: s.orders, Users: s.Users, Promos: s.Promos,
		Engine: engine, Broadcasts: work.NewBroadcasts(rdb, prefix), Audit: s.Audit, Log: log, Now: now,
		BroadcastSchedule: sched.NewNamedSchedule(rdb, prefix, "broadcast"), Wallets: s.wallets, BotName: s.Username,
	})
	s.admin.Register(engine)
	booksOpts := opts.Books
	booksOpts.Wallet = walletOn(opts)
	var refunds books.Refunder // no Stars refunds without checkout
	if s.Checkout != nil {
		refunds = s.Checkout
	}
	s.books = books.New(booksOpts, books.Deps{
		Telegram: s.Bot, Upstream: booksUp, Stars: booksStars{s.Bot}, Alerts: s.Alerts,
		Orders: s.orders, Wallets: s.wallets, Users: s.Users, Sessions: s.Queue, Referrals: s.referralStore(),
		Audit: records.NewCreditAudit(rdb, prefix), AuditLog: s.Audit, Reviews: chargeReviews,
		Refunds: refunds, Quotes: records.NewQuotes(rdb, prefix),
		Schedule: sched.NewNamedSchedule(rdb, prefix, "books"), Runs: work.NewReconcileRuns(rdb, prefix),
		Engine: engine, Log: log, Now: now,
	})
	s.books.Register(engine)
	s.chat.Register(engine)
	staff := opts.Staff()
	s.support = support.New(opts.Support, support.Deps{
		Telegram: s.Bot, Orders: s.orders, Engine: engine, Agents: staff.With(flows.PermTickets), Tickets: work.NewTickets(rdb, prefix),
		Schedule: sched.NewNamedSchedule(rdb, prefix, "support"),
		Limiter:  redisstore.NewLimiter(rdb, prefix, support.Limit, support.Window),
		Told:     redisstore.NewLimiter(rdb, prefix, 1, support.Window),
		Log:      log, Now: now, Audit: s.Audit,
		RoleName: func(id int64) string { return staff.Roles(id).String() },
	})
	s.support.Register(engine)
	co := opts.Console
	if !co.StarsUSDRate.IsPositive() {
		co.StarsUSDRate = opts.Books.StarsUSDRate
	}
	if opts.Watch != nil && !co.LowBalance.IsPositive() {
		co.LowBalance = opts.Watch.Low
	}
	s.console = console.New(co, console.Deps{
		Token: opts.Token, Engine: engine, Staff: staff, Orders: s.orders, Users: s.Users, Promos: s.Promos, Audit: s.Audit,
		Links: work.NewLinks(rdb, prefix), Fulfil: s.ful, Support: s.support, Books: s.books, Growth: s.admin, Log: log, Now: now,
	})
	s.handed = s.features(opts.Reseller != nil)
}

// lost is the fulfilment worker's OnLoss: it runs when the worker notices
// that Redis lost recent writes. Such a Redis may have been flushed (a new
// store, whose journal entries are its own from now on), and the Stars
// sweep rebuilds the orders it lost. It reads s.Checkout when called, as
// the checkout is built after the worker (it asks the worker about
// unclaimed upstream orders).
func (s *Shop) lost(opts Options, rdb redisstore.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := bindJournal(ctx, opts, rdb); err != nil {
		opts.Logger.Warn("read the store epoch after a loss", "err", err)
	}
	s.restoreWallets(ctx)
	s.restoreDelivered(ctx)
	if s.Checkout != nil {
		s.Checkout.SweepSoon()
	}
}

// recordPurchase records a delivered order in its buyer's profile (the
// line, when it was paid, the language), which the broadcasts' audiences
// read.
func (s *Shop) recordPurchase(ctx context.Context, o *state.Order) {
	at := o.PaidAt
	if at.IsZero() {
		at = o.CreatedAt
	}
	if err := s.Users.Bought(ctx, o.UserID, o.Line, o.Lang, at); err != nil {
		s.opts.Logger.Warn("record a purchase in the buyer's profile", "order", o.ID, "err", err)
	}
}

// walletOn reports whether buyers have a wallet: payments on with the
// wallet among their methods (checkout.Checkout.WalletEnabled).
func walletOn(opts Options) bool { return opts.Checkout != nil && opts.Checkout.Wallet }

// features are what the adapter dispatches to and runs: the payments (when
// on), the helpdesk, the referral program (when on), the fulfilment
// worker's redeliveries; in the background broadcasts, the daily
// reconciliation, the upstream watch, and with an upstream the fulfilment
// worker and the chat relay, with payments the Stars sweep, with a catalog
// the restock checks, with QUOTE_REMINDER the quote reminders.
func (s *Shop) features(upstream bool) bot.Features {
	f := bot.Features{
		Support:    s.support,
		Deliveries: s.ful,
		Broadcasts: s.admin,
		Background: []func(context.Context){s.admin.Run, s.books.Run, s.Alerts.RunWatch, s.support.Run},
	}
	if upstream {
		f.Background = append(f.Background, s.ful.Run, s.chat.Run)
	}
	if s.restock.Enabled() {
		f.Background = append(f.Background, s.restock.Run)
	}
	if s.Reminders.Enabled() {
		f.Background = append(f.Background, s.Reminders.Run)
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
	if !walletOn(opts) {
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
		out[i] = books.StarTx{ID: tx.ID, Date: time.Unix(tx.Date, 0).UTC(), Amount: tx.Amount, Nanos: tx.Nanos, Refund: tx.Refund, Affiliate: decimal.Zero}
		if tx.Buyer != nil {
			out[i].Incoming, out[i].User, out[i].Payload = true, tx.Buyer.UserID, tx.Buyer.Payload
		}
		if a := tx.Affiliate; a != nil {
			out[i].Affiliate = decimal.NewFromInt(a.Amount).Add(decimal.New(a.Nanos, -9))
		}
		if p := tx.Program; p != nil {
			out[i].Program, out[i].Sponsor = true, p.Who
		}
	}
	return out, nil
}
