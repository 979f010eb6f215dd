package bot

import (
	"context"
	"sync"
	"time"

	"shopbot/bot/checkout"
	"shopbot/bot/support"
	"shopbot/flows"
	"shopbot/state"
)

// Features are the parts of the shop the adapter hands events to
// (handler.go) and runs beside its workers. The adapter builds none of
// them: package storefront assembles them over the Bot (their Telegram)
// and hands them to Run. The adapter knows them
// only by the small interfaces below, in the features' own terms (the
// payment and pre-checkout events are checkout's, an admin's reply is
// support's).
type Features struct {
	// Checkout takes payments and confirmed quotes; nil: payments are off
	// (a pre-checkout query is refused, a quote says payments are off).
	Checkout Checkout
	// Support takes an admin's reply to a relayed support message; nil:
	// the flows answer every reply.
	Support Support
	// Referral attributes a new buyer who came through an invite link;
	// nil: the referral program is off (and /referrals is not in the
	// menu).
	Referral Referral
	// Deliveries hands a buyer who (re)starts the bot the deliveries that
	// could not reach them; nil: none.
	Deliveries Deliveries
	// Broadcasts counts the buyers who start the bot through a
	// broadcast's link (a /start payload with its tag,
	// flows.CampaignPayload); nil: not counted.
	Broadcasts Broadcasts
	// Background is the features' work that runs while the bot takes
	// updates: each starts once the bot is set up and is stopped (and
	// waited for) with the intake, before the workers finish.
	Background []func(context.Context)
}

// Checkout is what the adapter hands the payments feature
// (checkout.Checkout).
type Checkout interface {
	// PreCheckout answers Telegram's last question before a buyer pays.
	PreCheckout(ctx context.Context, q checkout.PreCheckoutQuery)
	// Paid settles a successful payment.
	Paid(ctx context.Context, p checkout.Payment)
	// Pay takes a quote the buyer confirmed and returns the reply that
	// asks for the payment.
	Pay(ctx context.Context, env *flows.Env, s *flows.Session, q *state.Quote) (*flows.Reply, error)
	// WalletEnabled reports whether buyers have a wallet (/wallet).
	WalletEnabled() bool
	// Understands reports whether this build can settle a payment with
	// invoice payload (its pre-checkout and its successful payment);
	// during an upgrade one it does not is handed to a replica of a newer
	// build (skew.go).
	Understands(ctx context.Context, payload string) (bool, error)
}

// Support is what the adapter hands the helpdesk (support.Support).
type Support interface {
	// TakeReply takes an admin's reply to a relayed support message and
	// reports false for any other reply, which the flows answer.
	TakeReply(ctx context.Context, r support.Reply) bool
}

// Referral is what the adapter tells the referral program
// (referral.Program).
type Referral interface {
	// Started attributes a buyer who started the bot with payload; called
	// before the buyer is recorded, so only a new buyer is attributed.
	Started(ctx context.Context, user int64, payload string, at time.Time) error
	// Invite is user's invite for a /start payload (r<code>), which the
	// inline mode's cards carry (flows.StartPayload).
	Invite(ctx context.Context, user int64) (string, error)
}

// Broadcasts is what the adapter tells the admins' broadcasts
// (admin.Admin).
type Broadcasts interface {
	// Opened counts user as one who started the bot through broadcast
	// id's link (each buyer once); a failure is the feature's to log.
	Opened(ctx context.Context, id string, user int64, at time.Time)
}

// Deliveries is what the adapter tells the fulfilment worker
// (fulfil.Fulfiller).
type Deliveries interface {
	// Redeliver sends userID the deliveries that could not reach them.
	Redeliver(ctx context.Context, userID int64)
}

// Username is the bot's username from getMe ("" before the bot started),
// for invite links.
func (b *Bot) Username() string {
	if p := b.username.Load(); p != nil {
		return *p
	}
	return ""
}

// runFeatures starts the features' background work under ctx.
func (b *Bot) runFeatures(ctx context.Context, wg *sync.WaitGroup) {
	for _, f := range b.features.Background {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
}
