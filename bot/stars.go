package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/bot/checkout"
	"shopbot/flows"
)

// The Bot API calls the features make, behind their small interfaces
// (checkout.Telegram, fulfil.Messenger, ...): documents, Stars invoices,
// pre-checkout answers, refunds and the Star transaction list.

// SendDocument sends data as a file named name with an HTML caption.
func (b *Bot) SendDocument(ctx context.Context, chat int64, name string, data []byte, caption string) error {
	return b.SendFile(ctx, chat, name, data, false, caption, nil)
}

// SendFile uploads data named name as a photo (photo) or a document, with
// an HTML caption and optional buttons.
func (b *Bot) SendFile(ctx context.Context, chat int64, name string, data []byte, photo bool, caption string, rows [][]flows.Button) error {
	var markup models.ReplyMarkup
	if len(rows) > 0 {
		markup = keyboard(rows)
	}
	file := &models.InputFileUpload{Filename: name, Data: bytes.NewReader(data)}
	if photo {
		return b.API.Do(ctx, "sendPhoto", chat, func(ctx context.Context) error {
			_, err := b.API.TG.SendPhoto(ctx, &tgbot.SendPhotoParams{
				ChatID: chat, Caption: caption, ParseMode: models.ParseModeHTML, ReplyMarkup: markup, Photo: file,
			})
			return err
		})
	}
	return b.API.Do(ctx, "sendDocument", chat, func(ctx context.Context) error {
		_, err := b.API.TG.SendDocument(ctx, &tgbot.SendDocumentParams{
			ChatID: chat, Caption: caption, ParseMode: models.ParseModeHTML, ReplyMarkup: markup, Document: file,
		})
		return err
	})
}

// SendPhotoID sends a photo Telegram already has, by its file id, with an
// optional HTML caption and buttons.
func (b *Bot) SendPhotoID(ctx context.Context, chat int64, fileID, caption string, rows [][]flows.Button) error {
	return b.API.Do(ctx, "sendPhoto", chat, func(ctx context.Context) error {
		p := &tgbot.SendPhotoParams{ChatID: chat, Photo: &models.InputFileString{Data: fileID}}
		if caption != "" {
			p.Caption, p.ParseMode = caption, models.ParseModeHTML
		}
		if len(rows) > 0 {
			p.ReplyMarkup = keyboard(rows)
		}
		_, err := b.API.TG.SendPhoto(ctx, p)
		return err
	})
}

// DownloadFile fetches a file a user sent (getFile, then the file link),
// refusing one over limit bytes. Errors never carry the link, which holds
// the bot token.
func (b *Bot) DownloadFile(ctx context.Context, fileID string, limit int64) ([]byte, error) {
	var f *models.File
	err := b.API.Do(ctx, "getFile", 0, func(ctx context.Context) error {
		var err error
		f, err = b.API.TG.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("getFile: %s", scrub(err.Error(), b.opts.Token))
	}
	if f.FileSize > limit {
		return nil, fmt.Errorf("the file has %d bytes, over %d", f.FileSize, limit)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.API.TG.FileDownloadLink(f), nil)
	if err != nil {
		return nil, errors.New("build the file download request")
	}
	resp, err := b.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download file: %s", scrub(err.Error(), b.opts.Token))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download file: status %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("download file: %s", scrub(err.Error(), b.opts.Token))
	}
	if int64(len(data)) > limit || len(data) == 0 {
		return nil, fmt.Errorf("download file: %d bytes", len(data))
	}
	return data, nil
}

// RefundStars gives a Star payment back: the one refund call of the shop
// (checkout refunds a charge that bought nothing, fulfilment an order that
// failed). A charge refunded before (CHARGE_ALREADY_REFUNDED) counts as
// done.
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

// SendInvoice sends a Stars invoice and returns its message id.
func (b *Bot) SendInvoice(ctx context.Context, inv checkout.Invoice) (int, error) {
	var msgID int
	err := b.API.Do(ctx, "sendInvoice", inv.ChatID, func(ctx context.Context) error {
		m, err := b.API.TG.SendInvoice(ctx, &tgbot.SendInvoiceParams{
			ChatID: inv.ChatID, Title: inv.Title, Description: inv.Description, Payload: inv.Payload,
			Currency: "XTR", Prices: []models.LabeledPrice{{Label: inv.Label, Amount: int(inv.Stars)}},
		})
		if err == nil {
			msgID = m.ID
		}
		return err
	})
	return msgID, err
}

// AnswerPreCheckout answers a pre-checkout query: ok when refusal is "",
// else refused with that text.
func (b *Bot) AnswerPreCheckout(ctx context.Context, queryID, refusal string) error {
	return b.API.Do(ctx, "answerPreCheckoutQuery", 0, func(ctx context.Context) error {
		_, err := b.API.TG.AnswerPreCheckoutQuery(ctx, &tgbot.AnswerPreCheckoutQueryParams{
			PreCheckoutQueryID: queryID, OK: refusal == "", ErrorMessage: refusal,
		})
		return err
	})
}

// StarTransactions reads a page of the bot's Star transactions.
func (b *Bot) StarTransactions(ctx context.Context, offset, limit int) ([]checkout.StarTransaction, error) {
	var page *models.StarTransactions
	err := b.API.Do(ctx, "getStarTransactions", 0, func(ctx context.Context) error {
		var err error
		page, err = b.API.TG.GetStarTransactions(ctx, &tgbot.GetStarTransactionsParams{Offset: offset, Limit: limit})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]checkout.StarTransaction, 0, len(page.Transactions))
	for _, tx := range page.Transactions {
		t := checkout.StarTransaction{ID: tx.ID, Date: int64(tx.Date), Amount: int64(tx.Amount)}
		t.Refund = tx.Receiver != nil && tx.Receiver.User != nil
		if src := tx.Source; src != nil && src.User != nil {
			t.Buyer = &checkout.StarBuyer{UserID: src.User.User.ID, LanguageCode: src.User.User.LanguageCode, Payload: src.User.InvoicePayload}
		}
		out = append(out, t)
	}
	return out, nil
}

// SendBulk sends a broadcast message: paced per chat and shop-wide at
// BroadcastRate, so it never takes the capacity replies need.
func (b *Bot) SendBulk(ctx context.Context, chat int64, text string) (int, error) {
	return b.Send(WithClass(ctx, Bulk), chat, text, nil)
}

// EditText edits a message's HTML text, with buttons (rows nil: none). An
// edit that changes nothing is no error.
func (b *Bot) EditText(ctx context.Context, chat int64, msgID int, text string, rows [][]flows.Button) error {
	return b.API.Do(ctx, "editMessageText", chat, func(ctx context.Context) error {
		p := &tgbot.EditMessageTextParams{ChatID: chat, MessageID: msgID, Text: text, ParseMode: models.ParseModeHTML}
		if rows != nil {
			p.ReplyMarkup = keyboard(rows)
		}
		_, err := b.API.TG.EditMessageText(ctx, p)
		if IsNotModified(err) {
			return nil
		}
		return err
	})
}

// StarBalance reads the bot's Star balance: whole Stars and nanostars.
func (b *Bot) StarBalance(ctx context.Context) (amount, nano int64, err error) {
	err = b.API.Do(ctx, "getMyStarBalance", 0, func(ctx context.Context) error {
		sa, err := b.API.TG.GetMyStarBalance(ctx)
		if err == nil {
			amount, nano = int64(sa.Amount), int64(sa.NanostarAmount)
		}
		return err
	})
	return amount, nano, err
}
