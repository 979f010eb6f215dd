package botapitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"shopbot/bot/botapitest/calls"
	"shopbot/bot/botapitest/types"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// poll calls getUpdates with a JSON body, as our own poller does.
func poll(t *testing.T, s *Server, params map[string]any) (int, []types.Update, apiAnswer) {
	t.Helper()
	status, a := postJSON(t, s, "getUpdates", params)
	var ups []types.Update
	if a.OK {
		if err := json.Unmarshal(a.Result, &ups); err != nil {
			t.Fatal(err)
		}
	}
	return status, ups, a
}

// waitPolling waits until exactly n getUpdates requests are blocked in a
// long poll.
func waitPolling(t *testing.T, s *Server, n int) {
	t.Helper()
	ctx := ctxTimeout(t, 5*time.Second)
	for {
		s.mu.Lock()
		p := s.polling
		s.mu.Unlock()
		if p == n {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%d long polls waiting, want %d", p, n)
		}
		runtime.Gosched()
	}
}

func TestGetUpdatesOffsetAndLimit(t *testing.T) {
	s := NewT(t)
	u1 := s.SendText(1, "a")
	u2 := s.SendCommand(1, "start", "giftcards")
	u3 := s.PushUpdate(types.Update{UpdateID: 5000, Message: &types.Message{MessageID: 77, Date: 1, Chat: types.Chat{ID: 3, Type: "private"}, Text: "raw"}})
	if !(u1.UpdateID < u2.UpdateID && u2.UpdateID < u3.UpdateID) || u3.UpdateID != 5000 {
		t.Fatalf("ids %d %d %d", u1.UpdateID, u2.UpdateID, u3.UpdateID)
	}
	if u2.Message.Text != "/start giftcards" || u2.Message.Entities[0].Type != "bot_command" || u2.Message.Entities[0].Length != 6 {
		t.Errorf("command message = %+v", u2.Message)
	}

	_, ups, _ := poll(t, s, map[string]any{})
	if len(ups) != 3 {
		t.Fatalf("got %d updates, want 3", len(ups))
	}
	_, ups, _ = poll(t, s, map[string]any{"offset": u2.UpdateID, "limit": 1})
	if len(ups) != 1 || ups[0].UpdateID != u2.UpdateID || s.PendingUpdates() != 2 {
		t.Errorf("offset u2 limit 1: %+v, pending %d", ups, s.PendingUpdates())
	}
	_, ups, _ = poll(t, s, map[string]any{"offset": -1})
	if len(ups) != 1 || ups[0].UpdateID != 5000 {
		t.Errorf("offset -1: %+v", ups)
	}
	_, ups, _ = poll(t, s, map[string]any{"offset": 5001})
	if len(ups) != 0 || s.PendingUpdates() != 0 {
		t.Errorf("after confirming all: %+v, pending %d", ups, s.PendingUpdates())
	}
	if u := s.SendText(1, "b"); u.UpdateID != 5001 {
		t.Errorf("next id after an explicit one = %d, want 5001", u.UpdateID)
	}
}

func TestGetUpdatesLongPoll(t *testing.T) {
	s := NewT(t)

	t.Run("returns as soon as an update arrives", func(t *testing.T) {
		done := make(chan []types.Update)
		go func() {
			_, ups, _ := poll(t, s, map[string]any{"timeout": 50})
			done <- ups
		}()
		waitPolling(t, s, 1)
		u := s.SendText(7, "hello")
		select {
		case ups := <-done:
			if len(ups) != 1 || ups[0].UpdateID != u.UpdateID || ups[0].Message.Text != "hello" {
				t.Errorf("updates = %+v", ups)
			}
		case <-ctxTimeout(t, 10*time.Second).Done():
			t.Fatal("long poll did not return")
		}
		poll(t, s, map[string]any{"offset": u.UpdateID + 1})
	})

	t.Run("ends when the client goes away", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		b, err := bot.New(s.Token(), bot.WithServerURL(s.URL()), bot.WithSkipGetMe())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Start(ctx) // go-telegram/bot polls with timeout=59
		}()
		waitPolling(t, s, 1)
		cancel()
		<-done
		waitPolling(t, s, 0)
	})

	t.Run("a newer poll ends the waiting one with 409", func(t *testing.T) {
		first := make(chan apiAnswer)
		go func() {
			_, _, a := poll(t, s, map[string]any{"timeout": 50})
			first <- a
		}()
		waitPolling(t, s, 1)
		_, _, second := poll(t, s, map[string]any{})
		a := <-first
		if !second.OK || a.OK || a.ErrorCode != 409 || a.Description != errOtherPoller {
			t.Errorf("first = %+v, second = %+v", a, second)
		}
	})

	t.Run("conflicts with an active webhook", func(t *testing.T) {
		postJSON(t, s, "setWebhook", map[string]any{"url": "https://shop.example/hook"})
		status, _, a := poll(t, s, map[string]any{})
		if status != 409 || a.Description != errWebhookActive {
			t.Errorf("status %d %+v", status, a)
		}
		postJSON(t, s, "deleteWebhook", map[string]any{})
	})

	t.Run("returns empty after the timeout", func(t *testing.T) {
		_, ups, a := poll(t, s, map[string]any{"timeout": 1})
		if !a.OK || len(ups) != 0 {
			t.Errorf("answer %+v", a)
		}
	})

	t.Run("Close ends a long poll", func(t *testing.T) {
		s2 := NewT(t)
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, _ := http.NewRequest(http.MethodPost, s2.URL()+"/bot"+s2.Token()+"/getUpdates?timeout=50", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		waitPolling(t, s2, 1)
		s2.Close()
		<-done
	})
}

func TestGoTelegramReceivesUpdates(t *testing.T) {
	s := NewT(t)
	got := make(chan *models.Update, 10)
	b, err := bot.New(s.Token(), bot.WithServerURL(s.URL()), bot.WithSkipGetMe(),
		bot.WithDefaultHandler(func(_ context.Context, _ *bot.Bot, u *models.Update) { got <- u }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.Start(ctx)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()

	s.SetUser(42, types.User{FirstName: "Ann", Username: "ann", LanguageCode: "ru"})
	msg, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 42, Text: "Menu",
		ReplyMarkup: keyboard([]models.InlineKeyboardButton{{Text: "Stars", CallbackData: "1:n:stars"}})})
	if err != nil {
		t.Fatal(err)
	}
	s.SendCommand(42, "/start", "")
	if _, err := s.PressButton(42, msg.ID, "Stars"); err != nil {
		t.Fatal(err)
	}
	s.SendPhoto(42, "receipt")

	// go-telegram/bot handles each update in its own goroutine, so they
	// reach the handler in any order.
	wait := ctxTimeout(t, 10*time.Second)
	var cmd, photo *models.Message
	var cb *models.CallbackQuery
	for range 3 {
		select {
		case u := <-got:
			switch {
			case u.CallbackQuery != nil:
				cb = u.CallbackQuery
			case u.Message != nil && len(u.Message.Photo) > 0:
				photo = u.Message
			case u.Message != nil:
				cmd = u.Message
			}
		case <-wait.Done():
			t.Fatal("missing updates")
		}
	}
	if cmd == nil || cmd.Text != "/start" || cmd.From.LanguageCode != "ru" || cmd.Chat.Username != "ann" {
		t.Errorf("command message = %+v", cmd)
	}
	if cb == nil || cb.Data != "1:n:stars" || cb.Message.Message == nil ||
		cb.Message.Message.ID != msg.ID || cb.Message.Message.ReplyMarkup == nil {
		t.Fatalf("callback query = %+v", cb)
	}
	if ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cb.ID}); err != nil || !ok {
		t.Errorf("answer = %v, %v", ok, err)
	}
	if photo == nil || photo.Caption != "receipt" {
		t.Errorf("photo message = %+v", photo)
	}
	// A press on an unknown message arrives as an inaccessible message.
	s.Press(42, 999, "x")
	select {
	case u := <-got:
		if u.CallbackQuery == nil || u.CallbackQuery.Message.InaccessibleMessage == nil {
			t.Errorf("unknown message press = %+v", u)
		}
	case <-wait.Done():
		t.Fatal("missing update")
	}
}

func TestWebhookDelivery(t *testing.T) {
	s := NewT(t)
	type delivery struct {
		secret string
		ctype  string
		update types.Update
	}
	got := make(chan delivery, 10)
	status := http.StatusOK
	var mu sync.Mutex
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var u types.Update
		if err := json.Unmarshal(body, &u); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
		got <- delivery{secret: r.Header.Get("X-Telegram-Bot-Api-Secret-Token"), ctype: r.Header.Get("Content-Type"), update: u}
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
	}))
	defer hook.Close()

	code, err := s.DeliverWebhook(t.Context(), hook.URL, "s3cr3t", types.Update{Message: &types.Message{MessageID: 1, Date: 1, Chat: types.Chat{ID: 5, Type: "private"}, Text: "hi"}})
	if err != nil || code != 200 {
		t.Fatalf("deliver = %d, %v", code, err)
	}
	d := <-got
	if d.secret != "s3cr3t" || d.ctype != "application/json" || d.update.UpdateID == 0 || d.update.Message.Text != "hi" {
		t.Errorf("delivery = %+v", d)
	}
	if _, err := s.DeliverWebhook(t.Context(), hook.URL, "", types.Update{Message: &types.Message{MessageID: 2, Date: 1, Chat: types.Chat{ID: 5, Type: "private"}, Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.secret != "" {
		t.Errorf("secret header sent without a secret: %q", d.secret)
	}

	s.SendText(5, "one")
	s.SendText(5, "two")
	n, err := s.DeliverPending(t.Context(), hook.URL, "s3cr3t")
	if err != nil || n != 2 || s.PendingUpdates() != 0 {
		t.Errorf("DeliverPending = %d, %v, pending %d", n, err, s.PendingUpdates())
	}
	<-got
	<-got

	mu.Lock()
	status = http.StatusInternalServerError
	mu.Unlock()
	s.SendText(5, "three")
	n, err = s.DeliverPending(t.Context(), hook.URL, "s3cr3t")
	<-got
	if err == nil || n != 0 || s.PendingUpdates() != 1 {
		t.Errorf("DeliverPending to a failing hook = %d, %v, pending %d", n, err, s.PendingUpdates())
	}
}

func TestPushUpdateJSON(t *testing.T) {
	s := NewT(t)
	id, err := s.PushUpdateJSON([]byte(`{"my_chat_member":{"chat":{"id":5,"type":"private"},"from":{"id":5,"is_bot":false,"first_name":"A"},"date":1,
		"old_chat_member":{"status":"member","user":{"id":1,"is_bot":true,"first_name":"B"}},
		"new_chat_member":{"status":"kicked","user":{"id":1,"is_bot":true,"first_name":"B"},"until_date":0}}}`))
	if err != nil || id == 0 {
		t.Fatalf("push = %d, %v", id, err)
	}
	_, err = s.PushUpdateJSON([]byte(`{"message":{"message_id":1,"chat":{"id":5,"type":"private"}}}`))
	if err == nil || err.Error() != "PushUpdateJSON: message.date: missing required field (Message)" {
		t.Errorf("err = %v", err)
	}
}

func TestCallsWaitAndSubscribe(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	sub, cancelSub := s.Subscribe()
	ctx := ctxTimeout(t, 10*time.Second)

	go func() {
		for _, text := range []string{"one", "two", "three"} {
			if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: text}); err != nil {
				t.Error(err)
			}
		}
	}()
	got, err := s.WaitFor(ctx, "sendMessage", 3)
	if err != nil || len(got) != 3 {
		t.Fatalf("WaitFor = %d calls, %v", len(got), err)
	}
	c, err := s.WaitForCall(ctx, func(c calls.Call) bool { return c.String("text") == "two" })
	if err != nil || c.Method != "sendMessage" {
		t.Errorf("WaitForCall = %+v, %v", c, err)
	}
	for _, want := range []string{"one", "two", "three"} {
		if c := <-sub; c.String("text") != want {
			t.Errorf("subscribed call text = %q, want %q", c.String("text"), want)
		}
	}
	cancelSub()
	if _, ok := <-sub; ok {
		t.Errorf("channel still open after cancel")
	}

	s.Reset()
	if len(s.Calls()) != 0 {
		t.Errorf("Reset kept calls")
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := s.WaitFor(short, "sendMessage", 1); err == nil {
		t.Errorf("WaitFor after Reset returned without calls")
	}
}

// A subscriber sees what the server answered: the stored message of a send
// or an edit (its id, parsed text and keyboard), nothing for an error.
func TestSubscribedCallsCarryTheResult(t *testing.T) {
	s := NewT(t)
	b := newBot(t, s)
	calls, cancelSub := s.Subscribe()
	defer cancelSub()
	ctx := ctxTimeout(t, 10*time.Second)

	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 7, Text: "<b>Hi</b> &amp; bye", ParseMode: "HTML",
		ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "Go", CallbackData: "go"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 7, MessageID: sent.ID, Text: "Edited"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 7, MessageID: 999, Text: "Nope"}); err == nil {
		t.Fatal("edit of a missing message succeeded")
	}

	c := <-calls
	m, ok := c.Result.(types.Message)
	if c.Method != "sendMessage" || !ok || m.MessageID != sent.ID || m.Text != "Hi & bye" ||
		len(m.Entities) != 1 || m.Entities[0].Type != "bold" || len(m.ReplyMarkup.Buttons()) != 1 {
		t.Fatalf("send: %s result %#v", c.Method, c.Result)
	}
	c = <-calls
	m, ok = c.Result.(types.Message)
	if c.Method != "editMessageText" || !ok || m.MessageID != sent.ID || m.Text != "Edited" || m.EditDate == 0 || m.ReplyMarkup != nil {
		t.Fatalf("edit: %s result %#v", c.Method, c.Result)
	}
	if c = <-calls; c.OK() || c.Result != nil {
		t.Fatalf("failed edit: code %d result %#v", c.ErrorCode, c.Result)
	}
}
