package records_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/state"
	"shopbot/state/redisstore/records"
	"shopbot/state/statetest"
)

// buyerStore is a store of eight buyers whose histories the audience test
// knows by heart: when each started, their language, what they bought and
// when, when they last used the bot, referrals, wallets, the opt-out and a
// block. now is the time the audiences are taken at.
type buyerStore struct {
	users   *records.Users
	wallets *records.Wallets
	orders  *records.Orders
	now     time.Time
}

func newBuyerStore(t *testing.T) *buyerStore {
	t.Helper()
	r := statetest.New(t)
	s := &buyerStore{
		users: records.NewUsers(r.Client, r.Prefix), wallets: records.NewWallets(r.Client, r.Prefix),
		orders: records.NewOrders(r.Client, r.Prefix), now: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC),
	}
	refs := records.NewReferrals(r.Client, r.Prefix)
	ctx := t.Context()
	ago := func(days int) time.Time { return s.now.Add(-time.Duration(days) * 24 * time.Hour) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	code, err := refs.Code(ctx, 1)
	must(err)
	// Referred buyers are recorded as started by their attribution.
	for _, rb := range []struct {
		id   int64
		days int
	}{{3, 10}, {7, 50}} {
		if got, _, err := refs.Attribute(ctx, rb.id, code, ago(rb.days)); err != nil || got != state.Attributed {
			t.Fatalf("attribute %d: %v %v", rb.id, got, err)
		}
	}
	for _, st := range []struct {
		id   int64
		days int
		lang string
	}{{1, 100, "en"}, {2, 100, "ru"}, {3, 10, "uk"}, {4, 90, "ru"}, {5, 200, "en"}, {6, 30, "en"}, {7, 50, "uk"}, {8, 61, ""}} {
		must(s.users.Started(ctx, st.id, ago(st.days)))
		if st.lang != "" {
			must(s.users.Seen(ctx, st.id, st.lang, ago(st.days)))
		}
	}
	must(s.users.Bought(ctx, 1, "giftcards", "en", ago(5)))
	must(s.users.Bought(ctx, 2, "keys", "ru", ago(40)))
	must(s.users.Bought(ctx, 2, "giftcards", "ru", ago(200))) // older: last stays 40 days ago
	must(s.users.Bought(ctx, 5, "stars", "en", ago(100)))
	must(s.users.Bought(ctx, 6, "gifts", "en", ago(1)))
	must(s.users.Seen(ctx, 2, "", ago(2)))
	must(s.users.Seen(ctx, 5, "", ago(1)))
	_, _, err = s.wallets.Credit(ctx, 5, decimal.RequireFromString("5.00"), "c5", "", "admin")
	must(err)
	_, _, err = s.wallets.Credit(ctx, 8, decimal.RequireFromString("2.00"), "c8", "", "admin")
	must(err)
	_, err = s.wallets.Debit(ctx, 8, decimal.RequireFromString("2.00"), "d8", "")
	must(err)
	must(s.users.SetMarketingOff(ctx, 6, true, ago(3)))
	must(s.users.SetBlocked(ctx, 7, true, ago(20)))
	return s
}

// members returns the ids in audience a, walking the store as a
// broadcast does.
func (s *buyerStore) members(t *testing.T, a state.Audience) []int64 {
	t.Helper()
	var out []int64
	var wallets *records.Wallets
	if a.NeedsWallet() {
		wallets = s.wallets
	}
	err := s.users.Walk(t.Context(), wallets, func(page []state.BuyerProfile) error {
		for _, p := range page {
			if a.Match(p, s.now) {
				out = append(out, p.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// Every audience of a store of buyers with known histories has exactly
// the members their histories say.
func TestAudiencesOfBuyersWithKnownHistories(t *testing.T) {
	s := newBuyerStore(t)
	for _, c := range []struct {
		audience string
		want     []int64
	}{
		{"all", []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"lang:ru", []int64{2, 4}},
		{"lang:en", []int64{1, 5, 6}},
		{"lang:uk", []int64{3, 7}},
		{"line:giftcards", []int64{1, 2}},
		{"line:keys", []int64{2}},
		{"line:stars", []int64{5}},
		{"line:topup", nil},
		{"recent:30", []int64{1, 6}},
		{"recent:45", []int64{1, 2, 6}},
		{"inactive:60", []int64{4, 8}},
		{"inactive:5", []int64{3, 4, 7, 8}},
		{"wallet", []int64{5}},
		{"never", []int64{3, 4, 7, 8}},
		{"referred", []int64{3, 7}},
	} {
		a, err := state.ParseAudience(c.audience)
		if err != nil {
			t.Fatalf("%s: %v", c.audience, err)
		}
		if got := s.members(t, a); !slices.Equal(got, c.want) {
			t.Errorf("%s: members %v, want %v", c.audience, got, c.want)
		}
	}
	count, err := s.users.CountAudience(t.Context(), state.Audience{Kind: state.AudienceAll}, s.now, s.wallets)
	if err != nil || count != (state.AudienceCount{Members: 8, OptedOut: 1, Blocked: 1}) || count.Reach() != 6 {
		t.Fatalf("count of all: %+v %v", count, err)
	}
	count, err = s.users.CountAudience(t.Context(), state.Audience{Kind: state.AudienceWallet}, s.now, s.wallets)
	if err != nil || count.Members != 1 {
		t.Fatalf("count of wallet holders: %+v %v", count, err)
	}
}

// Audiences are read page by page: a store of more buyers than a page
// counts each once.
func TestAudienceWalksEveryPage(t *testing.T) {
	r := statetest.New(t)
	users := records.NewUsers(r.Client, r.Prefix)
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	n := records.ProfilePage*2 + 7
	for id := 1; id <= n; id++ {
		if err := users.Started(ctx, int64(id), now.Add(-time.Duration(id)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if id%3 == 0 {
			if err := users.Bought(ctx, int64(id), "keys", "en", now); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := users.CountAudience(ctx, state.Audience{Kind: state.AudienceLine, Line: "keys"}, now, nil)
	if err != nil || c.Members != int64(n/3) {
		t.Fatalf("keys buyers %+v %v, want %d", c, err, n/3)
	}
}

// The orders delivered before profiles were kept fill them once: the
// line, the last purchase and the language; a refunded order is no
// purchase.
func TestFillProfilesFromDeliveredOrders(t *testing.T) {
	r := statetest.New(t)
	users := records.NewUsers(r.Client, r.Prefix)
	orders := records.NewOrders(r.Client, r.Prefix)
	ctx := t.Context()
	paid := time.Date(2026, 5, 20, 9, 0, 0, 0, time.UTC)
	for i, line := range []string{"keys", "stars", "gifts"} {
		o := paidOrder(int64(40+i), fmt.Sprintf("q%d", i), fmt.Sprintf("c%d", i))
		o.Line, o.Lang, o.PaidAt = line, "ru", paid
		o = mustCreatePaid(t, orders, o)
		if err := users.Started(ctx, o.UserID, paid.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		to := state.OrderDelivered
		if line == "gifts" {
			to = state.OrderRefunded
		}
		mustDrive(t, orders, o.ID, to)
	}
	if filled, _ := users.ProfilesFilled(ctx); filled {
		t.Fatal("profiles filled before FillProfiles")
	}
	n, err := users.FillProfiles(ctx, orders)
	if err != nil || n != 2 {
		t.Fatalf("FillProfiles recorded %d orders, %v; want 2", n, err)
	}
	if filled, _ := users.ProfilesFilled(ctx); !filled {
		t.Fatal("profiles not marked filled")
	}
	ps, err := users.Profiles(ctx, 0, 10, nil)
	if err != nil || len(ps) != 3 {
		t.Fatalf("profiles %+v %v", ps, err)
	}
	for _, p := range ps {
		bought := p.ID != 42
		if got := !p.LastBuy.IsZero(); got != bought || bought && (!p.LastBuy.Equal(paid) || p.Lang != "ru" || len(p.Lines) != 1) {
			t.Fatalf("profile %+v", p)
		}
	}
}

// mustDrive moves a paid order along its lifecycle to delivered (through
// placing and placed) or refunded (through refunding).
func mustDrive(t *testing.T, s *records.Orders, id int64, to string) {
	t.Helper()
	steps := map[string][]string{
		state.OrderDelivered: {state.OrderPlacing, state.OrderPlaced, state.OrderDelivered},
		state.OrderRefunded:  {state.OrderRefunding, state.OrderRefunded},
	}[to]
	from := state.OrderPaid
	for _, st := range steps {
		if _, err := s.Transition(t.Context(), id, []string{from}, st, func(*state.Order) error { return nil }, ""); err != nil {
			t.Fatalf("order %d %s -> %s: %v", id, from, st, err)
		}
		from = st
	}
}
