package work_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"shopbot/state/redisstore/work"
	"shopbot/state/statetest"
)

// An invoice is claimed by one Pay at a time: a second one within the
// sending bound hears it is on its way; past the bound the mark is taken
// for lost and claimed anew. Only the claim that made a mark releases it,
// and a sent invoice is never released; its message id is what a later
// claim finds.
func TestPaymentsInvoiceClaimSentRelease(t *testing.T) {
	r := statetest.New(t)
	pay := work.NewPayments(r.Client, r.Prefix)
	ctx := t.Context()
	const bound, keep = 30 * time.Second, time.Hour
	at := time.UnixMilli(1_700_000_000_000)

	if rec, err := pay.InvoiceRecorded(ctx, "q1"); rec || err != nil {
		t.Fatalf("no invoice yet: %v %v", rec, err)
	}
	if c, _, err := pay.ClaimInvoice(ctx, "q1", at, bound, "de", keep); c != work.InvoiceClaimed || err != nil {
		t.Fatalf("first claim: %v %v", c, err)
	}
	// The same keys as the checkout has always written.
	key := r.Prefix + "pay:q:" + "q1"
	if h := r.Client.HGetAll(ctx, key).Val(); h["inv"] != "sending" || h["inv_at"] != strconv.FormatInt(at.UnixMilli(), 10) || h["lang"] != "de" {
		t.Fatalf("mark %v", h)
	}
	if ttl := r.Client.PTTL(ctx, key).Val(); ttl <= 0 || ttl > keep {
		t.Fatalf("mark kept for %v", ttl)
	}
	if rec, _ := pay.InvoiceRecorded(ctx, "q1"); !rec {
		t.Fatal("a mark being sent is a recorded invoice")
	}
	if l, err := pay.QuoteLang(ctx, "q1"); l != "de" || err != nil {
		t.Fatalf("lang %q %v", l, err)
	}
	// Within the bound another Pay is told it is on its way.
	if c, _, _ := pay.ClaimInvoice(ctx, "q1", at.Add(bound-time.Millisecond), bound, "en", keep); c != work.InvoiceSending {
		t.Fatalf("claim within the bound: %v", c)
	}
	// Past it the mark is lost: claimed anew, and the first claim's
	// release no longer drops it.
	later := at.Add(bound)
	if c, _, _ := pay.ClaimInvoice(ctx, "q1", later, bound, "en", keep); c != work.InvoiceClaimed {
		t.Fatalf("claim past the bound: %v", c)
	}
	if ok, err := pay.ReleaseInvoice(ctx, "q1", at); ok || err != nil {
		t.Fatalf("a stale claim released the new mark: %v %v", ok, err)
	}
	if l, _ := pay.QuoteLang(ctx, "q1"); l != "en" {
		t.Fatalf("lang of the new claim %q", l)
	}
	// Sent: later claims find the message id; nothing releases it.
	if ok, err := pay.InvoiceSentAs(ctx, "q1", 4242); !ok || err != nil {
		t.Fatalf("sent: %v %v", ok, err)
	}
	if ok, _ := pay.ReleaseInvoice(ctx, "q1", later); ok {
		t.Fatal("released a sent invoice")
	}
	if c, msg, _ := pay.ClaimInvoice(ctx, "q1", later.Add(time.Hour), bound, "en", keep); c != work.InvoiceSent || msg != "4242" {
		t.Fatalf("claim after sending: %v %q", c, msg)
	}
	if ok, _ := pay.InvoiceSentAs(ctx, "q1", 5000); ok {
		t.Fatal("a second message id over a sent invoice")
	}
	if v := r.Client.HGet(ctx, key, "inv").Val(); v != "4242" {
		t.Fatalf("inv %q", v)
	}

	// A claim released by its maker (nothing was sent) leaves no invoice,
	// and the next Pay claims at once.
	if c, _, _ := pay.ClaimInvoice(ctx, "q2", at, bound, "en", keep); c != work.InvoiceClaimed {
		t.Fatalf("claim q2: %v", c)
	}
	if ok, err := pay.ReleaseInvoice(ctx, "q2", at); !ok || err != nil {
		t.Fatalf("release own mark: %v %v", ok, err)
	}
	if rec, _ := pay.InvoiceRecorded(ctx, "q2"); rec {
		t.Fatal("a released mark is still an invoice")
	}
	if l, _ := pay.QuoteLang(ctx, "q2"); l != "en" {
		t.Fatalf("the language outlived the release as %q", l)
	}
	if c, _, _ := pay.ClaimInvoice(ctx, "q2", at.Add(time.Millisecond), bound, "en", keep); c != work.InvoiceClaimed {
		t.Fatalf("claim after release: %v", c)
	}
	// Sent with no mark (it went stale and was released): not recorded.
	if ok, _ := pay.InvoiceSentAs(ctx, "q3", 1); ok {
		t.Fatal("recorded a message id with no mark")
	}
	if rec, _ := pay.InvoiceRecorded(ctx, "q3"); rec {
		t.Fatal("an invoice with no mark")
	}
}

// A wallet payment records the buyer's language for the quote, kept as
// long as asked.
func TestPaymentsQuoteLang(t *testing.T) {
	r := statetest.New(t)
	pay := work.NewPayments(r.Client, r.Prefix)
	ctx := t.Context()
	if l, err := pay.QuoteLang(ctx, "q"); l != "" || err != nil {
		t.Fatalf("no language yet: %q %v", l, err)
	}
	if err := pay.SetQuoteLang(ctx, "q", "ru", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if l, _ := pay.QuoteLang(ctx, "q"); l != "ru" {
		t.Fatalf("lang %q", l)
	}
	if v := r.Client.HGet(ctx, r.Prefix+"pay:q:q", "lang").Val(); v != "ru" {
		t.Fatalf("stored %q", v)
	}
	r.FastForward(300 * time.Millisecond)
	if l, _ := pay.QuoteLang(ctx, "q"); l != "" {
		t.Fatalf("the language outlived its keep: %q", l)
	}
}

// The once-marks are set once and read back, under their old keys.
func TestPaymentsMarks(t *testing.T) {
	r := statetest.New(t)
	pay := work.NewPayments(r.Client, r.Prefix)
	ctx := t.Context()
	at := time.Unix(1_700_000_000, 0)
	marks := []struct {
		name string
		key  string
		mark func() (bool, error)
		read func() (bool, error)
	}{
		{"refunded", "pay:refunded:ch1",
			func() (bool, error) { return pay.MarkRefunded(ctx, "ch1", at, time.Hour) },
			func() (bool, error) { return pay.Refunded(ctx, "ch1") }},
		{"topup told", "pay:topup-told:ch2",
			func() (bool, error) { return pay.MarkTopupTold(ctx, "ch2", at, time.Hour) },
			func() (bool, error) { return pay.TopupTold(ctx, "ch2") }},
		{"wallet lost", "pay:wallet-lost:pay:quote:q1",
			func() (bool, error) { return pay.MarkWalletLost(ctx, "pay:quote:q1", at, time.Hour) },
			func() (bool, error) {
				return r.Client.Exists(ctx, r.Prefix+"pay:wallet-lost:pay:quote:q1").Val() == 1, nil
			}},
	}
	for _, m := range marks {
		t.Run(m.name, func(t *testing.T) {
			if ok, err := m.read(); ok || err != nil {
				t.Fatalf("before: %v %v", ok, err)
			}
			if first, err := m.mark(); !first || err != nil {
				t.Fatalf("first mark: %v %v", first, err)
			}
			if first, err := m.mark(); first || err != nil {
				t.Fatalf("second mark: %v %v", first, err)
			}
			if ok, err := m.read(); !ok || err != nil {
				t.Fatalf("after: %v %v", ok, err)
			}
			if v := r.Client.Get(ctx, r.Prefix+m.key).Val(); v != strconv.FormatInt(at.Unix(), 10) {
				t.Fatalf("%s holds %q", m.key, v)
			}
			if ttl := r.Client.TTL(ctx, r.Prefix+m.key).Val(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("%s kept for %v", m.key, ttl)
			}
		})
	}
}

// One sweep holds the lock at a time; a holder whose lock ran out and
// was taken by another neither renews nor releases the other's lock.
func TestPaymentsSweepLockOwnership(t *testing.T) {
	r := statetest.New(t)
	pay := work.NewPayments(r.Client, r.Prefix)
	ctx := t.Context()
	key := r.Prefix + "pay:sweep-lock"

	l, err := pay.LockSweep(ctx, time.Minute)
	if l == nil || err != nil {
		t.Fatalf("lock: %v %v", l, err)
	}
	if other, err := pay.LockSweep(ctx, time.Minute); other != nil || err != nil {
		t.Fatalf("a second holder: %v %v", other, err)
	}
	if ok, err := l.Extend(ctx, 2*time.Minute); !ok || err != nil {
		t.Fatalf("extend: %v %v", ok, err)
	}
	if ttl := r.Client.PTTL(ctx, key).Val(); ttl <= time.Minute {
		t.Fatalf("extended lock kept for %v", ttl)
	}
	// It runs out and another process takes it.
	r.Client.Set(ctx, key, "another-sweeper", time.Minute)
	if ok, err := l.Extend(ctx, time.Hour); ok || err != nil {
		t.Fatalf("extended another's lock: %v %v", ok, err)
	}
	if ok, err := l.Release(ctx); ok || err != nil {
		t.Fatalf("released another's lock: %v %v", ok, err)
	}
	if v := r.Client.Get(ctx, key).Val(); v != "another-sweeper" {
		t.Fatalf("the other's lock is %q", v)
	}
	if ttl := r.Client.PTTL(ctx, key).Val(); ttl > time.Minute {
		t.Fatalf("the other's lock kept for %v", ttl)
	}
	r.Client.Del(ctx, key)

	// The holder releases its own; a lock that runs out frees the sweep.
	l, _ = pay.LockSweep(ctx, time.Minute)
	if ok, err := l.Release(ctx); !ok || err != nil {
		t.Fatalf("release: %v %v", ok, err)
	}
	if n := r.Client.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the lock outlived its release")
	}
	if l, _ = pay.LockSweep(ctx, 200*time.Millisecond); l == nil {
		t.Fatal("lock after release")
	}
	r.FastForward(300 * time.Millisecond)
	if l2, _ := pay.LockSweep(ctx, time.Minute); l2 == nil {
		t.Fatal("an expired lock still kept the sweep out")
	}
	if ok, _ := l.Extend(ctx, time.Minute); ok {
		t.Fatal("an expired holder renewed the lock")
	}
}

// Wallet payments between the debit and the order are listed by when they
// began, and dropped one by one; a member that does not parse is dropped
// as listed.
func TestPaymentsWalletPending(t *testing.T) {
	r := statetest.New(t)
	pay := work.NewPayments(r.Client, r.Prefix)
	ctx := t.Context()
	t0 := time.UnixMilli(1_700_000_000_000)
	if err := pay.AddWalletPending(ctx, 7, "qa", t0); err != nil {
		t.Fatal(err)
	}
	if err := pay.AddWalletPending(ctx, 8, "qb", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	key := r.Prefix + "pay:wallet-pending"
	if s, err := r.Client.ZScore(ctx, key, "7:qa").Result(); err != nil || int64(s) != t0.UnixMilli() {
		t.Fatalf("listed as %v %v", s, err)
	}
	got, err := pay.WalletPendingUntil(ctx, t0.Add(time.Second), 100)
	if err != nil || len(got) != 1 || got[0].UserID != 7 || got[0].QuoteID != "qa" {
		t.Fatalf("until t0+1s: %+v %v", got, err)
	}
	if got, _ := pay.WalletPendingUntil(ctx, t0.Add(time.Minute), 1); len(got) != 1 || got[0].QuoteID != "qa" {
		t.Fatalf("the oldest one: %+v", got)
	}
	if err := pay.DropWalletPending(ctx, work.WalletPending{UserID: 7, QuoteID: "qa"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := pay.WalletPendingUntil(ctx, t0.Add(time.Hour), 100); len(got) != 1 || got[0].UserID != 8 {
		t.Fatalf("after the drop: %+v", got)
	}
	r.Client.ZAdd(ctx, key, redis.Z{Score: float64(t0.UnixMilli()), Member: "x:qc"})
	got, _ = pay.WalletPendingUntil(ctx, t0, 100)
	if len(got) != 1 || got[0].QuoteID != "qc" {
		t.Fatalf("a member that does not parse: %+v", got)
	}
	if err := pay.DropWalletPending(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := pay.WalletPendingUntil(ctx, t0, 100); len(got) != 0 {
		t.Fatalf("not dropped as listed: %+v", got)
	}
}

// A sweep meets the dues asked for before it started; one asked for later
// (by the sweep itself, for a charge to look at again in 30 s) stays,
// whatever earlier due it met.
func TestSweepDueAskedForDuringASweepOutlivesIt(t *testing.T) {
	r := statetest.New(t)
	pay := work.NewPayments(r.Client, r.Prefix)
	ctx := t.Context()
	now := time.UnixMilli(1_700_000_000_000)
	if _, ok, err := pay.SweepDue(ctx); err != nil || ok {
		t.Fatalf("a due on a new store: %v %v", ok, err)
	}
	if err := pay.SweepDueAt(ctx, now); err != nil {
		t.Fatal(err)
	}
	// The sweep starts a second later and, as it goes, puts a charge off.
	started := now.Add(time.Second)
	if err := pay.SweepDueAt(ctx, started.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if at, ok, err := pay.SweepDue(ctx); err != nil || !ok || !at.Equal(now) {
		t.Fatalf("due %v %v %v, want the earliest, %v", at, ok, err, now)
	}
	if err := pay.SweepDone(ctx, started); err != nil {
		t.Fatal(err)
	}
	at, ok, err := pay.SweepDue(ctx)
	if err != nil || !ok || !at.Equal(started.Add(30*time.Second)) {
		t.Fatalf("after the sweep: due %v %v %v, want the one it asked for, %v", at, ok, err, started.Add(30*time.Second))
	}
	if err := pay.SweepDone(ctx, at); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := pay.SweepDue(ctx); err != nil || ok {
		t.Fatalf("a due after every sweep it asked for: %v %v", ok, err)
	}
}
