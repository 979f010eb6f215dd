package catalog_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/catalog"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state/statetest"
)

// upstream is the simulator behind a real client, counting requests per path.
type upstream struct {
	sim   *resellersim.Sim
	mu    sync.Mutex
	count map[string]int
}

func (u *upstream) requests(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.count[path]
}

func newShop(t *testing.T) (*flows.Engine, *upstream, *work.Cache, *atomic.Int64) {
	t.Helper()
	u := &upstream{sim: resellersim.New(resellersim.Config{Seed: 1}), count: map[string]int{}}
	u.sim.OnRequest(func(r *http.Request, _ []byte) {
		u.mu.Lock()
		u.count[r.URL.Path]++
		u.mu.Unlock()
	})
	srv := httptest.NewServer(u.sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	r := statetest.New(t)
	cache := work.NewCache(r.Client, r.Prefix)
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC).UnixNano())
	cache.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	e := flows.NewEngine(nil, locales.En)
	cat := catalog.New(client, cache, 5*time.Minute)
	sh := &shop.Shop{
		Catalog: cat,
		Funds:   cat,
		Pricing: shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(r.Client, r.Prefix)},
		Limiter: redisstore.NewLimiter(r.Client, r.Prefix, 10, time.Minute),
	}
	lines.Register(e, sh)
	return e, u, cache, &clock
}

const cardsPath = "/api/v1/gift-cards/categories/" + simcatalog.DemoGiftCategory + "/cards"

func browse(t *testing.T, e *flows.Engine, user int64) (*flows.Reply, flows.Session) {
	t.Helper()
	s := flows.Session{}
	r, err := e.Handle(context.Background(), &s, flows.Event{Kind: flows.EvCommand, Command: "start", Arg: "gc-" + simcatalog.DemoGiftCategory,
		Now: time.Now(), User: flows.User{ID: user, LanguageCode: "en"}})
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

// A thousand buyers opening one category at once cost one upstream request
// per cache period: hit, miss after the period, stampede held to one fetch.
func TestThousandBrowsesCostOneUpstreamRequestPerPeriod(t *testing.T) {
	e, u, cache, clock := newShop(t)
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() {
			r, s := browse(t, e, int64(i+1))
			if s.Step != "cards" || !strings.Contains(r.Screen.Text, "Apple") {
				t.Errorf("buyer %d: step %q text %q", i, s.Step, r.Screen.Text)
			}
		})
	}
	wg.Wait()
	if n := u.requests(cardsPath); n != 1 {
		t.Fatalf("a stampede of 1000 browses made %d upstream requests, want 1", n)
	}
	st := cache.Stats()
	// Two fetches: the cards and the upstream balance that pauses items.
	if st.Fetches != 2 || u.requests("/api/v1/me") != 1 || st.Hits+st.Misses < 1000 {
		t.Fatalf("cache stats %+v", st)
	}
	browse(t, e, 1) // a hit
	if n := u.requests(cardsPath); n != 1 {
		t.Fatalf("a fresh copy was fetched again: %d requests", n)
	}
	clock.Add(int64(5*time.Minute + time.Second)) // the period is over: a miss
	browse(t, e, 1)
	if n := u.requests(cardsPath); n != 2 {
		t.Fatalf("after the period: %d requests, want 2", n)
	}
}

func TestUpstreamFailureServesTheStaleCopyWithANote(t *testing.T) {
	e, u, _, clock := newShop(t)
	browse(t, e, 1)
	clock.Add(int64(6 * time.Minute))
	u.sim.FailNextOn("/gift-cards/categories", 5, http.StatusInternalServerError)
	r, s := browse(t, e, 2)
	if s.Step != "cards" || !strings.Contains(r.Screen.Text, locales.T(locales.En, "catalog.stale")) {
		t.Fatalf("stale copy: step %q text %q", s.Step, r.Screen.Text)
	}
}

func TestHiddenAndSoldOutCardsAreNotChoosable(t *testing.T) {
	e, _, _, _ := newShop(t)
	_, s := browse(t, e, 1)
	ids := strings.Split(s.Get("ids"), "\x1f")
	if !slices.Contains(ids, simcatalog.DemoGiftCard) || slices.Contains(ids, simcatalog.DemoGiftCardHidden) || slices.Contains(ids, simcatalog.DemoGiftCardOutOfStock) {
		t.Fatalf("choosable cards %q", ids)
	}
}

func TestHiddenCategoriesNeverReachTheBrandList(t *testing.T) {
	e, _, _, _ := newShop(t)
	s := flows.Session{}
	ev := flows.Event{Kind: flows.EvCommand, Command: "giftcards", Now: time.Now(), User: flows.User{ID: 1, LanguageCode: "en"}}
	if _, err := e.Handle(context.Background(), &s, ev); err != nil {
		t.Fatal(err)
	}
	ev = flows.Event{Kind: flows.EvButton, Button: flows.Callback{Version: flows.CallbackVersion, Nonce: s.Nonce, Action: "i", Arg: "0"}, Now: time.Now(), User: ev.User}
	r, err := e.Handle(context.Background(), &s, ev) // the first brand: Apple
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Split(s.Get("ids"), "\x1f")
	if s.Step != "regions" || !slices.Contains(ids, simcatalog.DemoGiftCategory) || slices.Contains(ids, simcatalog.DemoGiftCategoryHidden) {
		t.Fatalf("step %q regions %q screen %q", s.Step, ids, r.Screen.Text)
	}
}

// The upstream balance is read once per BalanceTTL however many buyers
// browse, and an item it cannot cover is shown as temporarily unavailable.
func TestLowUpstreamBalancePausesItemsAndIsReadOncePerPeriod(t *testing.T) {
	e, u, _, clock := newShop(t)
	r, _ := browse(t, e, 1)
	if strings.Contains(r.Screen.Text, "temporarily unavailable") {
		t.Fatalf("a funded account paused items:\n%s", r.Screen.Text)
	}
	u.sim.SetBalance(decimal.RequireFromString("0.50"))
	for i := range 50 {
		browse(t, e, int64(i+2)) // still the cached balance
	}
	if n := u.requests("/api/v1/me"); n != 1 {
		t.Fatalf("50 browses read the balance %d times, want 1", n)
	}
	clock.Add(int64(catalog.BalanceTTL + time.Second))
	r, _ = browse(t, e, 99)
	if n := u.requests("/api/v1/me"); n != 2 {
		t.Fatalf("after the period: %d balance reads, want 2", n)
	}
	if !strings.Contains(r.Screen.Text, "temporarily unavailable") {
		t.Fatalf("a balance of 0.50 paused nothing:\n%s", r.Screen.Text)
	}
	for _, row := range r.Screen.Rows {
		for _, b := range row {
			if b.Action == "i" {
				t.Fatalf("an item the balance cannot cover can still be picked: %+v", b)
			}
		}
	}
}

// The quote store keeps a flows quote as the shop's record and gives it
// back whole; an unknown id is flows.ErrNoQuote.
func TestQuotesKeepFlowsQuotes(t *testing.T) {
	r := statetest.New(t)
	qs := catalog.Quotes{Store: records.NewQuotes(r.Client, r.Prefix)}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	q := &flows.Quote{Line: "giftcards", Item: "c", Fields: map[string]string{"a": "b"}, Quantity: 2,
		UpstreamUSD: decimal.RequireFromString("20.70"), ShopUSD: decimal.RequireFromString("22.78"), Stars: 1754,
		ChatID: 7, UserID: 7, Created: now, Expires: now.Add(15 * time.Minute)}
	if err := qs.Save(t.Context(), q); err != nil || q.ID == "" {
		t.Fatalf("save: %v, id %q", err, q.ID)
	}
	got, err := qs.Load(t.Context(), q.ID)
	if err != nil || got.Fields["a"] != "b" || !got.ShopUSD.Equal(q.ShopUSD) || got.Stars != 1754 || !got.Expires.Equal(q.Expires) {
		t.Fatalf("load: %+v, %v", got, err)
	}
	if _, err := qs.Load(t.Context(), "nope"); !errors.Is(err, flows.ErrNoQuote) {
		t.Fatalf("unknown quote: %v", err)
	}
}

// Upstream answers reach the flows as their kinds of error.
func TestUpstreamErrorsAreFlowsErrors(t *testing.T) {
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(client, nil, time.Minute) // uncached
	if _, _, err := cat.GiftCardOffers(t.Context(), "no-such-category"); !errors.Is(err, flows.ErrNotFound) {
		t.Fatalf("unknown category: %v", err)
	}
	offers, _, err := cat.GiftCardOffers(t.Context(), simcatalog.DemoGiftCategory)
	if err != nil || len(offers.Offers) == 0 || !offers.Offers[0].PriceUSD.IsPositive() {
		t.Fatalf("offers %+v, %v", offers, err)
	}
}
