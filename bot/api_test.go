package bot_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	tgbot "github.com/go-telegram/bot"

	"shopbot/bot"
	"shopbot/state/redisstore/work"
)

// Buyers pressing as fast as they like, in many chats at once, get every
// answer without the bot waiting for any local limiter; a delivery the
// shop starts is still paced per chat.
func TestRepliesNeverWaitForALocalLimiter(t *testing.T) {
	h := newHarness(t)
	b := h.newBot(nil)
	clock := fakePace(b.API)
	h.run(b)
	const chats, each = 40, 10
	for i := range chats * each {
		h.fake.SendCommand(int64(i%chats+1), "help", "")
	}
	h.WaitWithin(time.Minute, "sendMessage", chats*each) // 400 updates take seconds on a loaded machine
	h.idle(b)
	if slept := clock.Slept(); len(slept) != 0 {
		t.Fatalf("replies waited %v", slept)
	}
	for range 6 {
		if _, err := b.Send(context.Background(), 1, "your code", nil); err != nil {
			t.Fatal(err)
		}
	}
	var paced time.Duration
	for _, d := range clock.Slept() {
		paced += d
	}
	if paced < 2*time.Second { // a burst of 3, then one a second
		t.Fatalf("six deliveries to one chat waited %v in all", paced)
	}
}

// A 429 on one replica pauses the other replica's calls to that chat (a
// reply included), and only to that chat.
func TestA429OnOneReplicaPausesTheOtherReplicasCallsToThatChat(t *testing.T) {
	h := newHarness(t)
	first, second := h.newBot(nil), h.newBot(nil)
	fakePace(first.API)
	clock := fakePace(second.API)
	h.run(first)
	h.run(second)
	select {
	case <-second.FloodsReady():
	case <-time.After(10 * time.Second):
		t.Fatal("the second replica never subscribed to flood waits")
	}
	const flooded, other = 7, 8
	h.fake.FailNext("sendMessage", 1, 429, "", 5)
	ctx := context.Background()
	if _, err := first.Send(ctx, flooded, "one", nil); err != nil {
		t.Fatal(err)
	}
	if !h.until(func() bool { return !second.API.FloodUntil(flooded).IsZero() }) {
		t.Fatal("the second replica never heard of the flood wait")
	}
	if !second.API.FloodUntil(other).IsZero() {
		t.Fatal("a flood wait of one chat paused another chat")
	}
	if _, err := second.Send(bot.WithClass(ctx, bot.Reply), other, "two", nil); err != nil {
		t.Fatal(err)
	}
	if slept := clock.Slept(); len(slept) != 0 {
		t.Fatalf("a call to another chat waited %v", slept)
	}
	// A reply to the flooded chat does not wait in its caller: it is held
	// and goes out once the wait is over.
	if _, err := second.Send(bot.WithClass(ctx, bot.Reply), flooded, "three", nil); !errors.Is(err, bot.ErrFlooded) {
		t.Fatalf("a reply to the flooded chat: %v, want ErrFlooded", err)
	}
	if !h.until(func() bool {
		for _, c := range h.fake.CallsFor("sendMessage") {
			if c.OK() && c.String("text") == "three" {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the held reply never went out")
	}
	slept := clock.Slept()
	if len(slept) != 1 || slept[0] < 4*time.Second || slept[0] > 5*time.Second {
		t.Fatalf("the held reply waited %v, want about 5 s", slept)
	}
}

func newTestAPI() (*bot.API, *fakeClock) {
	a := bot.NewAPI(nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, "", "")
	return a, fakePace(a)
}

// Broadcast messages never exceed 25 a second, and replies sent between
// them never wait.
func TestBroadcastsNeverExceedTheirPace(t *testing.T) {
	a, clock := newTestAPI()
	bulk := bot.WithClass(context.Background(), bot.Bulk)
	reply := bot.WithClass(context.Background(), bot.Reply)
	var sent []time.Time
	for chat := range int64(200) {
		err := a.Do(bulk, "sendMessage", chat+1, func(context.Context) error { sent = append(sent, clock.Now()); return nil })
		if err != nil {
			t.Fatal(err)
		}
		before := len(clock.Slept())
		if err := a.Do(reply, "editMessageText", 1000+chat, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if len(clock.Slept()) != before {
			t.Fatal("a reply waited behind the broadcast")
		}
	}
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	for i := range sent {
		k := i
		for k < len(sent) && sent[k].Sub(sent[i]) < time.Second {
			k++
		}
		if k-i > bot.BroadcastRate {
			t.Fatalf("%d broadcast messages within one second", k-i)
		}
	}
	if span := sent[len(sent)-1].Sub(sent[0]); span < 199*time.Second/bot.BroadcastRate {
		t.Fatalf("200 messages in %v", span)
	}
}

// When Telegram refuses several chats at once, it is refusing the bot: the
// whole bot waits, not only those chats. (Each call stops at its first
// 429 here, so the three refusals fall within a second on the real clock.)
func TestManyChatsRefusedAtOncePauseTheWholeBot(t *testing.T) {
	a := bot.NewAPI(nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, "", "")
	for chat := range int64(3) {
		ctx, cancel := context.WithCancel(context.Background())
		err := a.Do(ctx, "sendMessage", chat+1, func(context.Context) error {
			cancel() // give up instead of waiting out the retry_after
			return &tgbot.TooManyRequestsError{Message: "Too Many Requests", RetryAfter: 3}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if chat < 2 && !a.FloodUntil(99).IsZero() {
			t.Fatalf("after %d refused chats the whole bot waits", chat+1)
		}
	}
	if a.FloodUntil(99).IsZero() {
		t.Fatal("three chats refused within a second did not pause the bot")
	}
}

// A 429 answered to every retry ends the call with an error, not a loop.
func TestEndless429GivesUp(t *testing.T) {
	a, _ := newTestAPI()
	err := a.Do(context.Background(), "sendMessage", 1, func(context.Context) error {
		return &tgbot.TooManyRequestsError{Message: "Too Many Requests", RetryAfter: 1}
	})
	var tooMany *tgbot.TooManyRequestsError
	if !errors.As(err, &tooMany) {
		t.Fatalf("err = %v", err)
	}
}

// A chat refused after a burst of its own messages is at its own limit:
// many such chats at once do not pause the whole bot (which would make
// every other buyer wait for their floods).
func TestChatsRefusedAfterTheirOwnBurstsDoNotPauseTheBot(t *testing.T) {
	a, _ := newTestAPI()
	reply := bot.WithClass(context.Background(), bot.Reply)
	for chat := range int64(20) {
		for range 3 {
			if err := a.Do(reply, "sendMessage", chat+1, func(context.Context) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		// A photo: not held for later (outbox.go), so nothing else runs.
		err := a.Do(reply, "sendPhoto", chat+1, func(context.Context) error {
			return &tgbot.TooManyRequestsError{Message: "Too Many Requests", RetryAfter: 10}
		})
		if !errors.Is(err, bot.ErrFlooded) {
			t.Fatalf("err = %v, want ErrFlooded", err)
		}
	}
	if !a.FloodUntil(99).IsZero() {
		t.Fatal("chats at their own limits paused the whole bot")
	}
	if a.FloodUntil(1).IsZero() {
		t.Fatal("the refused chat does not wait")
	}
}

// The answer to a pre-checkout query, due within Telegram's 10 s, is tried
// at once even while the whole bot waits out a flood wait: it is no
// message.
func TestPreCheckoutAnswerDoesNotWaitForTheBotsFloodWait(t *testing.T) {
	a, clock := newTestAPI()
	a.Flooded(work.FloodAll, clock.Now().Add(30*time.Second))
	answered := false
	err := a.Do(bot.WithClass(context.Background(), bot.Reply), "answerPreCheckoutQuery", 0, func(context.Context) error {
		answered = true
		return nil
	})
	if err != nil || !answered {
		t.Fatalf("answer: %v", err)
	}
	if slept := clock.Slept(); len(slept) != 0 {
		t.Fatalf("the answer waited %v", slept)
	}
}
