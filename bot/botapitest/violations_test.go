package botapitest

import (
	"bytes"
	"errors"
	"mime/multipart"
	"shopbot/bot/botapitest/schema"
	"shopbot/bot/botapitest/types"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

func TestViolationsFailTheTest(t *testing.T) {
	long := strings.Repeat("x", 65)
	cases := []struct {
		name string
		// send makes the bad request; it returns the error go-telegram/bot
		// gave, or nil for raw requests (checked by status instead).
		send func(t *testing.T, s *Server, b *bot.Bot) error
		// want are substrings of the reported violation.
		want []string
	}{
		{
			name: "unknown method",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				status, a := postJSON(t, s, "sendMesage", map[string]any{"chat_id": 1, "text": "hi"})
				if status != 404 || a.Description != "Not Found" {
					t.Errorf("status %d %q, want 404 Not Found", status, a.Description)
				}
				return nil
			},
			want: []string{"sendMesage: unknown method"},
		},
		{
			name: "unknown field",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "hi", "colour": "red"})
				return nil
			},
			want: []string{"sendMessage: colour: unknown field"},
		},
		{
			name: "unknown field sent by go-telegram/bot for ShowCaptionAboveMedia",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.EditMessageCaption(t.Context(), &bot.EditMessageCaptionParams{ChatID: 1, MessageID: 1, Caption: "c", ShowCaptionAboveMedia: true})
				return err
			},
			want: []string{"editMessageCaption: k: unknown field"},
		},
		{
			name: "missing required field",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "sendMessage", map[string]any{"chat_id": 1})
				return nil
			},
			want: []string{"sendMessage: text: missing required field"},
		},
		{
			name: "wrong type in a form field",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				post(t, s, "sendMessage", "application/x-www-form-urlencoded", "chat_id=1&text=hi&message_thread_id=abc")
				return nil
			},
			want: []string{"sendMessage: message_thread_id: wrong type: expected Integer", `"abc"`},
		},
		{
			name: "wrong type in a union",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "sendMessage", map[string]any{"chat_id": true, "text": "hi"})
				return nil
			},
			want: []string{"sendMessage: chat_id: wrong type: expected Integer or String, got JSON boolean true"},
		},
		{
			name: "wrong Boolean",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				post(t, s, "sendMessage", "application/x-www-form-urlencoded", "chat_id=1&text=hi&protect_content=yes")
				return nil
			},
			want: []string{"sendMessage: protect_content: wrong type: expected Boolean"},
		},
		{
			name: "nested wrong type in a button",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "hi",
					"reply_markup": map[string]any{"inline_keyboard": [][]map[string]any{{{"text": "ok", "callback_data": "a"}, {"text": "bad", "callback_data": 5}}}}})
				return nil
			},
			want: []string{"sendMessage: reply_markup.inline_keyboard[0][1].callback_data: wrong type: expected String, got number 5"},
		},
		{
			name: "nested unknown and missing fields",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "sendMessage", map[string]any{"chat_id": 1, "text": "hi",
					"reply_markup": `{"inline_keyboard":[[{"label":"x","callback_data":"a"}]]}`})
				return nil
			},
			want: []string{"reply_markup.inline_keyboard[0][0].label: unknown field", "reply_markup.inline_keyboard[0][0].text: missing required field"},
		},
		{
			name: "callback_data longer than 64 bytes",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "hi",
					ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "x", CallbackData: long}})})
				return err
			},
			want: []string{"sendMessage: reply_markup.inline_keyboard[0][0].callback_data: must be 1-64 bytes, got 65 bytes"},
		},
		{
			name: "more than 100 buttons",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				var rows [][]models.InlineKeyboardButton
				for range 101 {
					rows = append(rows, []models.InlineKeyboardButton{{Text: "x", CallbackData: "x"}})
				}
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "hi", ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: rows}})
				return err
			},
			want: []string{"sendMessage: reply_markup.inline_keyboard: at most 100 buttons, got 101"},
		},
		{
			name: "empty InlineKeyboardMarkup from go-telegram/bot",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "hi", ReplyMarkup: &models.InlineKeyboardMarkup{}})
				return err
			},
			want: []string{"sendMessage: reply_markup.inline_keyboard: null is not allowed"},
		},
		{
			name: "button without an action",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "hi",
					ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "x"}})})
				return err
			},
			want: []string{"reply_markup.inline_keyboard[0][0]: inline keyboard button sets no action"},
		},
		{
			name: "unbalanced HTML",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "<b>Total: <i>5</b></i>", ParseMode: models.ParseModeHTML})
				return err
			},
			want: []string{"sendMessage: text: can't parse entities: unmatched end tag", `expected "</i>"`},
		},
		{
			name: "unescaped HTML",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "Price < 5 USD", ParseMode: models.ParseModeHTML})
				return err
			},
			want: []string{"sendMessage: text: can't parse entities: unescaped '<' at byte offset 6 (write &lt;)"},
		},
		{
			name: "unsupported HTML tag in a caption",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendPhoto(t.Context(), &bot.SendPhotoParams{ChatID: 1, Photo: &models.InputFileString{Data: "AgACfileid"}, Caption: "line<br>two", ParseMode: models.ParseModeHTML})
				return err
			},
			want: []string{`sendPhoto: caption: can't parse entities: unsupported start tag "br"`},
		},
		{
			name: "unknown parse mode",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "hi", ParseMode: "html"})
				return err
			},
			want: []string{`sendMessage: parse_mode: unsupported parse mode "html"`},
		},
		{
			name: "text too long",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: strings.Repeat("😀", 2049)})
				return err
			},
			want: []string{"sendMessage: text: message is too long: 4098 characters (UTF-16 code units)"},
		},
		{
			name: "empty text",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendMessage(t.Context(), &bot.SendMessageParams{ChatID: 1, Text: "<b> </b>", ParseMode: models.ParseModeHTML})
				return err
			},
			want: []string{"sendMessage: text: message text is empty"},
		},
		{
			name: "callback answer text too long",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.AnswerCallbackQuery(t.Context(), &bot.AnswerCallbackQueryParams{CallbackQueryID: "1", Text: strings.Repeat("a", 201)})
				return err
			},
			want: []string{"answerCallbackQuery: text: must be 0-200 characters, got 201"},
		},
		{
			name: "Stars invoice with a provider token and two prices",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendInvoice(t.Context(), &bot.SendInvoiceParams{ChatID: 1, Title: "t", Description: "d", Payload: "p",
					ProviderToken: "284685063:TEST", Currency: "XTR",
					Prices: []models.LabeledPrice{{Label: "a", Amount: 1}, {Label: "b", Amount: 2}}})
				return err
			},
			want: []string{"sendInvoice: provider_token: must be empty", "sendInvoice: prices: must contain exactly one item"},
		},
		{
			name: "invoice payload too long",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SendInvoice(t.Context(), &bot.SendInvoiceParams{ChatID: 1, Title: "t", Description: "d", Payload: strings.Repeat("p", 129),
					Currency: "XTR", Prices: []models.LabeledPrice{{Label: "a", Amount: 1}}})
				return err
			},
			want: []string{"sendInvoice: payload: must be 1-128 bytes, got 129"},
		},
		{
			name: "unknown scope type",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "setMyCommands", map[string]any{"commands": []any{map[string]any{"command": "start", "description": "Start"}}, "scope": map[string]any{"type": "chats"}})
				return nil
			},
			want: []string{`setMyCommands: scope.type: unknown type "chats" for BotCommandScope`},
		},
		{
			name: "subtype with a missing field",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				postJSON(t, s, "setMyCommands", map[string]any{"commands": []any{map[string]any{"command": "start", "description": "Start"}}, "scope": map[string]any{"type": "chat"}})
				return nil
			},
			want: []string{"setMyCommands: scope.chat_id: missing required field (BotCommandScopeChat)"},
		},
		{
			name: "bad command name",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.SetMyCommands(t.Context(), &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "/Start", Description: "Start"}}})
				return err
			},
			want: []string{`setMyCommands: commands[0].command: command "/Start" must be 1-32 characters`},
		},
		{
			name: "declined pre-checkout without a reason",
			send: func(t *testing.T, s *Server, b *bot.Bot) error {
				_, err := b.AnswerPreCheckoutQuery(t.Context(), &bot.AnswerPreCheckoutQueryParams{PreCheckoutQueryID: "1", OK: false})
				return err
			},
			want: []string{"answerPreCheckoutQuery: error_message: required when ok is false"},
		},
		{
			name: "file part nobody refers to",
			send: func(t *testing.T, s *Server, _ *bot.Bot) error {
				var body bytes.Buffer
				mw := multipart.NewWriter(&body)
				_ = mw.WriteField("chat_id", "1")
				_ = mw.WriteField("photo", "attach://pic")
				fw, _ := mw.CreateFormFile("other", "x.jpg")
				_, _ = fw.Write([]byte("jpeg"))
				_ = mw.Close()
				post(t, s, "sendPhoto", mw.FormDataContentType(), body.String())
				return nil
			},
			want: []string{`sendPhoto: photo: "attach://pic" refers to no uploaded file part`, "sendPhoto: other: unknown field (an uploaded file"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			s := NewT(rec)
			b := newBot(t, s)
			err := tc.send(t, s, b)
			if err != nil && !errors.Is(err, bot.ErrorBadRequest) {
				t.Errorf("go-telegram/bot error = %v, want a bad request", err)
			}
			if err != nil && !strings.Contains(err.Error(), "Bad Request: schema: ") {
				t.Errorf("error %q does not start the description with \"Bad Request: schema:\"", err)
			}
			got := strings.Join(rec.errors(), "\n")
			t.Logf("reported:\n%s", got)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("violations:\n%s\nwant one containing %q", got, w)
				}
			}
			calls := s.Calls()
			if len(calls) != 1 || calls[0].OK() {
				t.Errorf("calls = %+v, want one failed call", calls)
			}
		})
	}
}

func TestViolationsInNonTestUse(t *testing.T) {
	var got []error
	s, err := New(OnViolation(func(err error) { got = append(got, err) }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	status, a := postJSON(t, s, "sendMessage", map[string]any{"chat_id": 1})
	if status != 400 || a.ErrorCode != 400 || a.Description != "Bad Request: schema: sendMessage: text: missing required field" {
		t.Errorf("answer %d %+v", status, a)
	}
	var v *schema.Violation
	if len(got) != 1 || !errors.As(got[0], &v) || v.Method != "sendMessage" || v.Field != "text" {
		t.Errorf("violations = %v", got)
	}
	if len(s.Violations()) != 1 {
		t.Errorf("Violations() = %v", s.Violations())
	}
}

func TestValidRequestsPass(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	ctx := t.Context()
	// HTML with every supported tag, entities and attributes.
	html := `<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>i</ins><s>s</s><strike>s</strike><del>d</del>` +
		`<span class="tg-spoiler">sp</span><tg-spoiler>sp</tg-spoiler><a href="https://example.com/?a=1&amp;b=2">link</a>` +
		`<code>c</code><pre><code class="language-go">x := 1</code></pre><blockquote expandable>q</blockquote>` +
		`<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji> &lt;&gt;&amp;&quot;&#39;&#x27;`
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: html, ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}
	// Reply keyboards, removal and force reply are alternatives of reply_markup.
	for _, rm := range []models.ReplyMarkup{
		&models.ReplyKeyboardMarkup{Keyboard: [][]models.KeyboardButton{{{Text: "Catalog"}}}, ResizeKeyboard: true},
		&models.ReplyKeyboardRemove{RemoveKeyboard: true},
		&models.ForceReply{ForceReply: true, InputFieldPlaceholder: "Player id"},
	} {
		if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x", ReplyMarkup: rm}); err != nil {
			t.Fatal(err)
		}
	}
	// An invoice keyboard whose first button pays.
	if _, err := b.SendInvoice(ctx, &bot.SendInvoiceParams{ChatID: 1, Title: "t", Description: "d", Payload: "p", Currency: "XTR",
		Prices:      []models.LabeledPrice{{Label: "a", Amount: 1}},
		ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "Pay ⭐️1", Pay: true}}, []models.InlineKeyboardButton{{Text: "Cancel", CallbackData: "c"}})}); err != nil {
		t.Fatal(err)
	}
	// Several scopes by discriminator; @username chat ids.
	for _, sc := range []models.BotCommandScope{&models.BotCommandScopeDefault{}, &models.BotCommandScopeAllPrivateChats{}, &models.BotCommandScopeChatMember{ChatID: 1, UserID: 2}} {
		if _, err := b.DeleteMyCommands(ctx, &bot.DeleteMyCommandsParams{Scope: sc}); err != nil {
			t.Fatal(err)
		}
	}
	s.SetUser(9, types.User{Username: "alice"})
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: "@alice", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	// Options objects, explicit entities, uploads and media groups with attach://.
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "hi https://example.com",
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
		ReplyParameters:    &models.ReplyParameters{MessageID: 1},
		Entities:           []models.MessageEntity{{Type: models.MessageEntityTypeBold, Offset: 0, Length: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: 1, Photo: &models.InputFileUpload{Filename: "a.png", Data: strings.NewReader("png")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendMediaGroup(ctx, &bot.SendMediaGroupParams{ChatID: 1, Media: []models.InputMedia{
		&models.InputMediaPhoto{Media: "attach://p1", MediaAttachment: strings.NewReader("x"), Caption: "<b>a</b>", ParseMode: models.ParseModeHTML},
		&models.InputMediaPhoto{Media: "AgACfileid"},
	}}); err != nil {
		t.Fatal(err)
	}
	// Methods the server does not simulate still get a plausible answer.
	if _, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: 1, Action: models.ChatActionTyping}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CopyMessage(ctx, &bot.CopyMessageParams{ChatID: 1, FromChatID: 2, MessageID: 1}); err != nil {
		t.Fatal(err)
	}
	if link, err := b.CreateInvoiceLink(ctx, &bot.CreateInvoiceLinkParams{Title: "t", Description: "d", Payload: "p", Currency: "XTR",
		Prices: []models.LabeledPrice{{Label: "a", Amount: 5}}}); err != nil || !strings.HasPrefix(link, "https://t.me/$") {
		t.Fatalf("createInvoiceLink = %q, %v", link, err)
	}
	if _, err := b.EditMessageMedia(ctx, &bot.EditMessageMediaParams{ChatID: 1, MessageID: 1, Media: &models.InputMediaDocument{Media: "BQACfileid"}}); err != nil {
		t.Fatal(err)
	}
}
