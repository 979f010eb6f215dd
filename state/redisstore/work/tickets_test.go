package work_test

import (
	"errors"
	"shopbot/state/redisstore/work"
	"testing"
	"time"

	"shopbot/state/statetest"
)

// A ticket opens when the buyer writes, keeps their language and name,
// lists among the open tickets by latest activity, and closes once; the
// records stay under the keys the running shops use.
func TestTicketsOpenListClose(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	s := work.NewTickets(r.Client, r.Prefix)
	t0 := time.Unix(1_780_000_000, 0)

	if _, ok, err := s.Get(ctx, 501); err != nil || ok {
		t.Fatalf("a buyer who never wrote has a ticket: %v (%v)", ok, err)
	}
	if list, err := s.OpenTickets(ctx, 20); err != nil || len(list) != 0 {
		t.Fatalf("open tickets of an empty store: %+v (%v)", list, err)
	}
	if err := s.Open(ctx, 501, "uk", "Olha", t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(ctx, 502, "en", "@bob", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get(ctx, 501)
	want := work.Ticket{Buyer: 501, Open: true, Lang: "uk", Name: "Olha", Last: t0, BuyerAt: t0}
	if err != nil || !ok || got != want {
		t.Fatalf("ticket %+v %v (%v), want %+v", got, ok, err, want)
	}
	// The layout: a hash per buyer and a set of open ones by activity.
	h := r.Client.HGetAll(ctx, r.Prefix+"support:t:501").Val()
	if h["open"] != "1" || h["lang"] != "uk" || h["name"] != "Olha" || h["last"] != "1780000000" {
		t.Fatalf("ticket hash %v", h)
	}
	if sc, err := r.Client.ZScore(ctx, r.Prefix+"support:open", "501").Result(); err != nil || sc != float64(t0.Unix()) {
		t.Fatalf("open set score %v (%v)", sc, err)
	}

	list, err := s.OpenTickets(ctx, 20)
	if err != nil || len(list) != 2 || list[0].Buyer != 502 || list[1].Buyer != 501 || list[0].Name != "@bob" {
		t.Fatalf("open tickets %+v (%v), want 502 then 501", list, err)
	}
	// Writing again moves the ticket up; an admin's answer (Touch) records
	// activity but keeps the order.
	if err := s.Open(ctx, 501, "uk", "Olha", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(ctx, 502, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	list, _ = s.OpenTickets(ctx, 20)
	if len(list) != 2 || list[0].Buyer != 501 || !list[1].Last.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("after activity: %+v", list)
	}
	if list, _ = s.OpenTickets(ctx, 1); len(list) != 1 || list[0].Buyer != 501 {
		t.Fatalf("limit 1: %+v", list)
	}

	if was, err := s.Close(ctx, 501); err != nil || !was {
		t.Fatalf("close %v (%v), want it was open", was, err)
	}
	if was, _ := s.Close(ctx, 501); was {
		t.Fatal("closing again reported the ticket open")
	}
	if got, ok, _ := s.Get(ctx, 501); !ok || got.Open || got.Name != "Olha" || got.Lang != "uk" {
		t.Fatalf("a closed ticket reads %+v %v: want kept, not open", got, ok)
	}
	if list, _ = s.OpenTickets(ctx, 20); len(list) != 1 || list[0].Buyer != 502 {
		t.Fatalf("open tickets after closing 501: %+v", list)
	}
	// Touching a buyer who never wrote makes no ticket (none has a name).
	if err := s.Touch(ctx, 503, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, 503); ok {
		t.Fatal("a touch made a ticket")
	}
}

// A message relayed to an admin names its buyer, per admin and message,
// until it expires.
func TestTicketsRelayedMessages(t *testing.T) {
	r := statetest.New(t)
	ctx := t.Context()
	s := work.NewTickets(r.Client, r.Prefix)
	if _, err := s.RelayedFrom(ctx, 9000, 41); !errors.Is(err, work.ErrNotRelayed) {
		t.Fatalf("an unknown message: %v, want ErrNotRelayed", err)
	}
	if err := s.Relayed(ctx, 9000, 41, 501, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Relayed(ctx, 9001, 41, 502, time.Hour); err != nil {
		t.Fatal(err)
	}
	if b, err := s.RelayedFrom(ctx, 9000, 41); err != nil || b != 501 {
		t.Fatalf("relayed from %d (%v), want 501", b, err)
	}
	if b, _ := s.RelayedFrom(ctx, 9001, 41); b != 502 {
		t.Fatalf("another admin's message 41 is from %d, want 502", b)
	}
	if v := r.Client.Get(ctx, r.Prefix+"support:m:9000:41").Val(); v != "501" {
		t.Fatalf("relayed message key holds %q", v)
	}
	if ttl := r.Client.TTL(ctx, r.Prefix+"support:m:9000:41").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("relayed message key TTL %v, want up to a minute", ttl)
	}
	if r.Mini == nil {
		return // the expiry itself on miniredis's clock
	}
	r.FastForward(2 * time.Minute)
	if _, err := s.RelayedFrom(ctx, 9000, 41); !errors.Is(err, work.ErrNotRelayed) {
		t.Fatalf("an expired message: %v, want ErrNotRelayed", err)
	}
}
