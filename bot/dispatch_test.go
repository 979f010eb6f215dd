package bot_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/state/redisstore/intake"
)

// dispatchClock is a dispatcher clock (Options.Now) the test moves by hand.
type dispatchClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *dispatchClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *dispatchClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A chat ready without a hint (here stored by another replica; in a
// saturated one, a chat whose hint found the hint channel full or whose
// streak ended) is claimed by a shard scan within about IdlePoll, even
// while every turn of the one worker has a fresh hint of another chat
// waiting: it does not wait for the hints to pause. The hinted chats share
// the waiting chat's shard and are newer, so the first scan takes it.
func TestChatReadyWithoutAHintIsServedWhileHintsKeepComing(t *testing.T) {
	h := newHarness(t)
	clk := &dispatchClock{t: time.Now()}
	const idlePoll = 10 * time.Millisecond
	b := h.newBot(func(o *storefront.Options) { o.Workers, o.Now, o.IdlePoll = 1, clk.Now, idlePoll })
	started, release := make(chan int64, 64), make(chan struct{})
	b.SetTestHook(func(u *models.Update) {
		if u.Message != nil {
			started <- u.Message.Chat.ID
			<-release
		}
	})
	hinted := make(chan []int64, 64)
	stored := b.Queue.Stored
	b.Queue.Stored = func(chats []int64) { stored(chats); hinted <- chats }
	h.run(b)
	t.Cleanup(func() { close(release) }) // before the bot stops: it waits for the held updates

	const waiting = int64(777)
	var others []int64 // chats of the waiting chat's shard
	for c := int64(1000); len(others) < 12; c++ {
		if b.Queue.ShardTag(c) == b.Queue.ShardTag(waiting) {
			others = append(others, c)
		}
	}
	send := func(c int64) { // a hinted update of chat c
		t.Helper()
		h.fake.SendCommand(c, "help", "")
		for {
			select {
			case chats := <-hinted:
				if slices.Contains(chats, c) {
					return
				}
			case <-time.After(bottest.WaitLimit):
				t.Fatalf("chat %d's update was never stored", c)
			}
		}
	}
	next := func() int64 { // the chat the worker starts on next
		t.Helper()
		select {
		case c := <-started:
			return c
		case <-time.After(bottest.WaitLimit):
			t.Fatal("the worker never started another update")
			return 0
		}
	}

	// The one worker is busy with a hinted chat.
	send(others[0])
	if c := next(); c != others[0] {
		t.Fatalf("started chat %d, want %d", c, others[0])
	}
	// Another replica stores an update of the waiting chat: no hint here.
	u := h.fake.TextUpdate(waiting, "/help")
	raw, _ := json.Marshal(u)
	q := intake.NewQueue(h.rdb.Client, h.rdb.Prefix)
	if _, err := q.Accept(context.Background(), []intake.Update{{ID: u.UpdateID, Chat: waiting, Body: raw}}, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Millisecond) // the hinted chats are newer

	// Each turn another chat's hint waits when the worker frees up, and
	// IdlePoll passes.
	const bound = 3
	for turn := 1; turn < len(others); turn++ {
		send(others[turn])
		clk.Add(idlePoll)
		release <- struct{}{}
		if c := next(); c == waiting {
			if turn > bound {
				t.Fatalf("the chat without a hint was served on turn %d, want within %d", turn, bound)
			}
			return
		}
	}
	t.Fatalf("the chat without a hint was not served in %d turns of hinted chats", len(others)-1)
}
