package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// Options are the admin side's settings.
type Options struct {
	// StarsUSDRate is the USD value of one Star (STARS_USD_RATE), for an
	// order's revenue and margin on /order N.
	StarsUSDRate decimal.Decimal
}

// Telegram is what the admin side needs of the Bot API; the bot's
// Telegram adapter implements it. Errors wrap flows.ErrBlocked when the
// user blocked the bot.
type Telegram interface {
	notify.Sender
	notify.DocumentSender // a batch of promo codes
	// SendBulk sends a broadcast message (text alone with media "", or a
	// photo, video or document by its file_id with text as its caption),
	// with buttons, paced so that it never takes the capacity replies
	// need.
	SendBulk(ctx context.Context, chat int64, media, fileID, text string, rows [][]flows.Button) (int, error)
	// SendMedia sends a photo, video or document by its file_id with an
	// HTML caption and buttons (a broadcast's preview).
	SendMedia(ctx context.Context, chat int64, media, fileID, caption string, rows [][]flows.Button) (int, error)
	// EditText edits a message's HTML text, with buttons (rows nil: none).
	// An edit that changes nothing is no error.
	EditText(ctx context.Context, chat int64, msgID int, text string, rows [][]flows.Button) error
}

// Upstream is what the admin side reads of the reseller account: one
// order, to adopt it (reseller.Client implements it).
type Upstream interface {
	Order(ctx context.Context, number int64) (*reseller.Order, error)
}

// Fulfilment is the fulfilment worker's admin operations on one order
// (fulfil.Fulfiller implements it).
type Fulfilment interface {
	Resend(ctx context.Context, by state.Actor, o *state.Order) error
	RunNow(ctx context.Context, by state.Actor, id int64) (running bool, err error)
	Refund(ctx context.Context, by state.Actor, id int64, tag, from string) error
	Adopt(ctx context.Context, by state.Actor, id int64, tag string, up *reseller.Order) error
	PlaceAgain(ctx context.Context, by state.Actor, id int64, tag string) error
}

// Chats is the operator chat relay of manual-service orders
// (orderchat.Relay).
type Chats interface {
	// HasChat reports whether the order's messages carry a chat button.
	HasChat(ctx context.Context, o *state.Order) bool
	// TranscriptButton is an admin's button that shows order id's chat.
	TranscriptButton(text string, o *state.Order) flows.Button
}

// Deps are the stores and services the admin side uses. The stores are
// the shop's (built once, shared with checkout and fulfilment).
type Deps struct {
	Telegram Telegram
	Upstream Upstream // nil: no upstream configured
	Fulfil   Fulfilment
	Chats    Chats
	Orders   *records.Orders
	Users    *records.Users  // broadcasts
	Promos   *records.Promos // nil: no /promo
	// Engine is where the admin commands and flows live.
	Engine     *flows.Engine
	Broadcasts *work.Broadcasts // the broadcast jobs
	// BroadcastSchedule is the durable schedule scheduled broadcasts wait
	// on (their own); nil: broadcasts go at once only.
	BroadcastSchedule *sched.Schedule
	// Wallets are the buyers' wallets, for an audience of those who hold
	// a balance; nil: nobody does.
	Wallets *records.Wallets
	// BotName is the bot's username (getMe at start), for a broadcast's
	// links into the shop.
	BotName func() string
	// Audit logs the admin actions that change something (promo codes,
	// broadcasts); nil: not logged.
	Audit *records.AuditLog
	Log   *slog.Logger
	Now   func() time.Time
}

// Admin is the shop's admin side and the buyers' order list: /orders (a
// buyer's own orders; an admin's the whole shop's), /order, /promo and
// /broadcast. The money reports are bot/books.
type Admin struct {
	opts   Options
	tg     Telegram
	up     Upstream
	ful    Fulfilment
	chats  Chats
	orders *records.Orders
	promos *records.Promos
	engine *flows.Engine
	log    *slog.Logger
	now    func() time.Time
	bc     *broadcaster
	// auditLog is Deps.Audit.
	auditLog *records.AuditLog
}

// New returns the admin side over d's stores and services.
func New(opts Options, d Deps) *Admin {
	if !opts.StarsUSDRate.IsPositive() {
		opts.StarsUSDRate = decimal.RequireFromString("0.013")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	ad := &Admin{
		opts: opts, tg: d.Telegram, up: d.Upstream, ful: d.Fulfil, chats: d.Chats,
		orders: d.Orders, promos: d.Promos, engine: d.Engine, log: d.Log, now: d.Now,
		bc: newBroadcaster(d), auditLog: d.Audit,
	}
	ad.bc.audit = ad.audit
	return ad
}

// Register adds the commands, buttons and flows to the engine.
func (ad *Admin) Register(e *flows.Engine) {
	ad.bc.register(e)
	ad.registerOrders(e)
	ad.registerPromos(e)
}

// Run carries the broadcasts on until ctx ends, and starts the scheduled
// ones when due.
func (ad *Admin) Run(ctx context.Context) { ad.bc.run(ctx) }

// Opened counts user as one who started the bot through broadcast id's
// link (bot.Broadcasts).
func (ad *Admin) Opened(ctx context.Context, id string, user int64, _ time.Time) {
	ad.bc.opened(ctx, id, user)
}

// chatActor is the staff member of env acting in the chat.
func chatActor(env *flows.Env) state.Actor {
	return state.Actor{ID: env.User.ID, Role: env.User.RoleName(), Via: state.ViaChat}
}

// paidUSD is what an order brought in, in USD: its Stars at
// STARS_USD_RATE, or the wallet amount.
func (ad *Admin) paidUSD(o *state.Order) decimal.Decimal {
	return o.PaidUSD(ad.opts.StarsUSDRate)
}
