package orderchat

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"shopbot/bot/notify"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/sched"
	"shopbot/state/redisstore/work"
)

// Telegram is what the relay needs of the Bot API; the bot's Telegram
// adapter implements it. Errors wrap flows.ErrBlocked when the buyer
// blocked the bot.
type Telegram interface {
	notify.Sender
	// SendFile uploads data named name as a photo (photo) or a document,
	// with an HTML caption and optional buttons.
	SendFile(ctx context.Context, chat int64, name string, data []byte, photo bool, caption string, rows [][]flows.Button) error
	// DownloadFile fetches a file a user sent, refusing one over limit
	// bytes. Its errors never carry the download link (it holds the token).
	DownloadFile(ctx context.Context, fileID string, limit int64) ([]byte, error)
}

// Upstream is the reseller's order chat API (reseller.Client implements it).
type Upstream interface {
	Order(ctx context.Context, number int64) (*reseller.Order, error)
	ManualServiceOffers(ctx context.Context, serviceID string) (*reseller.ManualOffers, error)
	Chat(ctx context.Context, number int64) (*reseller.Chat, error)
	SendChatMessage(ctx context.Context, number int64, msg *reseller.ChatMessageInput) (*reseller.ChatMessage, error)
	DownloadChatImage(ctx context.Context, ref string) (*reseller.ChatImage, error)
}

// Deps are the stores and services the relay uses.
type Deps struct {
	Telegram Telegram
	Upstream Upstream // nil: no upstream, so no order has a chat
	Orders   *records.Orders
	// Engine is where the relay's flow lives (its flow timeout, the main
	// menu) and gives the admins' language.
	Engine *flows.Engine
	Chats  *work.OrderChats // the chat records
	// Schedule is the chat polls' own schedule (sched.NewNamedSchedule
	// "chat"), apart from the orders'.
	Schedule *sched.Schedule
	Log      *slog.Logger
	Now      func() time.Time
}

// maxMessageChars is the longest message Telegram takes.
const maxMessageChars = 4096

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
