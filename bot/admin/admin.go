package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state"
)

// Options are the admin side's settings.
type Options struct {
	// StarsUSDRate is the USD value of one Star (STARS_USD_RATE), for the
	// figures: revenue in USD and margins.
	StarsUSDRate decimal.Decimal
	// Wallet says buyers may pay from the shop wallet (/credit warns when
	// they may not).
	Wallet bool
	// ReconcileEvery is how often the reconciliation job runs
	// (RECONCILE_EVERY, default 24h; the first run that long after the
	// store first sees the job). ReconcileWindow is how far back each run
	// looks (default ReconcileEvery). ReconcileSettle is how long a new
	// upstream order or Star payment may stay unmatched before it counts
	// as unexplained (default 10m): its order may be on its way.
	ReconcileEvery, ReconcileWindow, ReconcileSettle time.Duration
}

// Telegram is what the admin side needs of the Bot API; the bot's
// Telegram adapter implements it. Errors wrap flows.ErrBlocked when the
// user blocked the bot.
type Telegram interface {
	Sender
	// SendBulk sends a broadcast message, paced so that it never takes the
	// capacity replies need.
	SendBulk(ctx context.Context, chat int64, text string) (int, error)
	// EditText edits a message's HTML text, with buttons (rows nil: none).
	// An edit that changes nothing is no error.
	EditText(ctx context.Context, chat int64, msgID int, text string, rows [][]flows.Button) error
	// StarBalance reads the bot's Star balance (whole Stars and nanostars).
	StarBalance(ctx context.Context) (amount, nano int64, err error)
	// SendDocument sends data as a file named name with an HTML caption
	// (promo codes, the CSV exports, a long reconciliation report).
	SendDocument(ctx context.Context, chat int64, name string, data []byte, caption string) error
}

// Upstream is what the admin side reads of the reseller account
// (reseller.Client implements it).
type Upstream interface {
	Me(ctx context.Context) (*reseller.Account, error)
	Transactions(ctx context.Context, opts *reseller.TransactionsOptions) (*reseller.TransactionList, error)
	Orders(ctx context.Context, opts *reseller.OrdersOptions) (*reseller.OrderList, error)
	Order(ctx context.Context, number int64) (*reseller.Order, error)
}

// Fulfilment is the fulfilment worker's admin operations on one order
// (fulfil.Fulfiller implements it).
type Fulfilment interface {
	Resend(ctx context.Context, o *state.Order, note string) error
	Hurry(ctx context.Context, id int64) (running bool, err error)
	Refund(ctx context.Context, id int64, from, note string) error
	Adopt(ctx context.Context, id int64, up *reseller.Order, note string) error
	PlaceAgain(ctx context.Context, id int64, note string) error
}

// Chats is the operator chat relay of manual-service orders
// (orderchat.Relay).
type Chats interface {
	// HasChat reports whether the order's messages carry a chat button.
	HasChat(ctx context.Context, o *state.Order) bool
	// TranscriptButton is an admin's button that shows order id's chat.
	TranscriptButton(text string, id int64) flows.Button
}

// Sessions reads a chat's stored conversation (state.Queue), for a
// buyer's language.
type Sessions interface {
	Conversation(ctx context.Context, chat int64) (int64, []byte, error)
}

// Deps are the stores and services the admin side uses. The stores are
// the shop's (built once, shared with checkout and fulfilment).
type Deps struct {
	Telegram Telegram
	Upstream Upstream // nil: no upstream configured
	// Stars reads the bot's Star transactions (the reconciliation); nil:
	// the report has no Stars part.
	Stars StarLedger
	// Alerts tell admins about what the daily reconciliation finds; nil:
	// no daily job.
	Alerts   *Alerts
	Fulfil   Fulfilment
	Chats    Chats
	Orders   *state.Orders
	Wallets  *state.Wallets
	Users    *state.Users
	Sessions Sessions
	Promos   *state.Promos // nil: no /promo
	// Referrals is the referral program's store, for its totals in
	// /stats; nil: referrals are off.
	Referrals *state.Referrals
	// Engine is where the admin commands and flows live.
	Engine *flows.Engine
	Redis  redis.UniversalClient // broadcasts and the credit audit
	Prefix string                // the shop's Redis key prefix
	Log    *slog.Logger
	Now    func() time.Time
}

// Admin is the shop's admin side and the buyers' order list: /orders (a
// buyer's own orders; an admin's the whole shop's), /order, /balance,
// /transactions, /stats, /credit and /broadcast.
type Admin struct {
	opts     Options
	tg       Telegram
	up       Upstream
	stars    StarLedger
	alerts   *Alerts
	ful      Fulfilment
	chats    Chats
	orders   *state.Orders
	wallets  *state.Wallets
	users    *state.Users
	sessions Sessions
	promos   *state.Promos
	refs     *state.Referrals
	engine   *flows.Engine
	log      *slog.Logger
	now      func() time.Time
	rdb      redis.UniversalClient
	prefix   string
	bc       *broadcaster
}

// New returns the admin side over d's stores and services.
func New(opts Options, d Deps) *Admin {
	if !opts.StarsUSDRate.IsPositive() {
		opts.StarsUSDRate = decimal.RequireFromString("0.013")
	}
	if opts.ReconcileEvery <= 0 {
		opts.ReconcileEvery = defaultReconcileEvery
	}
	if opts.ReconcileWindow <= 0 {
		opts.ReconcileWindow = opts.ReconcileEvery
	}
	if opts.ReconcileSettle <= 0 {
		opts.ReconcileSettle = defaultReconcileSettle
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Admin{
		opts: opts, tg: d.Telegram, up: d.Upstream, stars: d.Stars, alerts: d.Alerts, ful: d.Fulfil, chats: d.Chats,
		orders: d.Orders, wallets: d.Wallets, users: d.Users, sessions: d.Sessions, promos: d.Promos, refs: d.Referrals,
		engine: d.Engine, log: d.Log, now: d.Now, rdb: d.Redis, prefix: d.Prefix,
		bc: newBroadcaster(d),
	}
}

// Register adds the commands, buttons and flows to the engine.
func (ad *Admin) Register(e *flows.Engine) {
	ad.bc.register(e)
	ad.registerOrders(e)
	ad.registerReports(e)
	ad.registerPromos(e)
	e.HandleCommand("reconcile", flows.AdminOnly(ad.reconcileCommand))
}

// Run carries the broadcasts and the daily reconciliation on until ctx
// ends.
func (ad *Admin) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() { defer close(done); ad.runReconcile(ctx) }()
	ad.bc.run(ctx)
	<-done
}
