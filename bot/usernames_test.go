package bot_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/bot"
	"shopbot/bot/botapitest/types"
	"shopbot/bot/storefront"
)

// keyHook counts the Redis commands that name a key containing part (a
// pipeline's commands each).
type keyHook struct {
	part string
	mu   sync.Mutex
	n    int
}

func (h *keyHook) count(cmds ...redis.Cmder) {
	for _, c := range cmds {
		for _, a := range c.Args() {
			if s, ok := a.(string); ok && strings.Contains(s, h.part) {
				h.mu.Lock()
				h.n++
				h.mu.Unlock()
				break
			}
		}
	}
}
func (h *keyHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *keyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.count(cmd); return next(ctx, cmd) }
}
func (h *keyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.count(cmds...); return next(ctx, cmds) }
}
func (h *keyHook) take() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.n
	h.n = 0
	return n
}

// A buyer's @username is recorded from their updates and kept current: the
// first update writes it, further updates with the same name write nothing
// (no Redis command touches the usernames), a new name is written by the
// next update (the old one no longer finds them), a record older than a
// day is written again, and a name given up and taken by another buyer
// finds the new buyer.
func TestUsernameRecordedOnlyWhenItChanges(t *testing.T) {
	h := newHarness(t)
	hook := &keyHook{part: "{users}:uname"}
	h.rdb.Client.AddHook(hook)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := h.newBot(func(o *storefront.Options) { o.Now = clock })
	h.run(b)
	ctx := context.Background()
	find := func(name string) int64 {
		t.Helper()
		id, _, err := b.Users.ByUsername(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	// send sends a message and waits until the bot answered it and is idle.
	send := func(from int64, text string) {
		t.Helper()
		before := len(h.BotMessages(from))
		h.fake.SendText(from, text)
		h.until(func() bool { return len(h.BotMessages(from)) > before })
		h.idle(b)
	}

	h.fake.SetUser(chat, types.User{FirstName: "Alice", Username: "Alice_1", LanguageCode: "en"})
	send(chat, "/start")
	if id := find("@alice_1"); id != chat {
		t.Fatalf("@alice_1 finds %d, want %d", id, chat)
	}
	hook.take()
	for i := range 5 {
		send(chat, "hello "+string(rune('a'+i)))
	}
	h.idle(b)
	if n := hook.take(); n != 0 {
		t.Fatalf("5 updates with the same username ran %d commands on the usernames, want 0", n)
	}

	h.fake.SetUser(chat, types.User{FirstName: "Alice", Username: "Alice_2", LanguageCode: "en"})
	send(chat, "renamed")
	h.idle(b)
	if n := hook.take(); n != 1 {
		t.Fatalf("the rename ran %d commands on the usernames, want 1", n)
	}
	if find("alice_2") != chat || find("alice_1") != 0 {
		t.Fatalf("after the rename: alice_2 finds %d, alice_1 %d", find("alice_2"), find("alice_1"))
	}
	hook.take()

	mu.Lock()
	now = now.Add(bot.UsernameRefresh + time.Minute)
	mu.Unlock()
	send(chat, "a day later")
	send(chat, "and again")
	h.idle(b)
	if n := hook.take(); n != 1 {
		t.Fatalf("a day later two updates ran %d commands on the usernames, want 1 (the refresh)", n)
	}

	// Alice gives the name up; another buyer takes it.
	const other = chat + 1
	h.fake.SetUser(other, types.User{FirstName: "Bob", Username: "ALICE_2", LanguageCode: "en"})
	send(other, "/start")
	if id := find("alice_2"); id != other {
		t.Fatalf("@alice_2 finds %d after the other buyer took it, want %d", id, other)
	}
	if name, _ := b.Users.Username(ctx, chat); name != "" {
		t.Fatalf("the old holder still shows @%s", name)
	}
}
