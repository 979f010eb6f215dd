// Package referral is the shop's referral program: every buyer has an
// invite link (t.me/<bot>?start=r<code>); a new buyer who starts the bot
// through it is attributed to the link's owner once; when an attributed
// buyer's order is delivered, the owner's wallet is credited
// REFERRAL_PERCENT of the order's margin, once per order, and they are
// told. /referrals shows a buyer their link and figures.
//
// Where things are:
//   - referral.go: Options, Deps, New, Register (/referrals) and Started
//     (attribution from the /start payload);
//   - reward.go: OnDelivered, the reward of a delivered order (fulfilment's
//     Deps.OnDelivered).
//
// The store is records.Referrals (the buyer registry's Redis slot); the
// wallet is records.Wallets. It reaches Telegram through Telegram, never
// through the bot.
package referral

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"shopbot/state/redisstore/records"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// Options are the program's settings.
type Options struct {
	// Percent is REFERRAL_PERCENT: the share of a delivered order's margin
	// credited to the referrer (0 to 100; 0 turns the program off).
	Percent decimal.Decimal
	// StarsUSDRate values Stars payments in the margin, as /stats does.
	StarsUSDRate decimal.Decimal
}

// Sessions reads a chat's stored conversation (intake.Queue), for a
// referrer's language.
type Sessions interface {
	Conversation(ctx context.Context, chat int64) (int64, []byte, error)
}

// Deps are the stores and services the program uses.
type Deps struct {
	Telegram notify.Sender // a referrer told of a reward
	Store    *records.Referrals
	Wallets  *records.Wallets
	Orders   *records.Orders // a referrer's language from their latest order
	Sessions Sessions
	Engine   *flows.Engine
	// BotName is the bot's username (from getMe at start), for the links.
	BotName func() string
	Log     *slog.Logger
	Now     func() time.Time
}

// Program is the referral program.
type Program struct {
	opts Options
	d    Deps
}

// New returns the program; Enabled tells whether it does anything.
func New(opts Options, d Deps) *Program {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if !opts.StarsUSDRate.IsPositive() {
		opts.StarsUSDRate = decimal.RequireFromString("0.013") // STARS_USD_RATE's default, as /stats
	}
	return &Program{opts: opts, d: d}
}

// Enabled reports whether rewards are on (a percent above 0).
func (p *Program) Enabled() bool { return p != nil && p.opts.Percent.IsPositive() }

// Store is the program's store.
func (p *Program) Store() *records.Referrals { return p.d.Store }

// Register adds /referrals.
func (p *Program) Register(e *flows.Engine) {
	e.HandleCommand("referrals", p.command)
}

// StartPrefix starts the /start payload of an invite link.
const StartPrefix = "r"

// Link is the invite link of code for the bot named bot.
func Link(bot, code string) string {
	return "https://t.me/" + bot + "?start=" + StartPrefix + code
}

// Invite is user's invite as a /start payload (r<code>), their code made
// on first use; the inline mode's cards carry it.
func (p *Program) Invite(ctx context.Context, user int64) (string, error) {
	code, err := p.d.Store.Code(ctx, user)
	if err != nil {
		return "", err
	}
	return StartPrefix + code, nil
}

// Started runs for every /start, before the buyer is recorded as started:
// a payload r<code> (or r<code>_<deep link>, flows.StartPayload) attributes the buyer to the code's owner when they
// are new (known reports they are not; records.Referrals.Attribute: never
// to themselves, never again, never after an earlier /start). A payload
// of another kind is not an invite and is left alone.
func (p *Program) Started(ctx context.Context, user int64, payload string, at time.Time) error {
	invite, _ := flows.ParseStart(payload) // an invite may come with a product's deep link
	code, ok := strings.CutPrefix(invite, StartPrefix)
	if !ok || !state.ValidReferralCode(strings.ToLower(code)) {
		return nil
	}
	if why, err := p.known(ctx, user); err != nil || why != "" {
		if why != "" {
			p.d.Log.Info("invite link not attributed: the buyer is not new", "user", user, "known_by", why)
		}
		return err
	}
	outcome, referrer, err := p.d.Store.Attribute(ctx, user, strings.ToLower(code), at)
	if err != nil {
		return err
	}
	switch outcome {
	case state.Attributed:
		p.d.Log.Info("referred buyer attributed", "user", user, "referrer", referrer)
	default:
		p.d.Log.Debug("invite link not attributed", "user", user, "outcome", int(outcome))
	}
	return nil
}

// Page is what a buyer's referral page shows (/referrals, the Mini App's
// page): their invite link, the link that shares it (t.me/share/url), the
// percent, how many buyers they brought and what they earned.
type Page struct {
	Link, ShareURL string
	Percent        decimal.Decimal
	Buyers         int64
	Earned         decimal.Decimal
}

// PageOf is env's buyer's referral page; it also remembers the language
// they read it in, for their reward notices.
func (p *Program) PageOf(ctx context.Context, env *flows.Env) (*Page, error) {
	name := p.d.BotName()
	if name == "" {
		return nil, errors.New("the bot's username is not known yet (getMe)")
	}
	code, err := p.d.Store.Code(ctx, env.User.ID)
	if err != nil {
		return nil, err
	}
	if err := p.d.Store.SetLang(ctx, env.User.ID, string(env.Lang)); err != nil {
		return nil, err
	}
	sum, err := p.d.Store.SummaryOf(ctx, env.User.ID)
	if err != nil {
		return nil, err
	}
	link := Link(name, code)
	return &Page{
		Link: link, ShareURL: ShareURL(link, env.T("ref.share_text")),
		Percent: p.opts.Percent, Buyers: sum.Buyers, Earned: sum.Earned,
	}, nil
}

// ShareURL is Telegram's link that shares link with text to a chat the
// user picks.
func ShareURL(link, text string) string {
	return "https://t.me/share/url?url=" + url.QueryEscape(link) + "&text=" + url.QueryEscape(text)
}

// command is /referrals: the buyer's link, how many buyers they brought
// and what they earned.
func (p *Program) command(ctx context.Context, env *flows.Env, _ *flows.Session, _ flows.Event) (*flows.Reply, error) {
	pg, err := p.PageOf(ctx, env)
	if err != nil {
		return nil, err
	}
	text := env.T("ref.title") + "\n\n" +
		env.T("ref.how", "pct", pg.Percent) + "\n\n" +
		env.T("ref.link", "link", pg.Link) + "\n\n" +
		env.N("ref.buyers", pg.Buyers) + "\n" +
		env.T("ref.earned", "earned", locales.Money(env.Lang, pg.Earned))
	// The link as a URL to share, and the chat picker with the bot's inline
	// mode, whose cards carry the buyer's invite (bot/inline.go).
	rows := [][]flows.Button{{{Text: env.T("btn.ref_share"), URL: pg.ShareURL}}, {{Text: env.T("btn.ref_share_chat"), Share: true}}}
	return &flows.Reply{Notices: []flows.Notice{{Text: text, Rows: rows}}, NoScreen: true}, nil
}

// langOf is a referrer's language: the one chosen with /language, else the
// one they last read /referrals in, else the one of their latest order,
// else the shop's default.
func (p *Program) langOf(ctx context.Context, user int64) locales.Lang {
	e := p.d.Engine
	if p.d.Sessions != nil {
		if _, doc, err := p.d.Sessions.Conversation(ctx, user); err == nil && doc != nil {
			s, _ := flows.DecodeSession(doc)
			if l, ok := locales.Parse(s.Lang); ok && slices.Contains(e.Langs, l) {
				return l
			}
		}
	}
	if v, err := p.d.Store.Lang(ctx, user); err == nil {
		if l, ok := locales.Parse(v); ok && slices.Contains(e.Langs, l) {
			return l
		}
	}
	if list, err := p.d.Orders.ListByUser(ctx, user, 0, 1); err == nil && len(list) > 0 {
		if l, ok := locales.Parse(list[0].Lang); ok && slices.Contains(e.Langs, l) {
			return l
		}
	}
	return e.DefaultLang
}

// known says how the shop already knows user, or "" for a new buyer. A
// buyer is new only when the shop holds nothing of them: no order (of any
// status), no wallet movement (a top-up, a refund, a credit) and no
// conversation with the bot (any earlier update: a message, a button, a
// payment). A buyer who skipped /start (a client that does, a buyer from
// before the registry, a Redis that lost it) is so still known; the
// registry of /start itself is checked by records.Referrals.Attribute.
func (p *Program) known(ctx context.Context, user int64) (string, error) {
	if p.d.Orders != nil {
		list, err := p.d.Orders.ListByUser(ctx, user, 0, 1)
		if err != nil {
			return "", err
		}
		if len(list) > 0 {
			return "orders", nil
		}
	}
	if p.d.Wallets != nil {
		entries, err := p.d.Wallets.Ledger(ctx, user, 0, 1)
		if err != nil {
			return "", err
		}
		if len(entries) > 0 {
			return "wallet", nil
		}
	}
	if p.d.Sessions != nil {
		_, doc, err := p.d.Sessions.Conversation(ctx, user)
		if err != nil {
			return "", err
		}
		if doc != nil {
			return "conversation", nil
		}
	}
	return "", nil
}
