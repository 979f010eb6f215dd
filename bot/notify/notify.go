// Package notify holds the small interfaces the shop's features share for
// reaching people: a message to a chat (Sender) or a file (DocumentSender),
// which the Telegram adapter (package bot) implements, and an alert to the
// owners once per occurrence (Alerter), which admin.Alerts implements.
//
// A feature that needs more of Telegram (invoices, edits, photos, Star
// refunds) declares its own interface in its own package and embeds these;
// package storefront hands each feature the adapter and the alerts.
// Features import notify, never bot (docs/decisions/0003-features-never-import-bot.md).
package notify

import (
	"context"

	"shopbot/flows"
)

// Sender sends messages to chats.
type Sender interface {
	// Send sends chat an HTML message with buttons (rows nil: none) and
	// returns its message id. Its error wraps flows.ErrBlocked when the
	// user blocked the bot.
	Send(ctx context.Context, chat int64, text string, rows [][]flows.Button) (int, error)
}

// DocumentSender sends files to chats: exports, reports, delivered codes
// too long for a message, batches of promo codes.
type DocumentSender interface {
	// SendDocument sends data to chat as a file named name with an HTML
	// caption. Its error wraps flows.ErrBlocked when the user blocked the
	// bot.
	SendDocument(ctx context.Context, chat int64, name string, data []byte, caption string) error
}

// Alerter tells the owners about trouble once per key, until the key is
// cleared.
type Alerter interface {
	// Raise sends text to the owners unless key is raised already, and
	// reports whether it sent.
	Raise(ctx context.Context, key, text string) (bool, error)
	// Clear ends key's occurrence, so the next Raise alerts again; it
	// reports whether key was raised.
	Clear(ctx context.Context, key string) (bool, error)
	// Mark raises key without telling anyone and reports whether it was
	// not raised before: a caller with many items marks each and tells
	// the owners about the new ones in one message (Tell).
	Mark(ctx context.Context, key string) (bool, error)
	// Tell sends text to the owners.
	Tell(ctx context.Context, text string)
}
