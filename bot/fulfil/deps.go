package fulfil

import (
	"context"
	"log/slog"
	"time"

	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/state"
)

// Messenger is what fulfilment needs of Telegram. Errors wrap
// flows.ErrBlocked when the buyer blocked the bot.
type Messenger interface {
	notify.Sender
	notify.DocumentSender // codes too long for a message
	// RefundStars gives a Star payment back; a charge refunded before
	// counts as done (nil).
	RefundStars(ctx context.Context, userID int64, chargeID string) error
}

// Chats is the operator chat relay of manual-service orders.
type Chats interface {
	// Placed runs when an order gets its upstream number and reports
	// whether the order has a chat.
	Placed(ctx context.Context, o *state.Order, up *reseller.Order) bool
	// HasChat reports whether the order's messages carry a chat button.
	HasChat(ctx context.Context, o *state.Order) bool
}

// Durable makes a money write durable before the next step when the Redis
// allows it (redisstore.Durability); nil means no waiting.
type Durable interface {
	Sync(ctx context.Context, key string) error
	// SyncWritten is Sync that also checks the written key is on the node
	// waited on (a write to a master being replaced is not confirmed).
	SyncWritten(ctx context.Context, key string) error
	// Exact reports whether a synced write on key's node survives any
	// crash (see redisstore.Durability.Exact).
	Exact(ctx context.Context, key string) bool
}

// Deps are the stores and services the worker uses.
type Deps struct {
	Orders    *records.Orders
	Schedule  *sched.Schedule
	Wallets   *records.Wallets
	Upstream  *reseller.Client
	Messenger Messenger
	Alerts    notify.Alerter
	Chats     Chats   // nil: no order chats
	Durable   Durable // nil: writes are not waited on
	// Journal records creates outside Redis (state.Journal); nil keeps
	// them in this process's memory only.
	Journal *state.Journal
	// OnLoss, when set, runs when the worker notices that Redis lost
	// recent writes (the Stars sweep, to rebuild lost orders).
	OnLoss func()
	// OnRefunded, when set, runs for a refunded order each time its
	// finished job looks at it (idempotent: a promo code's use given
	// back); an error makes the job try again later.
	OnRefunded func(ctx context.Context, o *state.Order) error
	Log        *slog.Logger
	Lang       locales.Lang // admins' language and the fallback
	Now        func() time.Time

	// OnDelivered, when set, runs for a delivered order each time its
	// finished job looks at it, after the buyer got it (or blocked the
	// bot), until it succeeds: it must be idempotent (a referral reward,
	// credited once by the order's ledger ref). An error makes the job try
	// again later, so a crash between delivery and OnDelivered still runs
	// it once the job comes back.
	OnDelivered func(ctx context.Context, o *state.Order) error

	// Audit logs the admin operations (Refund, Resend, RunNow, Adopt,
	// PlaceAgain) with who did them; nil: not logged.
	Audit *records.AuditLog
}

// JournalKeep is how long journaled paid orders and creates are read
// back: longer than any repair that may need them.
const JournalKeep = 15 * time.Minute

// ChatOpenAction is the global button action that opens an order's chat
// (callback arg: the order's Ref); the chat relay handles it.
const ChatOpenAction flows.Action = "oc"

// OpenChatButton is the "write to the operator" button of the order, valid
// in any state (it goes on notices the workers send). It names the order by
// its Ref (state.Order.Ref): after a loss of writes Redis may give the
// order's number to another purchase.
func OpenChatButton(lang locales.Lang, o *state.Order) [][]flows.Button {
	d, _ := flows.EncodeCallback(flows.GlobalNonce, ChatOpenAction, o.Ref()) // a ref always fits
	return [][]flows.Button{{{Text: locales.T(lang, "oc.btn_open"), Data: d}}}
}

// Journal returns the journal of paid orders and creates.
func (f *Fulfiller) Journal() *state.Journal { return f.journal }

// Orders returns the order store.
func (f *Fulfiller) Orders() *records.Orders { return f.orders }

// Upstream returns the upstream client (nil when there is none).
func (f *Fulfiller) Upstream() *reseller.Client { return f.up }
