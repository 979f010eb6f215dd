package support

import (
	"context"
	"log/slog"
	"time"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// Options are the shop's own support settings.
type Options struct {
	// URL is an external helpdesk linked from support (SUPPORT_URL).
	URL string
	// TermsText is the shop's terms as plain text (TERMS_TEXT); "" shows
	// the default terms. TermsURL links the full terms (TERMS_URL).
	TermsText, TermsURL string
	// Fold is how long a buyer's messages are gathered before they reach
	// the admins as one relay (default 3 s); Tick is how often the relay
	// looks for due relays (default 500 ms).
	Fold, Tick time.Duration
}

// Telegram is what support needs of the Bot API; the bot's Telegram
// adapter implements it. Errors wrap flows.ErrBlocked when the user
// blocked the bot.
type Telegram interface {
	notify.Sender
	// SendPhotoID sends a photo Telegram already has (by its file id) with
	// an optional HTML caption and buttons.
	SendPhotoID(ctx context.Context, chat int64, fileID, caption string, rows [][]flows.Button) error
	// SendPhotoFile uploads a photo (data named name) with an HTML caption
	// and buttons, and returns the file id Telegram gave its largest size.
	SendPhotoFile(ctx context.Context, chat int64, name string, data []byte, caption string, rows [][]flows.Button) (string, error)
	// DownloadFile fetches a file Telegram has, refusing one over limit
	// bytes.
	DownloadFile(ctx context.Context, fileID string, limit int64) ([]byte, error)
}

// Deps are the stores and services support uses.
type Deps struct {
	Telegram Telegram
	Orders   *records.Orders // a buyer's recent orders, shown to admins
	// Engine is where support's flows live (the main menu) and gives the
	// languages.
	Engine *flows.Engine
	// Agents get the buyers' messages and hear of closed tickets: the staff
	// who may answer tickets (flows.Staff.With(flows.PermTickets)).
	Agents []int64

	Tickets *work.Tickets // the tickets
	// Schedule holds the relays to send (one job per buyer with messages
	// waiting); Limiter bounds what a buyer may write (supportLimit), and
	// Told that they hear of the bound once per window.
	Schedule      *sched.Schedule
	Limiter, Told Limiter
	Log           *slog.Logger
	Now           func() time.Time
	// Audit logs the staff's answers and closed tickets; nil: not logged.
	Audit *records.AuditLog
	// RoleName names a staff member's roles for the audit of a swipe
	// reply, which comes without them (flows.Staff.Roles(id).String()).
	RoleName func(id int64) string
}

// Limiter is a fixed-window rate limit (redisstore.Limiter): Allow counts
// one more for key and says whether it is within the limit, else how long
// until the window ends.
type Limiter interface {
	Allow(ctx context.Context, key string) (bool, time.Duration, error)
}
