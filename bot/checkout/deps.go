package checkout

import (
	"context"
	"log/slog"
	"time"

	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/state"
)

// Telegram is what checkout needs of the Bot API; the bot's Telegram
// adapter implements it. Errors wrap flows.ErrBlocked when the buyer
// blocked the bot.
type Telegram interface {
	notify.Sender
	// SendInvoice sends a Stars invoice and returns its message id.
	SendInvoice(ctx context.Context, inv Invoice) (int, error)
	// CreateInvoiceLink makes a Stars invoice link for a Mini App and
	// returns it.
	CreateInvoiceLink(ctx context.Context, inv Invoice) (string, error)
	// AnswerPreCheckout answers a pre-checkout query: ok when refusal is
	// "", else refused with that text.
	AnswerPreCheckout(ctx context.Context, queryID, refusal string) error
	// RefundStars gives a Star payment back; a charge refunded before
	// counts as done (nil).
	RefundStars(ctx context.Context, userID int64, chargeID string) error
	// StarTransactions reads a page of the bot's Star transactions, newest
	// first.
	StarTransactions(ctx context.Context, offset, limit int) ([]StarTransaction, error)
}

// Orphans is the fulfilment worker's view of upstream orders nobody
// claims: a charge whose quote Redis lost is refunded only when every
// upstream order since it is claimed.
type Orphans interface {
	// OrphanAfter is how long an upstream order may stay unclaimed before
	// admins hear of it.
	OrphanAfter() time.Duration
	// AllClaimed reports whether every upstream order created since since
	// is claimed by an order of ours (all), and whether the unclaimed ones
	// are known to the worker (known).
	AllClaimed(ctx context.Context, since time.Time) (all, known bool, err error)
	// ChargeRefunded settles the order of a charge Telegram lists as
	// refunded while the store does not (it lost the refund): the order is
	// refunded, never placed again. It reports whether it moved the order.
	ChargeRefunded(ctx context.Context, charge string) (bool, error)
}

// Deps are the stores and services checkout uses. The stores are the
// shop's (built once and shared with fulfilment and admin).
type Deps struct {
	Telegram Telegram
	Alerts   notify.Alerter
	// Orphans is the fulfilment worker's view of unclaimed upstream
	// orders; nil: a charge whose quote Redis lost is listed for review,
	// never refunded.
	Orphans Orphans
	// Engine gives the buyers' languages and the admins' one.
	Engine *flows.Engine
	// Payments keeps the payment bookkeeping: invoice marks, refund
	// marks, the sweep lock, wallet payments under way.
	Payments *work.Payments
	Quotes   *records.Quotes
	Orders   *records.Orders
	Wallets  *records.Wallets
	Schedule *sched.Schedule
	Reviews  *records.ChargeReviews
	// Journal records each paid order outside Redis (state.Journal), so a
	// paid order lost together with its quote is rebuilt; nil: none.
	Journal *state.Journal
	// Promos holds and consumes the uses of promo codes; nil: a quote
	// with a promo code cannot be paid.
	Promos *records.Promos
	Log    *slog.Logger
	Now    func() time.Time
}

// Invoice is a Stars invoice for one quote.
type Invoice struct {
	ChatID             int64
	Title, Description string
	Payload            string // "q:<quote id>"
	Label              string // the price line
	Stars              int64
}

// PreCheckoutQuery is Telegram's last question before a buyer pays an
// invoice: the shop answers yes or no (with a reason) within 10 s.
type PreCheckoutQuery struct {
	ID           string
	UserID       int64 // 0 when Telegram did not say who pays
	LanguageCode string
	Currency     string
	Total        int64
	Payload      string
}

// Payment is a successful payment as Telegram reports it in the buyer's
// chat.
type Payment struct {
	ChargeID     string // telegram_payment_charge_id
	UserID       int64  // 0 when the message has no sender
	LanguageCode string
	ChatID       int64
	Currency     string
	Total        int64
	Payload      string
	At           time.Time // the message's date
}

// StarTransaction is one entry of the bot's Star transactions.
type StarTransaction struct {
	ID     string
	Date   int64 // Unix seconds
	Amount int64
	Nanos  int64 // nanostar_amount: billionths of a Star on top of Amount
	// Refund is an outgoing transaction to a user: a refund, carrying the
	// id of the charge it gave back.
	Refund bool
	// Buyer is set for an incoming payment from a user.
	Buyer *StarBuyer
	// Affiliate is the commission an affiliate of the shop's own affiliate
	// program took from this payment (negative on its refund), if any.
	Affiliate *StarCommission
	// Program is set for a commission the bot earned as an affiliate of
	// another bot's program (an incoming transaction from the program).
	Program *StarCommission
}

// StarCommission is a commission of Telegram's affiliate program for
// bots: who got it (the affiliate) or who paid it (the sponsoring bot),
// the rate, and for a payment's commission the amount the affiliate got.
type StarCommission struct {
	Who      string // @username, title or id of the affiliate or sponsor
	PerMille int
	Amount   int64 // whole Stars (negative on a refund)
	Nanos    int64 // billionths of a Star, same sign as Amount
}

// StarBuyer is who paid an incoming Star transaction, and for what.
type StarBuyer struct {
	UserID       int64
	LanguageCode string
	Payload      string
}
