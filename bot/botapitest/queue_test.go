package botapitest_test

import (
	"testing"

	"shopbot/bot/botapitest"
)

func TestQueuedUpdatesAndConfirm(t *testing.T) {
	s := botapitest.NewT(t)
	changed := s.UpdatesChanged()
	a := s.SendText(1, "/start")
	select {
	case <-changed:
	default:
		t.Fatal("UpdatesChanged was not closed by a new update")
	}
	b := s.SendText(2, "hello")
	q := s.QueuedUpdates()
	if len(q) != 2 || q[0].ID != a.UpdateID || q[1].ID != b.UpdateID || q[0].Kind != "message" || len(q[0].Raw) == 0 {
		t.Fatalf("queued = %+v", q)
	}
	changed = s.UpdatesChanged()
	if !s.ConfirmUpdate(b.UpdateID) {
		t.Fatal("ConfirmUpdate of a queued update returned false")
	}
	select {
	case <-changed:
	default:
		t.Fatal("UpdatesChanged was not closed by a confirmation")
	}
	if s.ConfirmUpdate(b.UpdateID) {
		t.Fatal("ConfirmUpdate twice returned true")
	}
	if q := s.QueuedUpdates(); len(q) != 1 || q[0].ID != a.UpdateID {
		t.Fatalf("after confirm: %+v", q)
	}
	if s.PendingUpdates() != 1 {
		t.Fatalf("PendingUpdates = %d", s.PendingUpdates())
	}
}
