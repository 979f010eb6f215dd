package records_test

import (
	"shopbot/state/redisstore/records"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/statetest"
)

func TestCreditAuditIsNewestFirstCappedAndOncePerRef(t *testing.T) {
	r := statetest.New(t)
	a := records.NewCreditAudit(r.Client, r.Prefix)
	a.Cap = 3
	ctx := t.Context()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for i := range 4 {
		ok, err := a.Record(ctx, state.CreditRecord{Admin: 9, User: int64(100 + i), Amount: decimal.NewFromInt(int64(i + 1)),
			Ref: "credit:" + string(rune('a'+i)), At: at.Add(time.Duration(i) * time.Minute)})
		if err != nil || !ok {
			t.Fatalf("record %d: %v %v", i, ok, err)
		}
	}
	ok, err := a.Record(ctx, state.CreditRecord{Admin: 9, User: 103, Amount: decimal.NewFromInt(4), Ref: "credit:d", At: at})
	if err != nil || ok {
		t.Fatalf("a replayed ref was recorded again: %v %v", ok, err)
	}
	if _, err := a.Record(ctx, state.CreditRecord{Admin: 9, User: 1}); err == nil {
		t.Fatal("a record without a ref was accepted")
	}
	got, err := a.Recent(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("kept %d records, want the cap of 3: %+v", len(got), got)
	}
	for i, want := range []int64{103, 102, 101} {
		if got[i].User != want || got[i].Admin != 9 {
			t.Fatalf("record %d = %+v, want user %d", i, got[i], want)
		}
	}
	if !got[0].Amount.Equal(decimal.NewFromInt(4)) || !got[0].At.Equal(at.Add(3*time.Minute)) || got[0].Ref != "credit:d" {
		t.Fatalf("newest record = %+v", got[0])
	}
}

func TestUsersHasStarted(t *testing.T) {
	r := statetest.New(t)
	u := records.NewUsers(r.Client, r.Prefix)
	ctx := t.Context()
	if ok, err := u.HasStarted(ctx, 7); err != nil || ok {
		t.Fatalf("before /start: %v %v", ok, err)
	}
	if err := u.Started(ctx, 7, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, err := u.HasStarted(ctx, 7); err != nil || !ok {
		t.Fatalf("after /start: %v %v", ok, err)
	}
}

func TestAuditLogIsNewestFirstAndCapped(t *testing.T) {
	r := statetest.New(t)
	a := records.NewAuditLog(r.Client, r.Prefix)
	a.Cap = 2
	ctx := t.Context()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	by := state.Actor{ID: 9, Role: "owner", Via: state.ViaConsole}
	for i, action := range []string{state.AuditRefund, state.AuditResend, state.AuditCredit} {
		if err := a.Record(ctx, state.AuditEntry{At: at.Add(time.Duration(i) * time.Minute), Actor: by, Action: action, Target: state.AuditOrder(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.Recent(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Action != state.AuditCredit || got[1].Action != state.AuditResend || got[0].Actor != by || got[0].Target != "order 2" {
		t.Fatalf("audit log = %+v", got)
	}
	if by.Note("refund") != "admin 9 (console): refund" || (state.Actor{ID: 9, Via: state.ViaChat}).Note("refund") != "admin 9: refund" {
		t.Fatalf("notes: %q", by.Note("refund"))
	}
}
