package state

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// BuyerProfile is what the shop keeps of one buyer for choosing a
// broadcast's audience: recorded as they appear (/start, their language)
// and as their orders are delivered (the lines bought, the last purchase),
// with the referral program's record and the wallet's balance beside it.
type BuyerProfile struct {
	ID      int64
	Started time.Time // when they first started the bot
	Seen    time.Time // the last day they used the bot (zero: not since profiles were kept)
	Lang    string    // the language they use the shop in ("": not known)
	Lines   []string  // the product lines of their delivered orders, sorted
	LastBuy time.Time // their last delivered order's payment (zero: never bought)
	// Referred says they came through a referral invite.
	Referred bool
	// Wallet is their wallet balance (USD); read only for an audience that
	// needs it (Audience.NeedsWallet).
	Wallet decimal.Decimal
	// MarketingOff says they turned news and offers off (/settings): a
	// broadcast skips them whatever its audience.
	MarketingOff bool
	Blocked      bool // they blocked the bot
}

// LastActive is the last time the buyer is known to have used the bot:
// their latest start, day of use or purchase.
func (p BuyerProfile) LastActive() time.Time {
	t := p.Started
	for _, x := range []time.Time{p.Seen, p.LastBuy} {
		if x.After(t) {
			t = x
		}
	}
	return t
}

// The kinds of audience a broadcast may go to.
const (
	AudienceAll      = "all"      // every buyer
	AudienceLang     = "lang"     // buyers who use the shop in Lang
	AudienceLine     = "line"     // buyers who bought from product line Line
	AudienceRecent   = "recent"   // buyers who bought within the last Days days
	AudienceInactive = "inactive" // buyers who have not used the bot for Days days
	AudienceWallet   = "wallet"   // buyers with a wallet balance above zero
	AudienceNever    = "never"    // buyers who never bought
	AudienceReferred = "referred" // buyers who came through a referral invite
)

// AudienceKinds are the kinds, in the order the admin is offered them.
var AudienceKinds = []string{AudienceAll, AudienceLang, AudienceLine, AudienceRecent, AudienceInactive, AudienceWallet, AudienceNever, AudienceReferred}

// MaxAudienceDays bounds an audience's Days.
const MaxAudienceDays = 3650

// Audience is who a broadcast goes to: one kind, with its parameter. The
// marketing opt-out is not part of it: it holds for every audience.
type Audience struct {
	Kind string
	Lang string // AudienceLang: a language code (en, ru, uk)
	Line string // AudienceLine: a product line's name
	Days int    // AudienceRecent, AudienceInactive: 1 to MaxAudienceDays
}

// ErrBadAudience is an audience that cannot be read or is incomplete.
var ErrBadAudience = errors.New("bad audience")

// String is the audience as stored and as the console sends it: "all",
// "lang:ru", "line:giftcards", "recent:30", "inactive:60", "wallet",
// "never", "referred".
func (a Audience) String() string {
	switch a.Kind {
	case AudienceLang:
		return a.Kind + ":" + a.Lang
	case AudienceLine:
		return a.Kind + ":" + a.Line
	case AudienceRecent, AudienceInactive:
		return a.Kind + ":" + strconv.Itoa(a.Days)
	case "":
		return AudienceAll
	}
	return a.Kind
}

// ParseAudience reads an audience as String writes it ("" is "all"). It
// checks the form only: whether a language is enabled or a line exists is
// the caller's to check.
func ParseAudience(s string) (Audience, error) {
	kind, arg, _ := strings.Cut(strings.TrimSpace(s), ":")
	a := Audience{Kind: kind}
	switch kind {
	case "", AudienceAll:
		return Audience{Kind: AudienceAll}, nil
	case AudienceWallet, AudienceNever, AudienceReferred:
		if arg != "" {
			return Audience{}, ErrBadAudience
		}
	case AudienceLang:
		if arg == "" || len(arg) > 8 {
			return Audience{}, ErrBadAudience
		}
		a.Lang = arg
	case AudienceLine:
		if arg == "" || len(arg) > 32 {
			return Audience{}, ErrBadAudience
		}
		a.Line = arg
	case AudienceRecent, AudienceInactive:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > MaxAudienceDays {
			return Audience{}, ErrBadAudience
		}
		a.Days = n
	default:
		return Audience{}, ErrBadAudience
	}
	return a, nil
}

// NeedsWallet reports whether matching needs the buyers' wallet balances.
func (a Audience) NeedsWallet() bool { return a.Kind == AudienceWallet }

// Match reports whether buyer p is in the audience at now. Neither the
// opt-out nor a block is looked at: the broadcast counts those apart.
func (a Audience) Match(p BuyerProfile, now time.Time) bool {
	days := time.Duration(a.Days) * 24 * time.Hour
	switch a.Kind {
	case AudienceAll, "":
		return true
	case AudienceLang:
		return p.Lang == a.Lang
	case AudienceLine:
		return slices.Contains(p.Lines, a.Line)
	case AudienceRecent:
		return !p.LastBuy.IsZero() && !p.LastBuy.Before(now.Add(-days))
	case AudienceInactive:
		return p.LastActive().Before(now.Add(-days))
	case AudienceWallet:
		return p.Wallet.IsPositive()
	case AudienceNever:
		return p.LastBuy.IsZero() && len(p.Lines) == 0
	case AudienceReferred:
		return p.Referred
	}
	return false
}

// AudienceCount is an audience's size as the preview shows it.
type AudienceCount struct {
	Members  int64 // buyers in the audience
	OptedOut int64 // of them, those who turned news off (skipped)
	Blocked  int64 // of them, those who blocked the bot (not reached)
}

// Reach is how many of the audience a broadcast can reach now.
func (c AudienceCount) Reach() int64 { return max(c.Members-c.OptedOut-c.Blocked, 0) }

// Broadcast media kinds: a file Telegram already has, sent again by its
// file_id with the text as its caption.
const (
	MediaPhoto    = "photo"
	MediaVideo    = "video"
	MediaDocument = "document"
)

// MaxCaption and MaxBroadcastText are Telegram's limits on a media's
// caption and a message's text (in characters, after HTML is parsed).
const (
	MaxCaption       = 1024
	MaxBroadcastText = 4096
)

// BroadcastButton is one inline button of a broadcast: a deep link into
// the shop (Link: the /start payload of a product line or a product, which
// the broadcast tags as its own to count who opens it) or a URL.
type BroadcastButton struct {
	Label string `json:"t"`
	Link  string `json:"l,omitempty"`
	URL   string `json:"u,omitempty"`
}

// BroadcastPlan is a broadcast as the admin composed it.
type BroadcastPlan struct {
	Text     string // Telegram HTML (escaped): the message, or the media's caption
	Media    string // "", MediaPhoto, MediaVideo or MediaDocument
	FileID   string // the media's file_id
	Buttons  []BroadcastButton
	Audience Audience
	At       time.Time // when to send it; zero: now
}
