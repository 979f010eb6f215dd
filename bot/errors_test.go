package bot_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"shopbot/bot/storefront"
	"shopbot/flows"
)

// TestButtonHandlerErrorAnswersThePressOnce: a handler failing on a button
// press gets one callback answer (Telegram refuses a second) and the
// apology message.
func TestButtonHandlerErrorAnswersThePressOnce(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	b.Engine.HandleButton("boom", func(context.Context, *flows.Env, *flows.Session, flows.Event) (*flows.Reply, error) {
		return nil, errors.New("the handler failed")
	})
	h.run(b)
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	h.idle(b)
	data, err := flows.EncodeCallback(flows.GlobalNonce, "boom", "")
	if err != nil {
		t.Fatal(err)
	}
	q := h.fake.Press(chat, h.menu().MessageID, data)
	if a := h.waitAnswer(q); a.Text != en("err.internal_short") {
		t.Fatalf("answer %q", a.Text)
	}
	h.waitText(chat, en("err.internal"))
	h.idle(b)
	n := 0
	for _, c := range h.fake.CallsFor("answerCallbackQuery") {
		if c.String("callback_query_id") == q {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the press was answered %d times", n)
	}
	h.noViolations()
}

// TestSetMyCommandsFailureIsRetriedNotFatal: the bot starts although
// setMyCommands fails, and sets the menu on a later try.
func TestSetMyCommandsFailureIsRetriedNotFatal(t *testing.T) {
	h := newHarness(t)
	h.fake.FailNext("setMyCommands", 1, 400, "Bad Request: command description is invalid", 0)
	b := h.newBot(func(o *storefront.Options) { o.CommandsRetry = time.Millisecond })
	h.run(b)
	// Serving: /start is answered while the menu is not set yet or being retried.
	h.fake.SendCommand(chat, "start", "")
	h.wait("sendMessage", 1)
	// 1 refused call, then (retried) the default scope and 3 languages.
	h.wait("setMyCommands", 1+4)
	h.noViolations()
}
