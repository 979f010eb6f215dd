package books

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// Options are the books' settings.
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

// Telegram is what the books need of the Bot API; the bot's Telegram
// adapter implements it. Errors wrap flows.ErrBlocked when the user
// blocked the bot.
type Telegram interface {
	notify.Sender         // a credited buyer is told
	notify.DocumentSender // the CSV exports, a long reconciliation report
	// StarBalance reads the bot's Star balance (whole Stars and nanostars).
	StarBalance(ctx context.Context) (amount, nano int64, err error)
}

// Upstream is what the books read of the reseller account
// (reseller.Client implements it).
type Upstream interface {
	Me(ctx context.Context) (*reseller.Account, error)
	Transactions(ctx context.Context, opts *reseller.TransactionsOptions) (*reseller.TransactionList, error)
	Orders(ctx context.Context, opts *reseller.OrdersOptions) (*reseller.OrderList, error)
	Order(ctx context.Context, number int64) (*reseller.Order, error)
}

// Alerts tell admins about what the daily reconciliation finds, once per
// item (admin.Alerts implements it).
type Alerts interface {
	// Mark records that key was alerted; it reports whether it is new.
	Mark(ctx context.Context, key string) (bool, error)
	// Tell sends text to every admin.
	Tell(ctx context.Context, text string)
}

// Sessions reads a chat's stored conversation (intake.Queue), for a
// buyer's language.
type Sessions interface {
	Conversation(ctx context.Context, chat int64) (int64, []byte, error)
}

// Deps are the stores and services the books use. The stores are the
// shop's (built once, shared with checkout, fulfilment and admin).
type Deps struct {
	Telegram Telegram
	Upstream Upstream // nil: no upstream configured
	// Stars reads the bot's Star transactions (the reconciliation); nil:
	// the report has no Stars part.
	Stars StarLedger
	// Alerts tell admins about what the daily reconciliation finds; nil:
	// no daily job.
	Alerts   Alerts
	Orders   *records.Orders
	Wallets  *records.Wallets
	Users    *records.Users
	Sessions Sessions
	// Referrals is the referral program's store, for its totals in
	// /stats; nil: referrals are off.
	Referrals *records.Referrals
	// Audit is /credit's audit of its credits.
	Audit *records.CreditAudit
	// AuditLog is the shop's audit log of admin actions (a credit is
	// one); nil: not logged.
	AuditLog *records.AuditLog
	// Reviews is the admins' review list of Star charges, which the
	// reconciliation counts as explained, /balance counts and /charges
	// lists and resolves.
	Reviews *records.ChargeReviews
	// Refunds gives back a charge an admin decided to refund from
	// /charges (checkout's Stars refund); nil: the shop takes no Stars,
	// and /charges only settles.
	Refunds Refunder
	// Quotes are the stored quotes: what a listed charge bought, while
	// its quote is kept; nil: not shown.
	Quotes *records.Quotes
	// Schedule is the daily job's own schedule (sched.NewNamedSchedule
	// "books"); Runs records its runs.
	Schedule *sched.Schedule
	Runs     *work.ReconcileRuns
	// Engine is where the commands and flows live.
	Engine *flows.Engine
	Log    *slog.Logger
	Now    func() time.Time
}

// Books are the shop's money reports for admins: /balance,
// /transactions, /stats, /export, /reconcile (and its daily job), /credit
// and /charges (the Star charges listed for review).
type Books struct {
	opts     Options
	tg       Telegram
	up       Upstream
	stars    StarLedger
	alerts   Alerts
	orders   *records.Orders
	wallets  *records.Wallets
	users    *records.Users
	sessions Sessions
	refs     *records.Referrals
	engine   *flows.Engine
	log      *slog.Logger
	now      func() time.Time
	audit    *records.CreditAudit // /credit's audit of its credits
	auditLog *records.AuditLog
	reviews  *records.ChargeReviews
	refunds  Refunder
	quotes   *records.Quotes
	sched    *sched.Schedule     // the daily job's
	runs     *work.ReconcileRuns // the daily job's runs
}

// New returns the books over d's stores and services.
func New(opts Options, d Deps) *Books {
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
	return &Books{
		opts: opts, tg: d.Telegram, up: d.Upstream, stars: d.Stars, alerts: d.Alerts,
		orders: d.Orders, wallets: d.Wallets, users: d.Users, sessions: d.Sessions, refs: d.Referrals,
		engine: d.Engine, log: d.Log, now: d.Now,
		audit: d.Audit, auditLog: d.AuditLog, reviews: d.Reviews, sched: d.Schedule, runs: d.Runs,
		refunds: d.Refunds, quotes: d.Quotes,
	}
}

// Register adds /balance, /transactions, /stats, /credit, /export,
// /reconcile and /charges, and their flows, to the engine.
func (r *Books) Register(e *flows.Engine) {
	e.AdminCommand("balance", flows.PermBooksRead, "cmd.balance", r.balance)
	e.AdminCommand("stats", flows.PermBooksRead, "cmd.stats", r.stats)
	e.AdminCommand("transactions", flows.PermBooksRead, "cmd.transactions", func(ctx context.Context, env *flows.Env, s *flows.Session, ev flows.Event) (*flows.Reply, error) {
		s.Enter(flowTransactions, "list", ev.Now.Add(e.FlowTTL))
		sc, err := txFlow{r}.Show(ctx, env, s)
		return &flows.Reply{Screen: sc, Save: true}, err
	})
	e.AdminFlow(flowTransactions, flows.PermBooksRead, "cmd.transactions", txFlow{r})
	e.AdminCommand("reconcile", flows.PermBooksRead, "cmd.reconcile", r.reconcileCommand)
	e.AdminCommand("export", flows.PermExport, "cmd.export", r.export)
	e.AdminCommand("credit", flows.PermCredit, "cmd.credit", r.creditCommand(e))
	e.AdminFlow(flowCredit, flows.PermCredit, "cmd.credit", creditFlow{r})
	// /charges is read by whoever reads the books; refunding a charge
	// needs the right to refund, and saying it was settled (no money
	// moves) the right to resolve an order in review with the upstream.
	e.AdminCommand("charges", flows.PermBooksRead, "cmd.charges", r.chargesCommand(e))
	e.AdminFlow(flowCharges, flows.PermBooksRead, "cmd.charges", chgFlow{r}).
		Action(actChgRefund, flows.PermOrdersRefund, "chg.perm.refund").
		Action(actChgRefundOK, flows.PermOrdersRefund, "chg.perm.refund").
		Action(actChgSettle, flows.PermOrdersRetry, "chg.perm.settle").
		Action(actChgSettleOK, flows.PermOrdersRetry, "chg.perm.settle")
}

// Run carries the daily reconciliation and the retry of cut-short charge
// refunds on until ctx ends.
func (r *Books) Run(ctx context.Context) { runBoth(ctx, r.runReconcile, r.runChargeRefunds) }

// upstreamProblem says in the admin's language why an upstream call
// failed; the details go to the log.
func (r *Books) upstreamProblem(env *flows.Env, what string, err error) string {
	var apiErr *reseller.Error
	switch {
	case reseller.IsUnauthorized(err):
		return env.T("rep.up.unauthorized")
	case reseller.IsForbidden(err):
		return env.T("rep.up.forbidden")
	case reseller.IsRateLimited(err):
		return env.T("rep.up.rate_limited")
	case errors.As(err, &apiErr) && apiErr.Status >= 500:
		r.log.Warn("admin report: upstream error", "read", what, "err", err)
		return env.T("rep.up.server", "status", strconv.Itoa(apiErr.Status))
	case errors.As(err, &apiErr):
		r.log.Warn("admin report: upstream refused", "read", what, "err", err)
		return env.T("rep.up.refused", "status", strconv.Itoa(apiErr.Status))
	}
	r.log.Warn("admin report: upstream unreachable", "read", what, "err", err)
	return env.T("rep.up.unavailable")
}
