package intake

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"shopbot/state/redisstore"

	"shopbot/state/statetest"
)

// An update batch whose writes the replica does not confirm is not
// acknowledged: Accept returns ErrNotDurable (Telegram delivers it again),
// although it is stored; the redelivery, once the replica is back, is
// dropped as seen and confirmed.
func TestAcceptNotConfirmedByTheReplicaIsNotAcknowledged(t *testing.T) {
	master := statetest.StartServer(t)
	replica := statetest.StartServer(t, "--replicaof", "127.0.0.1", itoa(int64(master.Port)))
	ctx := context.Background()
	master.Client.Set(ctx, "t:ready", "1", 0)
	statetest.WaitFor(t, "the replica to receive writes", func() bool {
		s, err := master.Client.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(s, "state=online") && replica.Client.Exists(ctx, "t:ready").Val() == 1
	})
	q := NewQueue(master.Client, "t:")
	q.Durable = redisstore.NewDurability(master.Client, "t:", redisstore.WithSyncTimeout(300*time.Millisecond))
	ups := []Update{{ID: 1, Chat: 10, Body: []byte(`{}`)}, {ID: 2, Chat: 11, Body: []byte(`{}`)}}
	if n, err := q.Accept(ctx, ups, time.Now()); err != nil || n != 2 {
		t.Fatalf("Accept with the replica up: %d %v", n, err)
	}
	if err := replica.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	more := []Update{{ID: 3, Chat: 10, Body: []byte(`{}`)}}
	if _, err := q.Accept(ctx, more, time.Now()); !errors.Is(err, redisstore.ErrNotDurable) {
		t.Fatalf("Accept with the replica stopped: %v, want ErrNotDurable", err)
	}
	if err := replica.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Accept(ctx, more, time.Now()); err != nil || n != 0 {
		t.Fatalf("the redelivery: %d new, %v; want 0 new, confirmed", n, err)
	}
	if v := replica.Client.LLen(ctx, q.chatKeys(10)[2]).Val(); v != 2 {
		t.Fatalf("the replica has %d updates of chat 10, want 2", v)
	}
}
