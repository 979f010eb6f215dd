package work_test

import (
	"context"
	"testing"
	"time"

	"shopbot/state/redisstore/work"

	"shopbot/state/statetest"
)

// schedT0 is the tests' fixed clock.
var schedT0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func TestOrderChatsRelayClaims(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	s := work.NewOrderChats(r.Client, r.Prefix)
	info, err := s.Info(ctx, 7, "t1")
	if err != nil || info.Known || info.Enabled || len(info.Messages) != 0 {
		t.Fatalf("fresh chat info %+v (%v)", info, err)
	}
	if err := s.SetEnabled(ctx, 7, "t1", true, schedT0); err != nil {
		t.Fatal(err)
	}
	// Enabling again keeps the first activity time.
	if err := s.SetEnabled(ctx, 7, "t1", true, schedT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if info, _ = s.Info(ctx, 7, "t1"); !info.Known || !info.Enabled || !info.Activity.Equal(schedT0) {
		t.Fatalf("enabled chat info %+v", info)
	}

	ok, err := s.ClaimRelay(ctx, 7, "m1", "a", schedT0, time.Minute)
	if err != nil || !ok {
		t.Fatalf("first claim %v %v", ok, err)
	}
	if ok, _ := s.ClaimRelay(ctx, 7, "m1", "b", schedT0.Add(time.Second), time.Minute); ok {
		t.Fatal("a second poller claimed a message being relayed")
	}
	// The holder died: after the stale time another poller takes it over.
	if ok, _ := s.ClaimRelay(ctx, 7, "m1", "b", schedT0.Add(2*time.Minute), time.Minute); !ok {
		t.Fatal("a dead relayer's claim was never taken over")
	}
	// The dead one's release does not drop the new claim.
	if err := s.ReleaseRelay(ctx, 7, "m1", "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimRelay(ctx, 7, "m1", "c", schedT0.Add(2*time.Minute), time.Minute); ok {
		t.Fatal("an old holder's release dropped the current claim")
	}
	if err := s.MarkRelayed(ctx, 7, "m1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimRelay(ctx, 7, "m1", "d", schedT0.Add(time.Hour), time.Minute); ok {
		t.Fatal("a relayed message was claimed again")
	}

	// A failed send is released and tried again at once.
	if ok, _ := s.ClaimRelay(ctx, 7, "m2", "a", schedT0, time.Minute); !ok {
		t.Fatal("claim m2")
	}
	if err := s.ReleaseRelay(ctx, 7, "m2", "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimRelay(ctx, 7, "m2", "b", schedT0, time.Minute); !ok {
		t.Fatal("a released message could not be claimed again")
	}

	if err := s.MarkOwn(ctx, 7, "m3"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ClaimRelay(ctx, 7, "m3", "a", schedT0, time.Minute); ok {
		t.Fatal("the buyer's own message was claimed for relaying")
	}
	info, _ = s.Info(ctx, 7, "t1")
	if info.Messages["m1"] != work.ChatRelayed || info.Messages["m3"] != work.ChatOwn || len(info.Messages) != 3 {
		t.Fatalf("messages %v", info.Messages)
	}

	if err := s.Stop(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if info, _ = s.Info(ctx, 7, "t1"); !info.Stopped {
		t.Fatal("stop not recorded")
	}
	if err := s.Touch(ctx, 7, schedT0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if info, _ = s.Info(ctx, 7, "t1"); info.Stopped || !info.Activity.Equal(schedT0.Add(3*time.Hour)) {
		t.Fatalf("touch: %+v", info)
	}
	if r.Mini != nil {
		if ttl := r.Mini.TTL(r.Prefix + "ochat:7"); ttl <= 0 {
			t.Fatalf("chat record has no expiry (ttl %v)", ttl)
		}
	}
	if err := s.SetEnabled(ctx, 8, "t1", false, schedT0); err != nil {
		t.Fatal(err)
	}
	if info, _ = s.Info(ctx, 8, "t1"); !info.Known || info.Enabled {
		t.Fatalf("chat without upstream chat: %+v", info)
	}
}

// A number Redis handed out again after a loss names another purchase: the
// old purchase's chat record (stopped, relay marks) reads as none for it,
// and enabling the new purchase's chat starts the record afresh.
func TestOrderChatOfAReissuedNumberStartsAfresh(t *testing.T) {
	r := statetest.New(t)
	ctx := context.Background()
	s := work.NewOrderChats(r.Client, r.Prefix)
	if err := s.SetEnabled(ctx, 9, "old", true, schedT0); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkRelayed(ctx, 9, "m1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx, 9, "new"); err != nil || info.Known || info.Stopped || len(info.Messages) != 0 {
		t.Fatalf("another purchase's record under the number: %+v %v", info, err)
	}
	if err := s.SetEnabled(ctx, 9, "new", true, schedT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, 9, "new")
	if err != nil || !info.Known || !info.Enabled || info.Stopped || len(info.Messages) != 0 || !info.Activity.Equal(schedT0.Add(time.Hour)) {
		t.Fatalf("the new purchase's record: %+v %v", info, err)
	}
}
