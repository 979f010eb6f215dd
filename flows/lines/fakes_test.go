package lines_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/catalog"
	"shopbot/flows"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
)

// The flows' ports as the tests fake them, one small in-memory fake each:
// the catalog (the simulator's, uncached, with a few lines of its own), the
// quote store, the rate limit and the upstream balance. None needs Redis.

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// fakeCatalog is a small in-memory catalog; Stale marks every answer
// stale and Err fails every call.
type fakeCatalog struct {
	flows.Catalog // the simulator's, for what is not faked here
	Stale         bool
	Err           error
}

func (c *fakeCatalog) GiftCardBrands(context.Context) ([]flows.Brand, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	b := []flows.Brand{{Name: "Apple", Categories: []flows.Category{
		{ID: "apple-us", Region: "US", Image: fakeAppleImage}, {ID: "apple-tr", Region: "TR"}}}}
	for i := 1; i <= 19; i++ {
		id := fmt.Sprintf("brand-%02d", i)
		b = append(b, flows.Brand{Name: fmt.Sprintf("Brand %02d", i), Categories: []flows.Category{{ID: id + "-us", Region: "US"}}})
	}
	b = append(b, flows.Brand{Name: "Empty"})
	return b, c.Stale, nil
}

func (c *fakeCatalog) GiftCardSearch(_ context.Context, q string) ([]flows.Category, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	if strings.Contains(strings.ToLower(q), "apple") {
		return []flows.Category{{ID: "apple-us", Name: "Apple <US>"}, {ID: "apple-tr", Name: "Apple TR"}}, c.Stale, nil
	}
	return nil, c.Stale, nil
}

// fakeAppleImage is the image of the fake's apple-us category.
const fakeAppleImage = "https://up.example/images/apple.png"

func (c *fakeCatalog) GiftCardOffers(_ context.Context, id string) (*flows.Offers, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	if id != "apple-us" {
		return nil, false, fmt.Errorf("category %q: %w", id, flows.ErrNotFound)
	}
	return &flows.Offers{CategoryID: id, Name: "Apple <US>", Image: fakeAppleImage, Offers: []flows.Offer{
		{ID: "apple-us-10", Name: "Apple 10 USD", PriceUSD: dec("10.35"), Stock: 250, MinQuantity: 1, MaxQuantity: 50},
		{ID: "apple-us-25", Name: "Apple 25 USD", PriceUSD: dec("25.80"), Stock: 3, MinQuantity: 1, MaxQuantity: 50},
		{ID: "apple-us-5", Name: "Apple 5 USD", PriceUSD: dec("5.20"), Stock: 0, MinQuantity: 1, MaxQuantity: 50},
	}}, c.Stale, nil
}

func (c *fakeCatalog) StarsPricing(context.Context) (*flows.StarsPricing, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	return &flows.StarsPricing{PricePerStar: dec("0.0150"), Min: 50, Max: 10000}, c.Stale, nil
}

func (c *fakeCatalog) PremiumPlans(context.Context) ([]flows.PremiumPlan, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	return []flows.PremiumPlan{{Months: 3, PriceUSD: dec("11.99")}, {Months: 6, PriceUSD: dec("15.99")}, {Months: 12, PriceUSD: dec("28.99")}}, c.Stale, nil
}

// simCatalog is the catalog over the upstream simulator's default catalog,
// uncached.
func simCatalog(t *testing.T) flows.Catalog {
	t.Helper()
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	return catalog.New(client, nil, time.Minute)
}

// memQuotes is an in-memory QuoteStore.
type memQuotes struct {
	mu sync.Mutex
	m  map[string]flows.Quote
	n  int
}

func (q *memQuotes) Save(_ context.Context, x *flows.Quote) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[string]flows.Quote{}
	}
	q.n++
	x.ID = fmt.Sprintf("q%d", q.n)
	q.m[x.ID] = *x
	return nil
}

func (q *memQuotes) Load(_ context.Context, id string) (*flows.Quote, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	x, ok := q.m[id]
	if !ok {
		return nil, flows.ErrNoQuote
	}
	return &x, nil
}

// countLimiter allows Limit actions in total.
type countLimiter struct{ Limit, n int }

func (l *countLimiter) Allow(context.Context, string) (bool, time.Duration, error) {
	l.n++
	return l.n <= l.Limit, 42 * time.Second, nil
}

// fixedFunds is an upstream balance that tests set; Err makes it unknown.
type fixedFunds struct {
	Balance decimal.Decimal
	Err     error
}

func (f *fixedFunds) UpstreamBalance(context.Context) (decimal.Decimal, error) {
	return f.Balance, f.Err
}
