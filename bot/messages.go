package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/flows"
	"shopbot/state"
)

// The messages and files the features send and fetch, behind their small
// interfaces (fulfil.Messenger, orderchat.Telegram, support.Telegram,
// admin.Telegram). Send, which every feature uses, is in handler.go.

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

// SendPhotoFile uploads data named name as a photo with an HTML caption
// and optional buttons, and returns the file id of its largest size.
func (b *Bot) SendPhotoFile(ctx context.Context, chat int64, name string, data []byte, caption string, rows [][]flows.Button) (string, error) {
	var fileID string
	err := b.API.Do(ctx, "sendPhoto", chat, func(ctx context.Context) error {
		p := &tgbot.SendPhotoParams{ChatID: chat, Photo: &models.InputFileUpload{Filename: name, Data: bytes.NewReader(data)}}
		if caption != "" {
			p.Caption, p.ParseMode = caption, models.ParseModeHTML
		}
		if len(rows) > 0 {
			p.ReplyMarkup = keyboard(rows)
		}
		m, err := b.API.TG.SendPhoto(ctx, p)
		if err == nil && m != nil && len(m.Photo) > 0 {
			fileID = m.Photo[len(m.Photo)-1].FileID
		}
		return err
	})
	return fileID, err
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

// SendBulk sends a broadcast message: text alone (media "") or a photo,
// video or document Telegram already has (fileID) with text as its
// caption, with buttons; paced per chat and shop-wide at BroadcastRate, so
// it never takes the capacity replies need.
func (b *Bot) SendBulk(ctx context.Context, chat int64, media, fileID, text string, rows [][]flows.Button) (int, error) {
	ctx = WithClass(ctx, Bulk)
	if media == "" {
		return b.Send(ctx, chat, text, rows)
	}
	return b.SendMedia(ctx, chat, media, fileID, text, rows)
}

// mediaParams are sendPhoto's, sendVideo's and sendDocument's parameters
// for a file sent again by its file_id.
type mediaParams struct {
	ChatID      int64                        `json:"chat_id"`
	Photo       string                       `json:"photo,omitempty"`
	Video       string                       `json:"video,omitempty"`
	Document    string                       `json:"document,omitempty"`
	Caption     string                       `json:"caption,omitempty"`
	ParseMode   models.ParseMode             `json:"parse_mode,omitempty"`
	ReplyMarkup *models.InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// SendMedia sends a photo, video or document (media: state.MediaPhoto,
// MediaVideo, MediaDocument) Telegram already has, by its file_id, with an
// HTML caption (may be "") and buttons, and returns the message's id.
func (b *Bot) SendMedia(ctx context.Context, chat int64, media, fileID, caption string, rows [][]flows.Button) (int, error) {
	p := &mediaParams{ChatID: chat, Caption: caption}
	var method string
	switch media {
	case state.MediaPhoto:
		method, p.Photo = "sendPhoto", fileID
	case state.MediaVideo:
		method, p.Video = "sendVideo", fileID
	case state.MediaDocument:
		method, p.Document = "sendDocument", fileID
	default:
		return 0, fmt.Errorf("send media: unknown kind %q", media)
	}
	if caption != "" {
		p.ParseMode = models.ParseModeHTML
	}
	if len(rows) > 0 {
		p.ReplyMarkup = keyboard(rows)
	}
	var m sentMessage
	err := b.API.Do(ctx, method, chat, func(ctx context.Context) error {
		return b.API.callJSON(ctx, method, p, &m)
	})
	if err != nil {
		return 0, fmt.Errorf("send %s: %w", media, err)
	}
	return m.ID, nil
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
