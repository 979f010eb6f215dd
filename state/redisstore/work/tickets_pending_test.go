package work_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
)

// TestTicketsPendingFoldAndPutBack: the first message of a fold asks for a
// relay, the next ones of the same fold do not; Take takes them in order
// and clears the mark, so the next message asks again; messages put back
// come first, and the list keeps at most PendingMax.
func TestTicketsPendingFoldAndPutBack(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	s := work.NewTickets(r.Client, r.Prefix)
	for i, want := range []bool{true, false, false} {
		got, err := s.Queue(ctx, 501, fmt.Sprint("m", i), time.Minute)
		if err != nil || got != want {
			t.Fatalf("message %d asks for a relay: %v (%v), want %v", i, got, err, want)
		}
	}
	docs, err := s.Take(ctx, 501)
	if err != nil || strings.Join(docs, " ") != "m0 m1 m2" {
		t.Fatalf("took %q (%v)", docs, err)
	}
	if got, _ := s.Queue(ctx, 501, "m3", time.Minute); !got {
		t.Fatal("a message after the take asks for no relay")
	}
	if err := s.PutBack(ctx, 501, docs); err != nil {
		t.Fatal(err)
	}
	if docs, _ := s.Take(ctx, 501); strings.Join(docs, " ") != "m0 m1 m2 m3" {
		t.Fatalf("after a put back took %q", docs)
	}
	for i := range work.PendingMax + 5 {
		if _, err := s.Queue(ctx, 502, fmt.Sprint("n", i), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	docs, _ = s.Take(ctx, 502)
	if len(docs) != work.PendingMax || docs[0] != "n5" {
		t.Fatalf("kept %d, first %q", len(docs), docs[0])
	}
}
