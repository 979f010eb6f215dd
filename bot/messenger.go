package bot

import (
	"bytes"
	"context"
	"shopbot/state"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// SendDocument sends data as a file named name with an HTML caption.
func (b *Bot) SendDocument(ctx context.Context, chat int64, name string, data []byte, caption string) error {
	return b.API.Do(ctx, "sendDocument", chat, func(ctx context.Context) error {
		_, err := b.API.TG.SendDocument(ctx, &tgbot.SendDocumentParams{
			ChatID: chat, Caption: caption, ParseMode: models.ParseModeHTML,
			Document: &models.InputFileUpload{Filename: name, Data: bytes.NewReader(data)},
		})
		return err
	})
}

// RefundStars gives a Star payment back. A charge refunded before
// (CHARGE_ALREADY_REFUNDED) counts as done.
func (b *Bot) RefundStars(ctx context.Context, userID int64, chargeID string) error {
	err := b.API.Do(ctx, "refundStarPayment", 0, func(ctx context.Context) error {
		_, err := b.API.TG.RefundStarPayment(ctx, &tgbot.RefundStarPaymentParams{UserID: userID, TelegramPaymentChargeID: chargeID})
		return err
	})
	if err != nil && strings.Contains(err.Error(), "CHARGE_ALREADY_REFUNDED") {
		return nil
	}
	return err
}

// wallets returns the wallet store, its money writes made durable.
func (b *Bot) wallets() *state.Wallets {
	w := state.NewWallets(b.rdb, b.opts.Prefix)
	w.Durable = b.durable
	return w
}
