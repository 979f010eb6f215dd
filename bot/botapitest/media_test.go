package botapitest

import (
	"bytes"
	"image/color"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// A photo uploaded once is sent again by any of its file_ids, with the
// same sizes; an unknown or forgotten file_id is refused as Telegram does.
func TestSendPhotoByFileID(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	img := TestJPEG(64, 64, color.RGBA{R: 255, A: 255})
	up, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 7, Caption: "<b>first</b>", ParseMode: models.ParseModeHTML,
		Photo: &models.InputFileUpload{Filename: "a.jpg", Data: bytes.NewReader(img)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Photo) < 2 || up.Photo[len(up.Photo)-1].FileID == "" || up.Caption != "first" {
		t.Fatalf("uploaded photo: %+v", up)
	}
	id := up.Photo[len(up.Photo)-1].FileID
	again, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 7, Photo: &models.InputFileString{Data: id}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Photo[len(again.Photo)-1].FileUniqueID != up.Photo[len(up.Photo)-1].FileUniqueID {
		t.Fatalf("resent photo has other sizes: %+v", again.Photo)
	}
	if m, _ := s.LastMessage(7); !bytes.Equal(m.FileData, img) {
		t.Fatal("the resent photo lost its content")
	}
	if _, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 7, Photo: &models.InputFileString{Data: "AgACAgIAAxkBAAIunknown"}}); err == nil ||
		!strings.Contains(err.Error(), "wrong file identifier") {
		t.Fatalf("unknown file_id: %v", err)
	}
	s.ForgetFile(up.Photo[0].FileID)
	if _, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 7, Photo: &models.InputFileString{Data: id}}); err == nil ||
		!strings.Contains(err.Error(), "wrong file identifier") {
		t.Fatalf("forgotten file_id: %v", err)
	}
	if n := len(s.MessagesIn(7)); n != 2 {
		t.Fatalf("%d messages, want the 2 sent", n)
	}
}

// editMessageMedia replaces a photo (uploaded or by file_id) and its
// caption and keyboard, turns a text message into a photo, refuses an
// unknown file_id, and is "not modified" when nothing changes.
func TestEditMessageMedia(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "Next", CallbackData: "n"}}}}
	text, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 7, Text: "menu", ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	red := TestJPEG(32, 32, color.RGBA{R: 255, A: 255})
	m, err := b.EditMessageMedia(t.Context(), &bot.EditMessageMediaParams{ChatID: 7, MessageID: text.ID, ReplyMarkup: kb,
		Media: &models.InputMediaPhoto{Media: "attach://red.jpg", MediaAttachment: bytes.NewReader(red), Caption: "<i>red</i>", ParseMode: models.ParseModeHTML}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Message(7, text.ID)
	if got.Text != "" || len(got.Photo) == 0 || got.Caption != "red" || !bytes.Equal(got.FileData, red) || got.ReplyMarkup == nil {
		t.Fatalf("text turned into photo: %+v", got)
	}
	redID := m.Photo[len(m.Photo)-1].FileID

	blue, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 8, Photo: &models.InputFileUpload{Filename: "b.jpg", Data: bytes.NewReader(TestJPEG(8, 8, color.RGBA{B: 255, A: 255}))}})
	if err != nil {
		t.Fatal(err)
	}
	blueID := blue.Photo[len(blue.Photo)-1].FileID
	if _, err := b.EditMessageMedia(t.Context(), &bot.EditMessageMediaParams{ChatID: 7, MessageID: text.ID, ReplyMarkup: kb,
		Media: &models.InputMediaPhoto{Media: blueID, Caption: "blue"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Message(7, text.ID); got.Caption != "blue" || got.Photo[len(got.Photo)-1].FileID != blueID {
		t.Fatalf("photo by file_id: %+v", got)
	}
	if _, err := b.EditMessageMedia(t.Context(), &bot.EditMessageMediaParams{ChatID: 7, MessageID: text.ID, ReplyMarkup: kb,
		Media: &models.InputMediaPhoto{Media: blueID, Caption: "blue"}}); err == nil || !strings.Contains(err.Error(), "not modified") {
		t.Fatalf("the same media again: %v", err)
	}
	if _, err := b.EditMessageMedia(t.Context(), &bot.EditMessageMediaParams{ChatID: 7, MessageID: text.ID,
		Media: &models.InputMediaPhoto{Media: "AgACAgIAAxkBAAIunknown"}}); err == nil || !strings.Contains(err.Error(), "wrong file identifier") {
		t.Fatalf("unknown file_id: %v", err)
	}
	// Back to the first photo, keyboard kept only when sent again.
	if _, err := b.EditMessageMedia(t.Context(), &bot.EditMessageMediaParams{ChatID: 7, MessageID: text.ID,
		Media: &models.InputMediaPhoto{Media: redID}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Message(7, text.ID); got.ReplyMarkup != nil || got.Caption != "" || !bytes.Equal(got.FileData, red) {
		t.Fatalf("edit without a keyboard or caption: %+v", got)
	}
}

// A media caption is held to the 1024-character limit after HTML parsing.
func TestEditMessageMediaCaptionTooLong(t *testing.T) {
	var got []string
	s, err := New(OnViolation(func(err error) { got = append(got, err.Error()) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	b := newBot(t, s)
	msg, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 7, Text: "menu"})
	if err != nil {
		t.Fatal(err)
	}
	long := "<b>" + strings.Repeat("x", 1025) + "</b>"
	if _, err := b.EditMessageMedia(t.Context(), &bot.EditMessageMediaParams{ChatID: 7, MessageID: msg.ID,
		Media: &models.InputMediaPhoto{Media: "attach://a.jpg", MediaAttachment: bytes.NewReader(TestJPEG(8, 8, color.RGBA{A: 255})), Caption: long, ParseMode: models.ParseModeHTML}}); err == nil {
		t.Fatal("a 1025-character caption passed")
	}
	if len(got) != 1 || !strings.Contains(got[0], "caption is too long") {
		t.Fatalf("violations: %v", got)
	}
}
