package botapitest

import (
	"bytes"
	"errors"
	"net/http"
	"shopbot/bot/botapitest/types"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

func keyboard(rows ...[]models.InlineKeyboardButton) *models.InlineKeyboardMarkup {
	return &models.InlineKeyboardMarkup{InlineKeyboard: rows}
}

func TestGoTelegramCallsAreAcceptedAndRecorded(t *testing.T) {
	s := NewT(t) // any violation fails this test
	b := newBot(t, s)
	ctx := t.Context()
	const chat = 42

	me, err := b.GetMe(ctx)
	if err != nil || !me.IsBot || me.Username != "shopbot_test_bot" || me.ID != 123456 {
		t.Fatalf("getMe = %+v, %v", me, err)
	}

	t.Run("sendMessage with an inline keyboard", func(t *testing.T) {
		msg, err := b.SendMessage(ctx, &bot.SendMessageParams{
			ChatID:      chat,
			Text:        "<b>Gift cards</b> &amp; more",
			ParseMode:   models.ParseModeHTML,
			ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "Steam", CallbackData: "1:n1:brand:steam"}}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if msg.ID != 1 || msg.Chat.ID != chat || msg.Chat.Type != "private" || msg.From == nil || !msg.From.IsBot {
			t.Errorf("message = %+v", msg)
		}
		if msg.Text != "Gift cards & more" || len(msg.Entities) != 1 || msg.Entities[0].Type != models.MessageEntityTypeBold || msg.Entities[0].Length != 10 {
			t.Errorf("text %q entities %+v", msg.Text, msg.Entities)
		}
		if msg.ReplyMarkup == nil || msg.ReplyMarkup.InlineKeyboard[0][0].CallbackData != "1:n1:brand:steam" {
			t.Errorf("reply_markup not echoed: %+v", msg.ReplyMarkup)
		}
		calls := s.CallsFor("sendMessage")
		if len(calls) != 1 {
			t.Fatalf("recorded %d sendMessage calls", len(calls))
		}
		c := calls[0]
		if c.Int("chat_id") != chat || c.String("parse_mode") != "HTML" || !c.OK() {
			t.Errorf("call = %+v", c)
		}
		var mk types.InlineKeyboardMarkup
		if err := c.JSON("reply_markup", &mk); err != nil || mk.InlineKeyboard[0][0].Text != "Steam" {
			t.Errorf("reply_markup = %+v, %v", mk, err)
		}
		last, ok := s.LastMessage(chat)
		if !ok || last.RawText != "<b>Gift cards</b> &amp; more" || last.Text != "Gift cards & more" {
			t.Errorf("LastMessage = %+v", last)
		}
	})

	t.Run("editMessageText", func(t *testing.T) {
		edited, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{
			ChatID:      chat,
			MessageID:   1,
			Text:        "Choose a card",
			ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "Back", CallbackData: "1:n1:back"}}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if edited.Text != "Choose a card" || edited.EditDate == 0 {
			t.Errorf("edited = %+v", edited)
		}
		msgs := s.MessagesIn(chat)
		if len(msgs) != 1 || msgs[0].Text != "Choose a card" || msgs[0].ReplyMarkup.Buttons()[0].Text != "Back" {
			t.Errorf("MessagesIn = %+v", msgs)
		}
		_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{
			ChatID: chat, MessageID: 1, Text: "Choose a card",
			ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "Back", CallbackData: "1:n1:back"}}),
		})
		if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "message is not modified") {
			t.Errorf("identical edit: err = %v", err)
		}
		_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: 99, Text: "x"})
		if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "message to edit not found") {
			t.Errorf("unknown message: err = %v", err)
		}
		// Telegram removes the keyboard when an edit has no reply_markup.
		if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: chat, MessageID: 1, Text: "Choose a card"}); err != nil {
			t.Fatal(err)
		}
		if m, _ := s.LastMessage(chat); m.ReplyMarkup != nil {
			t.Errorf("keyboard kept after an edit without reply_markup: %+v", m.ReplyMarkup)
		}
	})

	t.Run("answerCallbackQuery", func(t *testing.T) {
		id := s.Press(chat, 1, "1:n1:back")
		ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: "Done"})
		if err != nil || !ok {
			t.Fatalf("answer = %v, %v", ok, err)
		}
		if a, answered := s.CallbackAnswer(id); !answered || a.Text != "Done" {
			t.Errorf("CallbackAnswer = %+v, %v", a, answered)
		}
		_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id})
		if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "query is too old") {
			t.Errorf("second answer: err = %v", err)
		}
		_, err = b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: "nope"})
		if !errors.Is(err, bot.ErrorBadRequest) {
			t.Errorf("unknown query: err = %v", err)
		}
	})

	t.Run("sendInvoice in Stars", func(t *testing.T) {
		msg, err := b.SendInvoice(ctx, &bot.SendInvoiceParams{
			ChatID:      chat,
			Title:       "Steam 10 USD",
			Description: "Gift card, delivered as a code",
			Payload:     "q:abc123",
			Currency:    "XTR",
			Prices:      []models.LabeledPrice{{Label: "Steam 10 USD", Amount: 850}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if msg.Invoice == nil || msg.Invoice.TotalAmount != 850 || msg.Invoice.Currency != "XTR" {
			t.Errorf("invoice = %+v", msg.Invoice)
		}
		if m, _ := s.LastMessage(chat); m.InvoicePayload != "q:abc123" {
			t.Errorf("payload = %q", m.InvoicePayload)
		}
	})

	t.Run("sendDocument with an upload", func(t *testing.T) {
		msg, err := b.SendDocument(ctx, &bot.SendDocumentParams{
			ChatID:   chat,
			Document: &models.InputFileUpload{Filename: "codes.txt", Data: bytes.NewReader([]byte("AAAA-BBBB\n"))},
			Caption:  "Your codes",
		})
		if err != nil {
			t.Fatal(err)
		}
		if msg.Document == nil || msg.Document.FileName != "codes.txt" || msg.Document.FileSize != 10 || msg.Caption != "Your codes" {
			t.Errorf("document message = %+v / %+v", msg, msg.Document)
		}
		c := s.CallsFor("sendDocument")[0]
		if f := c.Files["document"]; f.Name != "codes.txt" || string(f.Data) != "AAAA-BBBB\n" {
			t.Errorf("file = %+v", f)
		}
		if m, _ := s.LastMessage(chat); string(m.FileData) != "AAAA-BBBB\n" {
			t.Errorf("stored file = %q", m.FileData)
		}
	})

	t.Run("setMyCommands with a scope", func(t *testing.T) {
		ok, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{
			Commands:     []models.BotCommand{{Command: "balance", Description: "Upstream balance"}},
			Scope:        &models.BotCommandScopeChat{ChatID: 7},
			LanguageCode: "en",
		})
		if err != nil || !ok {
			t.Fatalf("setMyCommands = %v, %v", ok, err)
		}
		got := s.MyCommands(CommandScope{Type: "chat", ChatID: 7, LanguageCode: "en"})
		if len(got) != 1 || got[0].Command != "balance" {
			t.Errorf("MyCommands = %+v", got)
		}
		cmds, err := b.GetMyCommands(ctx, &bot.GetMyCommandsParams{Scope: &models.BotCommandScopeChat{ChatID: 7}, LanguageCode: "en"})
		if err != nil || len(cmds) != 1 {
			t.Errorf("getMyCommands = %+v, %v", cmds, err)
		}
		if cmds, _ := b.GetMyCommands(ctx, &bot.GetMyCommandsParams{}); len(cmds) != 0 {
			t.Errorf("default scope = %+v", cmds)
		}
	})

	t.Run("refundStarPayment and getStarTransactions", func(t *testing.T) {
		charge := s.PushSuccessfulPayment(chat, "q:abc123", 850, "")
		if s.StarBalance() != 850 {
			t.Fatalf("balance = %d", s.StarBalance())
		}
		ok, err := b.RefundStarPayment(ctx, &bot.RefundStarPaymentParams{UserID: chat, TelegramPaymentChargeID: charge})
		if err != nil || !ok {
			t.Fatalf("refund = %v, %v", ok, err)
		}
		_, err = b.RefundStarPayment(ctx, &bot.RefundStarPaymentParams{UserID: chat, TelegramPaymentChargeID: charge})
		if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "CHARGE_ALREADY_REFUNDED") {
			t.Errorf("second refund: err = %v", err)
		}
		_, err = b.RefundStarPayment(ctx, &bot.RefundStarPaymentParams{UserID: chat, TelegramPaymentChargeID: "stxNOPE"})
		if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), "CHARGE_NOT_FOUND") {
			t.Errorf("unknown charge: err = %v", err)
		}
		if !s.Refunded(charge) || s.StarBalance() != 0 {
			t.Errorf("refunded = %v, balance = %d", s.Refunded(charge), s.StarBalance())
		}
		txs, err := b.GetStarTransactions(ctx, &bot.GetStarTransactionsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(txs.Transactions) != 2 {
			t.Fatalf("transactions = %+v", txs.Transactions)
		}
		refund, pay := txs.Transactions[0], txs.Transactions[1] // newest first
		if pay.ID != charge || pay.Amount != 850 || pay.Source == nil || pay.Source.User == nil || pay.Source.User.InvoicePayload != "q:abc123" {
			t.Errorf("payment transaction = %+v", pay)
		}
		if refund.ID != charge || refund.Receiver == nil || refund.Receiver.User == nil || refund.Receiver.User.User.ID != chat {
			t.Errorf("refund transaction = %+v", refund)
		}
		page, err := b.GetStarTransactions(ctx, &bot.GetStarTransactionsParams{Offset: 1, Limit: 1})
		if err != nil || len(page.Transactions) != 1 || page.Transactions[0].Source == nil {
			t.Errorf("offset 1 limit 1 = %+v, %v", page, err)
		}
		bal, err := b.GetMyStarBalance(ctx)
		if err != nil || bal.Amount != 0 {
			t.Errorf("balance = %+v, %v", bal, err)
		}
	})

	t.Run("deleteMessage", func(t *testing.T) {
		before := len(s.MessagesIn(chat))
		ok, err := b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: chat, MessageID: 1})
		if err != nil || !ok || len(s.MessagesIn(chat)) != before-1 {
			t.Errorf("delete = %v, %v", ok, err)
		}
		_, err = b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: chat, MessageID: 1})
		if !errors.Is(err, bot.ErrorBadRequest) {
			t.Errorf("second delete: err = %v", err)
		}
	})

	t.Run("webhook settings", func(t *testing.T) {
		ok, err := b.SetWebhook(ctx, &bot.SetWebhookParams{URL: "https://shop.example/tg", SecretToken: "s3cr3t", DropPendingUpdates: true})
		if err != nil || !ok {
			t.Fatalf("setWebhook = %v, %v", ok, err)
		}
		info, err := b.GetWebhookInfo(ctx)
		if err != nil || info.URL != "https://shop.example/tg" {
			t.Errorf("getWebhookInfo = %+v, %v", info, err)
		}
		if w := s.Webhook(); w.SecretToken != "s3cr3t" {
			t.Errorf("Webhook = %+v", w)
		}
		if ok, err := b.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); err != nil || !ok || s.Webhook().URL != "" {
			t.Errorf("deleteWebhook = %v, %v", ok, err)
		}
	})

	if v := s.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestMessageIDsArePerChat(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	for _, chat := range []int64{1, 2, 1} {
		if _, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: chat, Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	s.SendText(2, "hello") // the buyer's message takes the next id too
	m, _ := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 2, Text: "hi"})
	if got := []int{len(s.MessagesIn(1)), len(s.MessagesIn(2)), m.ID}; got[0] != 2 || got[1] != 2 || got[2] != 3 {
		t.Errorf("messages in 1, in 2, last id = %v, want [2 2 3]", got)
	}
}

func TestRequestEncodings(t *testing.T) {
	s := NewT(t)
	cases := []struct {
		name, contentType, body string
	}{
		{"json", "application/json", `{"chat_id":5,"text":"hi","disable_notification":true,"reply_markup":{"inline_keyboard":[[{"text":"a","callback_data":"b"}]]}}`},
		{"json with serialized object", "application/json", `{"chat_id":"5","text":"hi","reply_markup":"{\"inline_keyboard\":[[{\"text\":\"a\",\"callback_data\":\"b\"}]]}"}`},
		{"urlencoded", "application/x-www-form-urlencoded", `chat_id=5&text=hi&disable_notification=true&reply_markup=%7B%22remove_keyboard%22%3Atrue%7D`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, a := post(t, s, "sendMessage", tc.contentType, tc.body)
			if status != 200 || !a.OK {
				t.Fatalf("status %d answer %+v", status, a)
			}
		})
	}
	t.Run("GET with a query string, case-insensitive method", func(t *testing.T) {
		resp, err := http.Get(s.URL() + "/bot" + s.Token() + "/SENDMESSAGE?chat_id=5&text=hey")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		calls := s.CallsFor("sendMessage")
		if resp.StatusCode != 200 || calls[len(calls)-1].String("text") != "hey" {
			t.Errorf("status %d calls %+v", resp.StatusCode, calls)
		}
	})
	calls := s.CallsFor("sendMessage")
	if c := calls[0]; c.Int("chat_id") != 5 || !c.Bool("disable_notification") {
		t.Errorf("decoded params = %+v", c.Params)
	}
	if c := calls[1]; c.Int("chat_id") != 5 {
		t.Errorf("string chat_id not decoded as Integer: %#v", c.Params["chat_id"])
	}
}

func TestWrongToken(t *testing.T) {
	s := NewT(t)
	b, err := bot.New("999:wrong", bot.WithServerURL(s.URL()), bot.WithSkipGetMe())
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.GetMe(t.Context())
	if !errors.Is(err, bot.ErrorUnauthorized) {
		t.Errorf("err = %v, want unauthorized", err)
	}
	if len(s.Calls()) != 0 {
		t.Errorf("a request with a wrong token was recorded")
	}
}

func TestGetMeWithConfiguredBotUser(t *testing.T) {
	s := NewT(t, WithToken("777:abc"), WithBotUser(types.User{FirstName: "Demo Shop"}))
	b, err := bot.New("777:abc", bot.WithServerURL(s.URL())) // runs getMe
	if err != nil {
		t.Fatal(err)
	}
	me, err := b.GetMe(t.Context())
	if err != nil || me.ID != 777 || me.FirstName != "Demo Shop" || me.Username != "shopbot_test_bot" {
		t.Errorf("getMe = %+v, %v", me, err)
	}
}
