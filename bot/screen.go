package bot

import (
	"bytes"
	"context"
	"errors"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/bot/images"
	"shopbot/flows"
)

// The live menu is a text message, or a photo with the screen's text as
// its caption when the screen has a product image (package images). Browsing
// edits it in place:
//
//   - text -> text: editMessageText;
//   - photo -> the same photo: editMessageCaption (caption and keyboard);
//   - photo -> another photo, text -> photo: editMessageMedia (the new photo
//     by file_id or uploaded, its caption and the keyboard; the Bot API
//     replaces a text message with a media);
//   - photo -> text: a media message cannot become text, so the text menu
//     is sent anew and the photo deleted (a photo older than 48 hours,
//     which cannot be deleted, loses its keyboard instead).
//
// When an edit is refused (the message is gone or too old) the menu is sent
// anew, as for text. A photo Telegram refuses after one fresh upload is
// marked broken and the screen shown as text.

// showScreen shows sc as the live menu of s and reports whether the
// session changed (the menu moved or changed kind).
func (b *Bot) showScreen(ctx context.Context, chat int64, s *flows.Session, sc *flows.Screen, stale bool) (bool, error) {
	before := *s
	if ph := b.screenPhoto(ctx, sc); ph != nil {
		err := b.showPhoto(ctx, chat, s, sc, ph, stale)
		if err == nil || !images.IsPhotoRefused(err) {
			return s.MenuMsg != before.MenuMsg || s.MenuImage != before.MenuImage, err
		}
		b.images.Broken(ctx, ph.URL, err)
	}
	err := b.showText(ctx, chat, s, sc, stale)
	return s.MenuMsg != before.MenuMsg || s.MenuImage != before.MenuImage, err
}

// screenPhoto returns the photo sc shows, or nil for a text screen: no
// image, images off, a caption too long, or an image that cannot be had
// now.
func (b *Bot) screenPhoto(ctx context.Context, sc *flows.Screen) *images.Photo {
	if b.images == nil || sc.Image == "" || images.CaptionLen(sc.Text) > images.MaxCaptionChars {
		return nil
	}
	return b.images.Resolve(ctx, sc.Image)
}

// showText shows sc as a text menu.
func (b *Bot) showText(ctx context.Context, chat int64, s *flows.Session, sc *flows.Screen, stale bool) error {
	if !sc.Fresh && s.MenuMsg != 0 && s.MenuImage == "" {
		err := b.API.Do(ctx, "editMessageText", chat, func(ctx context.Context) error {
			return b.API.callJSON(ctx, "editMessageText", &tgbot.EditMessageTextParams{
				ChatID: chat, MessageID: s.MenuMsg, Text: sc.Text, ParseMode: models.ParseModeHTML,
				ReplyMarkup: keyboard(sc.Rows), LinkPreviewOptions: noPreview,
			}, nil)
		})
		if err == nil || IsNotModified(err) {
			return nil
		}
		if errors.Is(err, flows.ErrBlocked) || stale && !menuLost(err) {
			return err
		}
		// The message is gone, too old to edit, or a photo: send the menu
		// anew (also for an outdated press: the menu the session knows is
		// not in the chat, so the press would otherwise show nothing).
		if menuLost(err) {
			b.dropMenu(ctx, chat, s.MenuMsg)
		}
	} else if stale && !sc.Fresh && s.MenuMsg != 0 {
		return nil // an outdated press never moves the menu
	}
	id, err := b.Send(ctx, chat, sc.Text, sc.Rows)
	if err != nil {
		return err
	}
	if !sc.Fresh && s.MenuImage != "" {
		b.dropMenu(ctx, chat, s.MenuMsg) // the photo the text replaces
	}
	s.MenuMsg, s.MenuImage = id, ""
	return nil
}

// showPhoto shows sc as a photo menu. An error Telegram gives for the
// photo itself (isPhotoRefused) is left for the caller to fall back to
// text.
func (b *Bot) showPhoto(ctx context.Context, chat int64, s *flows.Session, sc *flows.Screen, ph *images.Photo, stale bool) error {
	if !sc.Fresh && s.MenuMsg != 0 {
		var err error
		if s.MenuImage == ph.Key() {
			err = b.editCaption(ctx, chat, s.MenuMsg, sc)
		} else {
			err = b.retryUpload(ctx, ph, func(ph *images.Photo) (string, error) { return b.editMedia(ctx, chat, s.MenuMsg, ph, sc) })
		}
		if err == nil || IsNotModified(err) {
			s.MenuImage = ph.Key()
			return nil
		}
		if errors.Is(err, flows.ErrBlocked) || stale && !menuLost(err) || images.IsPhotoRefused(err) {
			return err
		}
		// The message is gone, too old to edit, or cannot become a photo
		// (a Bot API server before 10.1): send the menu anew.
		if menuLost(err) && s.MenuImage != "" {
			b.dropMenu(ctx, chat, s.MenuMsg) // a text message the session took for this photo
		}
	}
	var id int
	err := b.retryUpload(ctx, ph, func(ph *images.Photo) (string, error) {
		var fileID string
		var err error
		id, fileID, err = b.sendPhoto(ctx, chat, ph, sc)
		return fileID, err
	})
	if err != nil {
		return err
	}
	if !sc.Fresh && s.MenuMsg != 0 && s.MenuImage == "" {
		b.dropMenu(ctx, chat, s.MenuMsg) // the text menu that could not become this photo
	}
	s.MenuMsg, s.MenuImage = id, ph.Key()
	return nil
}

// retryUpload runs show with ph and records the file_id of an upload. When
// Telegram refuses ph's cached file_id, the file_id is dropped and show
// runs once more with the image downloaded again.
func (b *Bot) retryUpload(ctx context.Context, ph *images.Photo, show func(*images.Photo) (string, error)) error {
	fileID, err := show(ph)
	if err != nil && ph.FileID != "" && images.IsWrongFileID(err) {
		fresh := b.images.Refused(ctx, ph)
		if fresh == nil {
			return err // could not be downloaded again: it is marked broken
		}
		*ph = *fresh
		fileID, err = show(ph)
	}
	if err == nil {
		b.images.Uploaded(ctx, ph, fileID)
	}
	return err
}

// media is ph as a Bot API photo: its file_id, or its content to upload.
func media(ph *images.Photo, caption string) *models.InputMediaPhoto {
	m := &models.InputMediaPhoto{Media: ph.FileID, Caption: caption, ParseMode: models.ParseModeHTML}
	if ph.FileID == "" {
		m.Media, m.MediaAttachment = "attach://"+ph.UploadName(), bytes.NewReader(ph.Img.Data)
	}
	return m
}

// largestFileID is the file_id of a sent photo's largest size.
func largestFileID(m *models.Message) string {
	if m == nil || len(m.Photo) == 0 {
		return ""
	}
	return m.Photo[len(m.Photo)-1].FileID
}

// sendPhoto sends ph as a new menu and returns its message id and, for an
// upload, the photo's file_id.
func (b *Bot) sendPhoto(ctx context.Context, chat int64, ph *images.Photo, sc *flows.Screen) (int, string, error) {
	var m *models.Message
	err := b.API.Do(ctx, "sendPhoto", chat, func(ctx context.Context) error {
		p := &tgbot.SendPhotoParams{ChatID: chat, Caption: sc.Text, ParseMode: models.ParseModeHTML, ReplyMarkup: keyboard(sc.Rows)}
		if ph.FileID != "" {
			p.Photo = &models.InputFileString{Data: ph.FileID}
		} else {
			p.Photo = &models.InputFileUpload{Filename: ph.UploadName(), Data: bytes.NewReader(ph.Img.Data)}
		}
		var err error
		m, err = b.API.TG.SendPhoto(ctx, p)
		return err
	})
	if err != nil {
		return 0, "", err
	}
	return m.ID, largestFileID(m), nil
}

// editMedia turns the menu msgID into ph with sc's caption and keyboard and
// returns, for an upload, the photo's file_id.
func (b *Bot) editMedia(ctx context.Context, chat int64, msgID int, ph *images.Photo, sc *flows.Screen) (string, error) {
	var m *models.Message
	err := b.API.Do(ctx, "editMessageMedia", chat, func(ctx context.Context) error {
		var err error
		m, err = b.API.TG.EditMessageMedia(ctx, &tgbot.EditMessageMediaParams{
			ChatID: chat, MessageID: msgID, Media: media(ph, sc.Text), ReplyMarkup: keyboard(sc.Rows),
		})
		return err
	})
	return largestFileID(m), err
}

// editCaption replaces the photo menu's caption and keyboard.
func (b *Bot) editCaption(ctx context.Context, chat int64, msgID int, sc *flows.Screen) error {
	return b.API.Do(ctx, "editMessageCaption", chat, func(ctx context.Context) error {
		return b.API.callJSON(ctx, "editMessageCaption", &tgbot.EditMessageCaptionParams{
			ChatID: chat, MessageID: msgID, Caption: sc.Text, ParseMode: models.ParseModeHTML, ReplyMarkup: keyboard(sc.Rows),
		}, nil)
	})
}

// dropMenu deletes a menu a new message replaced; one that cannot be
// deleted (older than 48 hours) loses its keyboard instead.
func (b *Bot) dropMenu(ctx context.Context, chat int64, msgID int) {
	err := b.API.Do(ctx, "deleteMessage", chat, func(ctx context.Context) error {
		return b.API.callJSON(ctx, "deleteMessage", &tgbot.DeleteMessageParams{ChatID: chat, MessageID: msgID}, nil)
	})
	if err == nil || errors.Is(err, flows.ErrBlocked) {
		return
	}
	_ = b.API.Do(ctx, "editMessageReplyMarkup", chat, func(ctx context.Context) error {
		return b.API.callJSON(ctx, "editMessageReplyMarkup", &tgbot.EditMessageReplyMarkupParams{ChatID: chat, MessageID: msgID}, nil)
	})
}
