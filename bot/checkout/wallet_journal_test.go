package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/checkout"
	"shopbot/locales"
	"shopbot/state"
)

// Redis rolled back to before a wallet payment (a crash of a Redis whose
// last second was not on disk, a failover to a replica that was behind):
// the order and its debit are gone, but the journal holds the order, so
// the sweep makes it again with its debit, once.
func TestWalletOrderRedisLostIsRebuiltFromTheJournalOnce(t *testing.T) {
	s := newPayShop(t, false, true)
	s.startedSweep()
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(100), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(1)
	rollback := s.Rdb.Snapshot(t)
	s.checkout(q)
	lost := s.order(q.ID)
	rollback()
	s.noOrder(q.ID)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(decimal.NewFromInt(100)) {
		t.Fatalf("balance %s after the rollback, want the debit gone too (100)", bal)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d, want the lost order", n)
	}
	o := s.order(q.ID)
	if o.PayMethod != state.PayWallet || o.ChargeID != checkout.WalletRef(q.ID) || !o.ShopUSD.Equal(lost.ShopUSD) {
		t.Fatalf("rebuilt order %+v", o)
	}
	s.scheduled(o)
	want := decimal.NewFromInt(100).Sub(q.ShopUSD)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(want) {
		t.Fatalf("balance %s, want %s (debited once again)", bal, want)
	}
	if n := s.sweep(); n != 0 {
		t.Fatalf("second sweep repaired %d", n)
	}
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.Equal(want) {
		t.Fatalf("balance %s after a second sweep, want %s", bal, want)
	}
}

// The same loss, but the buyer spent the money the rollback gave back
// before the sweep came: nothing can be bought for it, nothing is taken,
// and the buyer is told once.
func TestWalletOrderRedisLostWithTheMoneySpentIsNotRebuilt(t *testing.T) {
	s := newPayShop(t, false, true)
	s.startedSweep()
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(20), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(1)
	rollback := s.Rdb.Snapshot(t)
	s.checkout(q)
	rollback()
	if _, err := s.pay.Wallets.Debit(ctx, chat, decimal.NewFromInt(20), "pay:quote:elsewhere", "order"); err != nil {
		t.Fatal(err)
	}
	s.sweep()
	s.noOrder(q.ID)
	if bal, _ := s.pay.Wallets.Balance(ctx, chat); !bal.IsZero() {
		t.Fatalf("balance %s, want 0 (nothing taken twice, nothing given)", bal)
	}
	s.sweep()
	s.Idle(s.b)
	text := locales.T(locales.En, "pay.wallet_lost", "item", "X", "balance", "Y")
	head := text[:20]
	if got := len(s.texts(chat, head)); got != 1 {
		t.Fatalf("buyer told %d times, want once", got)
	}
}

// After a rollback the rebuilt order takes the id of a lost one, whose job
// the snapshot kept, due only at a later poll: the rebuilt order's job is
// made due now, not left to that time.
func TestRebuiltOrderIsDueNowThoughItsJobNameWaitedForALaterPoll(t *testing.T) {
	s := newPayShop(t, false, true)
	s.startedSweep()
	ctx := context.Background()
	if _, _, err := s.pay.Wallets.Credit(ctx, chat, decimal.NewFromInt(100), "admin:1", "", "9001"); err != nil {
		t.Fatal(err)
	}
	q := s.quote(1)
	rollback := s.Rdb.Snapshot(t)
	s.checkout(q)
	lost := s.order(q.ID)
	rollback()
	job := "order:" + itoa(lost.ID)
	if err := s.pay.Schedule.Put(ctx, job, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := s.sweep(); n != 1 {
		t.Fatalf("sweep repaired %d, want the lost order", n)
	}
	if o := s.order(q.ID); o.ID != lost.ID {
		t.Skipf("the rebuilt order took id %d, not the lost %d: nothing to test", o.ID, lost.ID)
	}
	due, ok, err := s.pay.Schedule.Due(ctx, job)
	if err != nil || !ok {
		t.Fatalf("job: %v %v", ok, err)
	}
	if time.Until(due) > time.Minute {
		t.Fatalf("the rebuilt order's job is due in %v, want now", time.Until(due).Round(time.Second))
	}
}
