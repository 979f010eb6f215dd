package records_test

import (
	"shopbot/state/redisstore/records"
	"sync"
	"testing"
	"time"

	"shopbot/state"
)

func newTopup(t *testing.T, w *records.Wallets, user int64, amount string, stars int64, expires time.Time) *state.WalletTopup {
	t.Helper()
	tp := &state.WalletTopup{UserID: user, ChatID: user, USD: walletUSD(amount), Stars: stars, Lang: "en", Created: time.Now(), Expires: expires}
	if err := w.CreateTopup(t.Context(), tp); err != nil {
		t.Fatal(err)
	}
	return tp
}

var onRules = state.TopupRules{WalletOn: true, Grace: time.Minute}

func TestTopupSettleCreditsOnceAndMarksPaid(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	tp := newTopup(t, w, 7, "12.50", 962, time.Now().Add(time.Minute))
	got, err := w.Topup(ctx, tp.ID)
	if err != nil || got.UserID != 7 || !got.USD.Equal(walletUSD("12.5")) || got.Stars != 962 || got.PaidBy != "" || got.Lang != "en" {
		t.Fatalf("load %+v %v", got, err)
	}
	c := state.TopupCharge{ChargeID: "ch1", Payer: 7, TopupID: tp.ID, Stars: 962, PaidAt: time.Now()}
	for i := range 3 {
		out, err := w.SettleTopup(ctx, c, onRules)
		if err != nil || !out.Credited || out.Fresh != (i == 0) || out.Refund != "" || !out.Balance.Equal(walletUSD("12.5")) {
			t.Fatalf("settle %d: %+v %v", i, out, err)
		}
	}
	if got, _ := w.Topup(ctx, tp.ID); got.PaidBy != "ch1" {
		t.Fatalf("paid by %q", got.PaidBy)
	}
	if n, _ := w.LedgerLen(ctx, 7); n != 1 {
		t.Fatalf("%d ledger entries", n)
	}
	if amt, ok, _ := w.Moved(ctx, 7, state.TopupRef("ch1")); !ok || !amt.Equal(walletUSD("12.5")) {
		t.Fatalf("moved %s %v", amt, ok)
	}
	paid, err := w.PaidTopups(ctx, time.Now().Add(-time.Hour))
	if err != nil || len(paid) != 1 || paid[0].ChargeID != "ch1" || paid[0].Stars != 962 || !paid[0].USD.Equal(walletUSD("12.5")) {
		t.Fatalf("index %+v %v", paid, err)
	}
	// Another charge for the same top-up is for a refund.
	out, err := w.SettleTopup(ctx, state.TopupCharge{ChargeID: "ch2", Payer: 7, TopupID: tp.ID, Stars: 962, PaidAt: time.Now()}, onRules)
	if err != nil || out.Credited || out.Refund != state.TopupRefundTwice {
		t.Fatalf("second charge %+v %v", out, err)
	}
}

func TestTopupSettleRefusals(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	live := time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name  string
		payer int64
		id    func() string
		stars int64
		at    time.Time
		rules state.TopupRules
		want  string
	}{
		{"another buyer's", 8, func() string { return newTopup(t, w, 7, "5", 385, live).ID }, 385, time.Now(), onRules, state.TopupRefundGone},
		{"unknown", 7, func() string { return "7-deadbeef" }, 385, time.Now(), onRules, state.TopupRefundGone},
		{"garbage", 7, func() string { return "nonsense" }, 385, time.Now(), onRules, state.TopupRefundGone},
		{"amount", 7, func() string { return newTopup(t, w, 7, "5", 385, live).ID }, 384, time.Now(), onRules, state.TopupRefundAmount},
		{"expired", 7, func() string { return newTopup(t, w, 7, "5", 385, time.Now().Add(-2*time.Minute)).ID }, 385, time.Now(), onRules, state.TopupRefundExpired},
		{"wallet off", 7, func() string { return newTopup(t, w, 7, "5", 385, live).ID }, 385, time.Now(), state.TopupRules{}, state.TopupRefundWalletOff},
		{"limit", 7, func() string { return newTopup(t, w, 7, "5", 385, live).ID }, 385, time.Now(),
			state.TopupRules{WalletOn: true, MaxBalance: walletUSD("4.99")}, state.TopupRefundLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			charge := "ch-" + tc.name
			c := state.TopupCharge{ChargeID: charge, Payer: tc.payer, TopupID: tc.id(), Stars: tc.stars, PaidAt: tc.at}
			for range 2 {
				out, err := w.SettleTopup(ctx, c, tc.rules)
				if err != nil || out.Credited || out.Refund != tc.want {
					t.Fatalf("%+v %v, want %q", out, err, tc.want)
				}
			}
			// Whatever the rules later: the decision stands.
			if out, err := w.SettleTopup(ctx, c, state.TopupRules{WalletOn: true, Grace: time.Hour}); err != nil || out.Credited || out.Refund != tc.want {
				t.Fatalf("later %+v %v", out, err)
			}
			if why, _ := w.TopupRefundDecided(ctx, tc.payer, charge); why != tc.want {
				t.Fatalf("decided %q", why)
			}
		})
	}
	if b, _ := w.Balance(ctx, 7); !b.IsZero() {
		t.Fatalf("balance %s", b)
	}
	// Paid moments after the expiry (within the grace): credited.
	tp := newTopup(t, w, 9, "5", 385, time.Now().Add(-30*time.Second))
	if out, err := w.SettleTopup(ctx, state.TopupCharge{ChargeID: "late", Payer: 9, TopupID: tp.ID, Stars: 385, PaidAt: time.Now()}, onRules); err != nil || !out.Credited {
		t.Fatalf("within the grace %+v %v", out, err)
	}
}

// However many settle the same charge at once, under whatever rules, it is
// credited once or decided for a refund, never both.
func TestTopupSettleConcurrentIsOneDecision(t *testing.T) {
	w := newWallets(t)
	ctx := t.Context()
	for round := range 10 {
		tp := newTopup(t, w, 7, "1", 77, time.Now().Add(time.Minute))
		c := state.TopupCharge{ChargeID: "race" + string(rune('a'+round)), Payer: 7, TopupID: tp.ID, Stars: 77, PaidAt: time.Now()}
		var wg sync.WaitGroup
		outs := make([]state.TopupOutcome, 16)
		for i := range outs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				outs[i], err = w.SettleTopup(ctx, c, state.TopupRules{WalletOn: i%2 == 0})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		credited, fresh := 0, 0
		for _, o := range outs {
			if o.Credited {
				credited++
			}
			if o.Fresh {
				fresh++
			}
		}
		if credited != 0 && credited != len(outs) || credited > 0 && fresh != 1 {
			t.Fatalf("round %d: %d credited (%d fresh) of %d", round, credited, fresh, len(outs))
		}
		_, moved, _ := w.Moved(ctx, 7, state.TopupRef(c.ChargeID))
		why, _ := w.TopupRefundDecided(ctx, 7, c.ChargeID)
		if moved == (why != "") {
			t.Fatalf("round %d: credited=%v, refund decided %q", round, moved, why)
		}
	}
}
