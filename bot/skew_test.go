package bot_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/state"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/intake"
)

// signalHandler sends on to each time a record with message msg is logged.
type signalHandler struct {
	msg string
	to  chan<- struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.to <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// While a replica of a newer build runs, a chat whose conversation that
// build saved (a session version this one does not read) is left to it:
// put back untouched and in order, never answered or reset here. With no
// newer replica left (a rollback), this build resets it politely.
func TestAConversationOfANewerVersionWaitsForANewerReplica(t *testing.T) {
	h := newHarness(t)
	left := make(chan struct{}, 1)
	b := h.newBot(func(o *storefront.Options) {
		o.Logger = slog.New(signalHandler{msg: "update left for a replica of a newer version", to: left})
	})
	ctx := context.Background()
	reg := redisstore.NewReplicas(h.rdb.Client, h.rdb.Prefix)
	newer := redisstore.Replica{ID: "newer-1", Version: "next", Gen: state.SchemaGen + 1, MinPeer: state.SchemaGen, Started: time.Now()}
	if err := reg.Beat(ctx, newer, time.Now()); err != nil {
		t.Fatal(err)
	}
	q := intake.NewQueue(h.rdb.Client, h.rdb.Prefix)
	const doc = `{"v":99,"lang":"ru","flow":"gift","step":"note"}`
	h.rdb.Client.HSet(ctx, q.ConvKey(2), "rev", 7, "doc", doc)
	h.run(b)
	h.fake.SendCommand(2, "help", "")
	h.fake.SendCommand(1, "help", "")
	h.wait("sendMessage", 1)
	for range 2 { // left, claimed again, left again
		select {
		case <-left:
		case <-time.After(bottestWait):
			t.Fatal("the update was not left for the newer replica")
		}
	}
	if m := h.fake.MessagesIn(2); len(m) != 0 {
		t.Fatalf("answered a chat of a newer version: %+v", m)
	}
	if rev, got, _ := b.Queue.Conversation(ctx, 2); rev != 7 || string(got) != doc {
		t.Fatalf("the conversation changed: rev %d %s", rev, got)
	}
	// The newer replicas are gone: this build handles the chat itself.
	if err := reg.Leave(ctx, newer.ID); err != nil {
		t.Fatal(err)
	}
	m := h.WaitText(2, locales.T(locales.Ru, "err.session_reset"))
	if m.RawText != locales.T(locales.Ru, "err.session_reset") {
		t.Fatalf("reset notice %q", m.RawText)
	}
}

// bottestWait bounds a wait for an event that must come.
const bottestWait = 30 * time.Second
