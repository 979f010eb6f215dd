package bot_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"shopbot/bot"
	"shopbot/flows"
)

// TestButtonHandlerErrorAnswersThePressOnce: a handler failing on a button
// press gets one callback answer (Telegram refuses a second) and the
// apology message.
func TestButtonHandlerErrorAnswersThePressOnce(t *testing.T) {
	h := newHarness(t)
	b := h.NewBot(nil)
	b.Engine.HandleButton("boom", func(context.Context, *flows.Env, *flows.Session, flows.Event) (*flows.Reply, error) {
		return nil, errors.New("the handler failed")
	})
	h.Run(b)
	h.Fake.SendCommand(chat, "start", "")
	h.Wait("sendMessage", 1)
	h.Idle(b)
	data, err := flows.EncodeCallback(flows.GlobalNonce, "boom", "")
	if err != nil {
		t.Fatal(err)
	}
	q := h.Fake.Press(chat, h.Menu().MessageID, data)
	if a := h.WaitAnswer(q); a.Text != en("err.internal_short") {
		t.Fatalf("answer %q", a.Text)
	}
	h.WaitText(chat, en("err.internal"))
	h.Idle(b)
	n := 0
	for _, c := range h.Fake.CallsFor("answerCallbackQuery") {
		if c.String("callback_query_id") == q {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the press was answered %d times", n)
	}
	h.NoViolations()
}

// TestSetMyCommandsFailureIsRetriedNotFatal: the bot starts although
// setMyCommands fails, and sets the menu on a later try.
func TestSetMyCommandsFailureIsRetriedNotFatal(t *testing.T) {
	h := newHarness(t)
	h.Fake.FailNext("setMyCommands", 1, 400, "Bad Request: command description is invalid", 0)
	b := h.NewBot(func(o *bot.Options) { o.CommandsRetry = time.Millisecond })
	h.Run(b)
	// Serving: /start is answered while the menu is not set yet or being retried.
	h.Fake.SendCommand(chat, "start", "")
	h.Wait("sendMessage", 1)
	// 1 refused call, then (retried) the default scope and 3 languages.
	h.Wait("setMyCommands", 1+4)
	h.NoViolations()
}
