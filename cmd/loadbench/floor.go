package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/state/redisstore"
)

// runFloor is the floor the shop is measured against: a go-telegram/bot
// webhook bot that answers every press the way a menu bot must (the
// callback answer and the edited menu, the same two calls the shop makes)
// and does one Redis GET and one SET per update, nothing else. Settings
// come from the environment the benchmark sets.
func runFloor() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := redisstore.Endpoint{Mode: redisstore.ModeSingle, URL: os.Getenv("REDIS_URL")}
	if u := os.Getenv("REDIS_CLUSTER_URL"); u != "" {
		e = redisstore.Endpoint{Mode: redisstore.ModeCluster, URL: u}
	}
	rdb, _, err := redisstore.NewClient(e)
	if err != nil {
		return err
	}
	defer rdb.Close()
	menu := &models.InlineKeyboardMarkup{}
	for i := range lines {
		menu.InlineKeyboard = append(menu.InlineKeyboard, []models.InlineKeyboardButton{{Text: fmt.Sprintf("Line %d", i+1), CallbackData: "l:" + strconv.Itoa(i)}})
	}
	back := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: backLabel, CallbackData: "back"}}}}
	handler := func(ctx context.Context, b *tgbot.Bot, u *models.Update) {
		var chat int64
		switch {
		case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
			chat = u.CallbackQuery.Message.Message.Chat.ID
		case u.Message != nil:
			chat = u.Message.Chat.ID
		default:
			return
		}
		key := "floor:" + strconv.FormatInt(chat, 10)
		n, _ := rdb.Get(ctx, key).Int()
		_ = rdb.Set(ctx, key, n+1, time.Hour).Err()
		if u.Message != nil {
			_, _ = b.SendMessage(ctx, &tgbot.SendMessageParams{ChatID: chat, Text: "Menu", ReplyMarkup: menu})
			return
		}
		q := u.CallbackQuery
		_, _ = b.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: q.ID})
		text, kb := "Line "+q.Data, back
		if q.Data == "back" {
			text, kb = "Menu "+strconv.Itoa(n), menu
		}
		_, _ = b.EditMessageText(ctx, &tgbot.EditMessageTextParams{ChatID: chat, MessageID: q.Message.Message.ID, Text: text, ReplyMarkup: kb})
	}
	b, err := tgbot.New(os.Getenv("TELEGRAM_TOKEN"),
		tgbot.WithServerURL(os.Getenv("TELEGRAM_API_URL")), tgbot.WithSkipGetMe(),
		tgbot.WithWebhookSecretToken(os.Getenv("WEBHOOK_SECRET")),
		tgbot.WithDefaultHandler(handler),
	)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: os.Getenv("HTTP_ADDR"), Handler: b.WebhookHandler(), ReadHeaderTimeout: 10 * time.Second}
	go b.StartWebhook(ctx)
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
