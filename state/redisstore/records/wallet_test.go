package records_test

import (
	"errors"
	"fmt"
	"shopbot/state/redisstore/records"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/statetest"
)

func newWallets(t *testing.T) *records.Wallets {
	t.Helper()
	r := statetest.New(t)
	return records.NewWallets(r.Client, r.Prefix)
}

func walletUSD(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestWalletCreditIsIdempotentByRef(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	bal, dup, err := w.Credit(ctx, 7, walletUSD("10.50"), "admin:1", "cash at the desk", "admin:99")
	if err != nil || dup || !bal.Equal(walletUSD("10.5")) {
		t.Fatalf("first credit: %s dup=%v %v", bal, dup, err)
	}
	bal, dup, err = w.Credit(ctx, 7, walletUSD("10.50"), "admin:1", "cash at the desk", "admin:99")
	if err != nil || !dup || !bal.Equal(walletUSD("10.5")) {
		t.Fatalf("repeated credit: %s dup=%v %v", bal, dup, err)
	}
	if _, _, err := w.Credit(ctx, 7, walletUSD("11"), "admin:1", "", "admin:99"); !errors.Is(err, state.ErrRefReused) {
		t.Fatalf("same ref, other amount: %v", err)
	}
	if _, err := w.Debit(ctx, 7, walletUSD("10.50"), "admin:1", ""); !errors.Is(err, state.ErrRefReused) {
		t.Fatalf("same ref as a debit: %v", err)
	}
	if n, _ := w.LedgerLen(ctx, 7); n != 1 {
		t.Fatalf("ledger has %d entries, want 1", n)
	}
	if b, _ := w.Balance(ctx, 7); !b.Equal(walletUSD("10.5")) {
		t.Fatalf("balance %s", b)
	}
}

func TestWalletDebitIsIdempotentByRef(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	if _, _, err := w.Credit(ctx, 7, walletUSD("5"), "c1", "", "admin"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		bal, err := w.Debit(ctx, 7, walletUSD("1.25"), "order:quote:q1", "Steam $1")
		if err != nil || !bal.Equal(walletUSD("3.75")) {
			t.Fatalf("debit: %s %v", bal, err)
		}
	}
	if amt, ok, err := w.Moved(ctx, 7, "order:quote:q1"); err != nil || !ok || !amt.Equal(walletUSD("-1.25")) {
		t.Fatalf("Moved: %s %v %v", amt, ok, err)
	}
	if _, ok, _ := w.Moved(ctx, 7, "order:quote:q2"); ok {
		t.Fatal("Moved reports a ref never used")
	}
}

func TestWalletDebitNeverNegativeUnder50ConcurrentDebits(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	if _, _, err := w.Credit(ctx, 7, walletUSD("10.00"), "c1", "", "admin"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, short := 0, 0
	for i := range 50 {
		wg.Go(func() {
			_, err := w.Debit(ctx, 7, walletUSD("0.30"), fmt.Sprint("d", i), "")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, state.ErrInsufficientFunds):
				short++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	bal, _ := w.Balance(ctx, 7)
	if ok != 33 || short != 17 || !bal.Equal(walletUSD("0.10")) {
		t.Fatalf("%d debits, %d refused, balance %s; want 33, 17, 0.10", ok, short, bal)
	}
	led, _ := w.Ledger(ctx, 7, 0, 100)
	if len(led) != 34 {
		t.Fatalf("ledger has %d entries, want 34", len(led))
	}
	for _, e := range led {
		if e.Balance.IsNegative() {
			t.Fatalf("negative balance in ledger: %+v", e)
		}
	}
}

func TestWalletLedgerIsNewestFirst(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w.Now = func() time.Time { now = now.Add(time.Minute); return now }
	if _, _, err := w.Credit(ctx, 7, walletUSD("20"), "c1", "top-up", "admin:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Debit(ctx, 7, walletUSD("7.99"), "d1", "order 5"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Credit(ctx, 7, walletUSD("7.99"), "refund:5", "order 5 refunded", "refund"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Debit(ctx, 7, walletUSD("0.01"), "d2", "order 6"); err != nil {
		t.Fatal(err)
	}
	led, err := w.Ledger(ctx, 7, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range led {
		got = append(got, fmt.Sprintf("%s %s=%s %s", e.Ref, e.Amount.StringFixed(2), e.Balance.StringFixed(2), e.Actor))
	}
	want := "[d2 -0.01=19.99  refund:5 7.99=20.00 refund d1 -7.99=12.01 ]"
	if fmt.Sprint(got) != want {
		t.Fatalf("ledger %q\nwant %q", fmt.Sprint(got), want)
	}
	if !led[0].At.After(led[1].At) {
		t.Fatalf("times not newest first: %v %v", led[0].At, led[1].At)
	}
	rest, _ := w.Ledger(ctx, 7, 3, 3)
	if len(rest) != 1 || rest[0].Ref != "c1" || rest[0].Note != "top-up" || rest[0].Actor != "admin:1" {
		t.Fatalf("second page %+v", rest)
	}
}

func TestWalletRejectsBadAmounts(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	for _, a := range []string{"0", "-1", "0.001", "1.999", "1000000000.01"} {
		if _, _, err := w.Credit(ctx, 7, walletUSD(a), "r"+a, "", "admin"); !errors.Is(err, state.ErrBadAmount) {
			t.Errorf("credit %s: %v", a, err)
		}
		if _, err := w.Debit(ctx, 7, walletUSD(a), "r"+a, ""); !errors.Is(err, state.ErrBadAmount) {
			t.Errorf("debit %s: %v", a, err)
		}
	}
	if _, err := w.Debit(ctx, 7, walletUSD("0.01"), "d", ""); !errors.Is(err, state.ErrInsufficientFunds) {
		t.Errorf("debit from an empty wallet: %v", err)
	}
	if _, _, err := w.Credit(ctx, 7, walletUSD("1"), "", "", "admin"); err == nil {
		t.Error("credit without a ref accepted")
	}
	if b, _ := w.Balance(ctx, 7); !b.IsZero() {
		t.Errorf("balance %s after refused movements", b)
	}
	if _, _, err := w.Credit(ctx, 7, walletUSD("1000000000.00"), "max", "", "admin"); err != nil {
		t.Errorf("largest credit: %v", err)
	}
}
