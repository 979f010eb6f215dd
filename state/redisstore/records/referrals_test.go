package records_test

import (
	"shopbot/state/redisstore/records"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/statetest"
)

func newReferrals(t *testing.T) (*records.Referrals, *records.Users) {
	t.Helper()
	r := statetest.New(t)
	return records.NewReferrals(r.Client, r.Prefix), records.NewUsers(r.Client, r.Prefix)
}

func TestReferralCodeIsStableShortAndNotTheUserID(t *testing.T) {
	refs, _ := newReferrals(t)
	ctx := t.Context()
	a, err := refs.Code(ctx, 1001)
	if err != nil {
		t.Fatal(err)
	}
	again, err := refs.Code(ctx, 1001)
	if err != nil || again != a {
		t.Fatalf("second Code = %q, %v; want %q", again, err, a)
	}
	b, _ := refs.Code(ctx, 1002)
	if b == a || !state.ValidReferralCode(a) || !state.ValidReferralCode(b) || a == "1001" {
		t.Fatalf("codes %q and %q", a, b)
	}
}

func TestReferralAttributionOutcomes(t *testing.T) {
	refs, users := newReferrals(t)
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const owner, newbie, old, other = 1, 2, 3, 4
	code, _ := refs.Code(ctx, owner)
	otherCode, _ := refs.Code(ctx, other)
	if err := users.Started(ctx, old, at); err != nil {
		t.Fatal(err)
	}
	check := func(name string, user int64, code string, want state.Attribution, wantRef int64) {
		t.Helper()
		got, ref, err := refs.Attribute(ctx, user, code, at)
		if err != nil || got != want || ref != wantRef {
			t.Fatalf("%s: %v referrer %d, %v; want %v referrer %d", name, got, ref, err, want, wantRef)
		}
	}
	check("unknown code", newbie, "zzzzzzzz", state.UnknownCode, 0)
	check("not a code", newbie, "1", state.UnknownCode, 0)
	check("own code", owner, code, state.SelfReferral, owner)
	check("known buyer", old, code, state.NotNew, owner)
	check("new buyer", newbie, code, state.Attributed, owner)
	check("again, same link", newbie, code, state.AlreadyReferred, owner)
	check("again, another link", newbie, otherCode, state.AlreadyReferred, owner)
	if ref, ok, err := refs.Referrer(ctx, newbie); err != nil || !ok || ref != owner {
		t.Fatalf("referrer of the new buyer: %d %v %v", ref, ok, err)
	}
	for _, u := range []int64{owner, old, other} {
		if _, ok, _ := refs.Referrer(ctx, u); ok {
			t.Fatalf("%d has a referrer", u)
		}
	}
	// Attribution records the buyer as started: they are no longer new.
	if started, _ := users.HasStarted(ctx, newbie); !started {
		t.Fatal("the attributed buyer is not in the buyer registry")
	}
	if s, _ := refs.SummaryOf(ctx, owner); s.Buyers != 1 || !s.Earned.IsZero() {
		t.Fatalf("owner's summary %+v", s)
	}
	if s, _ := refs.SummaryOf(ctx, other); s.Buyers != 0 {
		t.Fatalf("other's summary %+v", s)
	}
}

// Two /start of one new buyer through two different links at once: one
// link wins, the buyer is attributed once, and one referrer counts them.
func TestReferralConcurrentAttributionOneWins(t *testing.T) {
	refs, _ := newReferrals(t)
	ctx := t.Context()
	at := time.Now()
	const n = 8
	codes := make([]string, n)
	for i := range codes {
		codes[i], _ = refs.Code(ctx, int64(100+i))
	}
	for round := range 20 {
		user := int64(10_000 + round)
		outcomes := make([]state.Attribution, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, _, err := refs.Attribute(ctx, user, codes[i], at)
				if err != nil {
					t.Error(err)
				}
				outcomes[i] = got
			}()
		}
		wg.Wait()
		won := 0
		for _, o := range outcomes {
			switch o {
			case state.Attributed:
				won++
			case state.AlreadyReferred:
			default:
				t.Fatalf("round %d: outcome %v", round, o)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d links won", round, won)
		}
	}
	var total int64
	for i := range n {
		s, err := refs.SummaryOf(ctx, int64(100+i))
		if err != nil {
			t.Fatal(err)
		}
		total += s.Buyers
	}
	if total != 20 {
		t.Fatalf("referrers count %d buyers, want 20", total)
	}
}

func TestReferralRewardDecidedOnce(t *testing.T) {
	refs, _ := newReferrals(t)
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	first, err := refs.Decide(ctx, state.Reward{Order: 7, Referrer: 1, USD: decimal.RequireFromString("0.129"), At: at})
	if err != nil || !first.USD.Equal(decimal.RequireFromString("0.12")) || first.Referrer != 1 || !first.At.Equal(at) {
		t.Fatalf("first decision %+v, %v", first, err)
	}
	// A second decision (another percent, another time) returns the first.
	again, err := refs.Decide(ctx, state.Reward{Order: 7, Referrer: 1, USD: decimal.NewFromInt(5), At: at.Add(time.Hour)})
	if err != nil || !sameReward(again, first) {
		t.Fatalf("second decision %+v, %v; want %+v", again, err, first)
	}
	// An order that earned nothing is decided too, and counts nowhere.
	if none, err := refs.Decide(ctx, state.Reward{Order: 8, Referrer: 1, USD: decimal.Zero, At: at}); err != nil || !none.USD.IsZero() {
		t.Fatalf("zero decision %+v, %v", none, err)
	}
	if s, _ := refs.SummaryOf(ctx, 1); !s.Earned.Equal(decimal.RequireFromString("0.12")) {
		t.Fatalf("earned %s", s.Earned)
	}
	if rw, ok, err := refs.RewardOf(ctx, 8); err != nil || !ok || !rw.USD.IsZero() {
		t.Fatalf("reward of 8: %+v %v %v", rw, ok, err)
	}
	if _, ok, _ := refs.RewardOf(ctx, 9); ok {
		t.Fatal("order 9 has a reward")
	}
	act, err := refs.ActivitySince(ctx, at.Add(-time.Minute))
	if err != nil || len(act.Rewards) != 1 || !sameReward(act.Rewards[0], first) {
		t.Fatalf("activity %+v, %v", act, err)
	}
	if act, _ := refs.ActivitySince(ctx, at.Add(time.Minute)); len(act.Rewards) != 0 {
		t.Fatalf("activity after the reward: %+v", act)
	}
	// The notice is claimed once.
	if ok, _ := refs.ClaimTold(ctx, 7); !ok {
		t.Fatal("first claim refused")
	}
	if ok, _ := refs.ClaimTold(ctx, 7); ok {
		t.Fatal("second claim granted")
	}
}

func sameReward(a, b state.Reward) bool {
	return a.Order == b.Order && a.Referrer == b.Referrer && a.USD.Equal(b.USD) && a.At.Equal(b.At)
}
