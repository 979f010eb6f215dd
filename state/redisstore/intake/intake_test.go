package intake_test

import (
	"errors"
	"testing"
	"time"

	"shopbot/state/redisstore/intake"

	"shopbot/state/statetest"
)

func newQueue(t *testing.T) *intake.Queue {
	r := statetest.New(t)
	return intake.NewQueue(r.Client, r.Prefix)
}

func TestDuplicateUpdateIsAcceptedOnce(t *testing.T) {
	q := newQueue(t)
	now := time.Now()
	up := []intake.Update{{ID: 10, Chat: 1, Body: []byte(`{"update_id":10}`)}}
	n, err := q.Accept(t.Context(), up, now)
	if err != nil || n != 1 {
		t.Fatalf("first accept = %d, %v", n, err)
	}
	n, err = q.Accept(t.Context(), append(up, up...), now)
	if err != nil || n != 0 {
		t.Fatalf("duplicate accept = %d, %v; want 0", n, err)
	}
	c, err := q.Claim(t.Context(), now)
	if err != nil || c == nil || c.UpdateID != 10 {
		t.Fatalf("claim = %+v, %v", c, err)
	}
	if next, err := q.Done(t.Context(), c, false, nil, true, now); err != nil || next {
		t.Fatalf("done = %v, %v", next, err)
	}
	if c, _ := q.Claim(t.Context(), now); c != nil {
		t.Fatalf("a duplicate was queued: %+v", c)
	}
}

func TestQueueKeepsChatOrderAndExclusiveLease(t *testing.T) {
	q := newQueue(t)
	now := time.Now()
	var ups []intake.Update
	for i := int64(1); i <= 3; i++ {
		ups = append(ups, intake.Update{ID: i, Chat: 7, Body: []byte("a")}, intake.Update{ID: 100 + i, Chat: 8, Body: []byte("b")})
	}
	if _, err := q.Accept(t.Context(), ups, now); err != nil {
		t.Fatal(err)
	}
	a, _ := q.Claim(t.Context(), now)
	b, _ := q.Claim(t.Context(), now)
	if a == nil || b == nil || a.Chat == b.Chat {
		t.Fatalf("two claims should take two different chats: %+v %+v", a, b)
	}
	if c, _ := q.Claim(t.Context(), now); c != nil {
		t.Fatalf("a leased chat was claimed twice: %+v", c)
	}
	// Finishing a's head hands back the next update of the same chat, in order.
	first := a.UpdateID
	next, err := q.Done(t.Context(), a, true, []byte(`{"x":1}`), true, now)
	if err != nil || !next || a.UpdateID != first+1 || a.Rev != 1 || string(a.Doc) != `{"x":1}` {
		t.Fatalf("continuation = %v %v %+v", next, err, a)
	}
}

func TestCrashedWorkerLeaseExpiresAndUpdateIsHandledAgain(t *testing.T) {
	q := newQueue(t)
	now := time.Now()
	if _, err := q.Accept(t.Context(), []intake.Update{{ID: 5, Chat: 3, Body: []byte("x")}}, now); err != nil {
		t.Fatal(err)
	}
	dead, _ := q.Claim(t.Context(), now)
	if dead == nil {
		t.Fatal("no claim")
	}
	if c, _ := q.Claim(t.Context(), now.Add(q.Lease/2)); c != nil {
		t.Fatal("claimed while the lease is alive")
	}
	again, _ := q.Claim(t.Context(), now.Add(q.Lease+time.Millisecond))
	if again == nil || again.UpdateID != 5 || again.Attempts != 2 {
		t.Fatalf("after lease expiry = %+v", again)
	}
	if _, err := q.Done(t.Context(), dead, true, []byte("{}"), false, now); !errors.Is(err, intake.ErrLeaseLost) {
		t.Fatalf("the dead worker's save = %v, want ErrLeaseLost", err)
	}
}

func TestConversationCompareAndSet(t *testing.T) {
	r := statetest.New(t)
	q := intake.NewQueue(r.Client, r.Prefix)
	now := time.Now()
	_, _ = q.Accept(t.Context(), []intake.Update{{ID: 1, Chat: 9, Body: []byte("x")}, {ID: 2, Chat: 9, Body: []byte("y")}}, now)
	c, _ := q.Claim(t.Context(), now)
	c.Rev = 41 // pretend we loaded a revision that is not the stored one
	if _, err := q.Done(t.Context(), c, true, []byte("{}"), true, now); !errors.Is(err, intake.ErrConflict) {
		t.Fatalf("stale save = %v, want ErrConflict", err)
	}
	c, _ = q.Claim(t.Context(), now)
	if c == nil || c.UpdateID != 1 {
		t.Fatalf("after a conflict the update must stay queued: %+v", c)
	}
	if _, err := q.Done(t.Context(), c, true, []byte(`{"v":1}`), false, now); err != nil {
		t.Fatal(err)
	}
	rev, doc, err := q.Conversation(t.Context(), 9)
	if err != nil || rev != 1 || string(doc) != `{"v":1}` {
		t.Fatalf("conversation = %d %s %v", rev, doc, err)
	}
}

func TestExtendAndRelease(t *testing.T) {
	q := newQueue(t)
	now := time.Now()
	_, _ = q.Accept(t.Context(), []intake.Update{{ID: 1, Chat: 4, Body: []byte("x")}}, now)
	c, _ := q.Claim(t.Context(), now)
	later := now.Add(q.Lease - time.Second)
	if err := q.Extend(t.Context(), c, later); err != nil {
		t.Fatal(err)
	}
	if other, _ := q.Claim(t.Context(), now.Add(q.Lease+time.Second)); other != nil {
		t.Fatal("an extended lease was taken over")
	}
	if err := q.Release(t.Context(), c, later); err != nil {
		t.Fatal(err)
	}
	if again, _ := q.Claim(t.Context(), later); again == nil || again.UpdateID != 1 {
		t.Fatalf("released update not claimable: %+v", again)
	}
}

// Stored is told of new updates (so workers start at once), not of copies
// already stored.
func TestAcceptTellsStoredOfNewUpdatesOnly(t *testing.T) {
	q := newQueue(t)
	calls := 0
	q.Stored = func(chats []int64) {
		if len(chats) != 1 || chats[0] != 7 {
			t.Errorf("Stored(%v), want [7]", chats)
		}
		calls++
	}
	ctx := t.Context()
	up := intake.Update{ID: 41, Chat: 7, Body: []byte(`{"update_id":41}`)}
	if _, err := q.Accept(ctx, []intake.Update{up}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Accept(ctx, []intake.Update{up}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("Stored called %d times, want 1", calls)
	}
}

// One chat's queue holds MaxQueue updates: the ones over it are dropped and
// reported (a redelivery of one is a duplicate), except those marked Keep
// (payments), which are always queued, in order.
func TestChatQueueIsBounded(t *testing.T) {
	q := newQueue(t)
	now := time.Now()
	var dropped int
	q.Dropped = func(chat int64) {
		if chat != 9 {
			t.Errorf("dropped an update of chat %d", chat)
		}
		dropped++
	}
	const sent = 1000
	var kept []int64
	for start := int64(1); start <= sent; start += 100 {
		var ups []intake.Update
		for id := start; id < start+100; id++ {
			u := intake.Update{ID: id, Chat: 9, Body: []byte("x")}
			if id%250 == 0 {
				u.Keep = true
				kept = append(kept, id)
			}
			ups = append(ups, u)
		}
		if _, err := q.Accept(t.Context(), ups, now); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	for c, _ := q.Claim(t.Context(), now); c != nil; {
		got = append(got, c.UpdateID)
		next, err := q.Done(t.Context(), c, false, nil, true, now)
		if err != nil {
			t.Fatal(err)
		}
		if !next {
			break
		}
	}
	want := intake.DefaultMaxQueue + len(kept) // every kept one is past the bound
	if len(got) != want || dropped != sent-want {
		t.Fatalf("queued %d, dropped %d; want %d and %d", len(got), dropped, want, sent-want)
	}
	for i, id := range kept {
		if got[len(got)-len(kept)+i] != id {
			t.Fatalf("payment %d not queued in order: %v", id, got[len(got)-len(kept):])
		}
	}
	if n, _ := q.Accept(t.Context(), []intake.Update{{ID: sent - 1, Chat: 9, Body: []byte("x")}}, now); n != 0 {
		t.Fatal("a dropped update came back as new")
	}
}

// A deferred chat is claimed again only at its due time, and waiting does
// not count as attempts (many deferrals never make its update look
// poisoned).
func TestDeferredChatWaitsAndKeepsItsAttempts(t *testing.T) {
	q := newQueue(t)
	now := time.Now()
	if _, err := q.Accept(t.Context(), []intake.Update{{ID: 1, Chat: 4, Body: []byte("x")}}, now); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		c, err := q.Claim(t.Context(), now)
		if err != nil || c == nil || c.Attempts != 1 {
			t.Fatalf("claim %d: %+v %v", i, c, err)
		}
		due := now.Add(10 * time.Second)
		if err := q.Defer(t.Context(), c, due); err != nil {
			t.Fatal(err)
		}
		if c, _ := q.Claim(t.Context(), due.Add(-time.Millisecond)); c != nil {
			t.Fatal("claimed before its due time")
		}
		now = due
	}
}
