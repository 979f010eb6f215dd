package flows

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/catalog"
	"shopbot/flows/golden"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state"
	"shopbot/state/statetest"
)

func money(s string) reseller.Money { return reseller.NewMoney(decimal.RequireFromString(s)) }

// fakeCatalog is a small in-memory catalog; Stale marks every answer
// stale and Err fails every call.
type fakeCatalog struct {
	Catalog // the simulator's, for what is not faked here
	Stale   bool
	Err     error
}

func (c *fakeCatalog) GiftCardBrands(context.Context) ([]reseller.GiftCardBrand, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	b := []reseller.GiftCardBrand{{Brand: "Apple", Subcategories: []reseller.GiftCardSubcategory{
		{CategoryID: "apple-us", Region: "US"}, {CategoryID: "apple-tr", Region: "TR"}}}}
	for i := 1; i <= 19; i++ {
		id := fmt.Sprintf("brand-%02d", i)
		b = append(b, reseller.GiftCardBrand{Brand: fmt.Sprintf("Brand %02d", i), Subcategories: []reseller.GiftCardSubcategory{{CategoryID: id + "-us", Region: "US"}}})
	}
	b = append(b, reseller.GiftCardBrand{Brand: "Empty"})
	return b, c.Stale, nil
}

func (c *fakeCatalog) GiftCardSearch(_ context.Context, q string) ([]reseller.GiftCategory, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	if strings.Contains(strings.ToLower(q), "apple") {
		return []reseller.GiftCategory{{CategoryID: "apple-us", Name: "Apple <US>"}, {CategoryID: "apple-tr", Name: "Apple TR"}}, c.Stale, nil
	}
	return nil, c.Stale, nil
}

func (c *fakeCatalog) GiftCardOffers(_ context.Context, id string) (*reseller.GiftCardOffers, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	if id != "apple-us" {
		return nil, false, &reseller.Error{Status: 404, Type: reseller.ErrorTypeNotFound}
	}
	return &reseller.GiftCardOffers{CategoryID: id, Name: "Apple <US>", Offers: []reseller.GiftCardOffer{
		{CardID: "apple-us-10", Name: "Apple 10 USD", PriceUSD: money("10.35"), Stock: 250, MinQuantity: 1, MaxQuantity: 50},
		{CardID: "apple-us-25", Name: "Apple 25 USD", PriceUSD: money("25.80"), Stock: 3, MinQuantity: 1, MaxQuantity: 50},
		{CardID: "apple-us-5", Name: "Apple 5 USD", PriceUSD: money("5.20"), Stock: 0, MinQuantity: 1, MaxQuantity: 50},
	}}, c.Stale, nil
}

func (c *fakeCatalog) StarsPricing(context.Context) (*reseller.StarsPricing, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	return &reseller.StarsPricing{PricePerStar: money("0.0150"), Min: 50, Max: 10000}, c.Stale, nil
}

func (c *fakeCatalog) PremiumPricing(context.Context) (*reseller.PremiumPricing, bool, error) {
	if c.Err != nil {
		return nil, false, c.Err
	}
	return &reseller.PremiumPricing{Plans: []reseller.PremiumPlan{{Months: 3, PriceUSD: money("11.99")}, {Months: 6, PriceUSD: money("15.99")}, {Months: 12, PriceUSD: money("28.99")}}}, c.Stale, nil
}

// memQuotes is an in-memory QuoteStore.
type memQuotes struct {
	mu sync.Mutex
	m  map[string]state.Quote
	n  int
}

func (q *memQuotes) Save(_ context.Context, x *state.Quote) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil {
		q.m = map[string]state.Quote{}
	}
	q.n++
	x.ID = fmt.Sprintf("q%d", q.n)
	q.m[x.ID] = *x
	return nil
}

func (q *memQuotes) Load(_ context.Context, id string) (*state.Quote, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	x, ok := q.m[id]
	if !ok {
		return nil, state.ErrNoQuote
	}
	return &x, nil
}

// countLimiter allows Limit actions in total.
type countLimiter struct{ Limit, n int }

func (l *countLimiter) Allow(context.Context, string) (bool, time.Duration, error) {
	l.n++
	return l.n <= l.Limit, 42 * time.Second, nil
}

func testPricing() Pricing {
	return Pricing{
		Markup:       Markup{Percent: decimal.NewFromInt(10)},
		Lines:        map[string]Markup{"premium": {Percent: decimal.NewFromInt(5), Fixed: decimal.RequireFromString("0.50")}},
		StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true,
	}
}

// world is one chat driven through the engine with the test shop.
type world struct {
	t      *testing.T
	e      *Engine
	shop   *Shop
	cat    *fakeCatalog
	quotes *memQuotes
	s      Session
	now    time.Time
	user   User
	last   *Reply
	out    strings.Builder
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, cat: &fakeCatalog{Catalog: simCatalog(t)}, quotes: &memQuotes{}, now: now, user: User{ID: 77, LanguageCode: "en", Username: "buyer_one"}}
	w.e = testEngine()
	w.shop = &Shop{Catalog: w.cat, Pricing: testPricing(), Quotes: w.quotes, QuoteTTL: 15 * time.Minute, PerPage: 8}
	w.shop.Register(w.e)
	return w
}

// do runs one scripted input: "/cmd arg", "tap:<label prefix>", a
// "stale:<label prefix>" press with an old nonce, "wait:<duration>", or
// plain text.
func (w *world) do(in string) {
	w.t.Helper()
	ev := Event{Now: w.now, User: w.user}
	switch {
	case strings.HasPrefix(in, "wait:"):
		d, err := time.ParseDuration(in[5:])
		if err != nil {
			w.t.Fatal(err)
		}
		w.now = w.now.Add(d)
		fmt.Fprintf(&w.out, "> %s\n\n", in)
		return
	case strings.HasPrefix(in, "/"):
		cmd, arg, _ := strings.Cut(in[1:], " ")
		ev.Kind, ev.Command, ev.Arg = EvCommand, cmd, arg
	case strings.HasPrefix(in, "tap:"), strings.HasPrefix(in, "stale:"):
		kind, label, _ := strings.Cut(in, ":")
		b := w.button(label)
		cb, ok := DecodeCallback(b.Data)
		if !ok {
			w.t.Fatalf("button %q has bad data %q", b.Text, b.Data)
		}
		if kind == "stale" {
			cb.Nonce = "old"
		}
		ev.Kind, ev.Button = EvButton, cb
	default:
		ev.Kind, ev.Text = EvText, in
	}
	r, err := w.e.Handle(context.Background(), &w.s, ev)
	if err != nil {
		w.t.Fatalf("%q: %v", in, err)
	}
	if r.Screen != nil {
		w.last = r
	}
	w.record(in, r)
}

func (w *world) button(prefix string) Button {
	w.t.Helper()
	if w.last == nil || w.last.Screen == nil {
		w.t.Fatalf("no screen to tap %q on", prefix)
	}
	for _, row := range w.last.Screen.Rows {
		for _, b := range row {
			if strings.HasPrefix(b.Text, prefix) {
				return b
			}
		}
	}
	w.t.Fatalf("no button %q on %q", prefix, w.last.Screen.Text)
	return Button{}
}

func (w *world) record(in string, r *Reply) {
	fmt.Fprintf(&w.out, "> %s\n", in)
	if r.Answer != "" {
		fmt.Fprintf(&w.out, "answer (alert=%v): %s\n", r.Alert, r.Answer)
	}
	for _, n := range r.Notices {
		fmt.Fprintf(&w.out, "notice: %s\n", n.Text)
	}
	if r.Screen != nil && !r.NoScreen {
		fmt.Fprintf(&w.out, "screen [%s/%s]:\n%s\n", w.s.Flow, w.s.Step, r.Screen.Text)
		for _, row := range r.Screen.Rows {
			var cells []string
			for _, b := range row {
				if len(b.Data) > MaxCallbackData {
					w.t.Errorf("button %q data %d bytes", b.Text, len(b.Data))
				}
				_, action, _ := strings.Cut(strings.TrimPrefix(b.Data, CallbackVersion+":"), ":")
				cells = append(cells, fmt.Sprintf("[%s | %s]", b.Text, action))
			}
			fmt.Fprintf(&w.out, "  %s\n", strings.Join(cells, " "))
		}
	}
	w.out.WriteString("\n")
}

// golden compares the transcript with testdata/<name>.golden.
func (w *world) golden(name string) {
	w.t.Helper()
	golden.Check(w.t, name, w.out.String())
}

// script is one row of a line's table: inputs and what must hold after.
type script struct {
	name  string
	lang  string
	in    []string
	check func(t *testing.T, w *world)
}

func runScripts(t *testing.T, line string, scripts []script) {
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			w := newWorld(t)
			if sc.lang != "" {
				w.user.LanguageCode = sc.lang
			}
			for _, in := range sc.in {
				w.do(in)
			}
			w.golden(filepath.Join(line, goldenName(sc.name)))
			if sc.check != nil {
				sc.check(t, w)
			}
		})
	}
}

// goldenName turns a script name into a file name: letters, digits, - and _.
func goldenName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

func atStep(flow, step string) func(t *testing.T, w *world) {
	return func(t *testing.T, w *world) {
		t.Helper()
		if w.s.Flow != flow || w.s.Step != step {
			t.Fatalf("at %s/%s, want %s/%s", w.s.Flow, w.s.Step, flow, step)
		}
	}
}

func lastQuote(t *testing.T, w *world) *state.Quote {
	t.Helper()
	q, err := w.quotes.Load(context.Background(), w.s.Get("quote"))
	if err != nil {
		t.Fatalf("no quote: %v", err)
	}
	return q
}

func TestStarsLine(t *testing.T) {
	runScripts(t, "stars", []script{
		{name: "good @username and quick button", in: []string{"/stars", "@durov", "tap:500", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			// 500 * 0.015 = 7.50 upstream; +10% = 8.25; 8.25/0.013 = 634.6 -> 635 Stars.
			if q.Line != "stars" || q.Quantity != 500 || q.Fields["username"] != "durov" || !q.ShopUSD.Equal(decimal.RequireFromString("8.25")) || q.Stars != 635 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "t.me link and free entry", lang: "ru", in: []string{"/stars", "https://t.me/Durov_Bot/", "1 234"}, check: atStep("stars", stepConfirm)},
		{name: "for me", lang: "uk", in: []string{"/start stars", "tap:🙋", "tap:50"}, check: atStep("stars", stepConfirm)},
		{name: "bad usernames keep the question", in: []string{"/stars", "@abc", "1durov", "durov_", "du__rov", "some text", "durov"}, check: atStep("stars", msQty)},
		{name: "bad quantities keep the answer", in: []string{"/stars", "durov", "49", "10001", "many", "tap:⬅️"}, check: func(t *testing.T, w *world) {
			if w.s.Step != msUser {
				t.Fatalf("step %q", w.s.Step)
			}
		}},
		{name: "back at every step", in: []string{"/stars", "durov", "tap:100", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: func(t *testing.T, w *world) {
			if w.s.Flow != "" {
				t.Fatalf("back from the first step must reach the main menu: %+v", w.s)
			}
		}},
		{name: "edit from confirmation", in: []string{"/stars", "durov", "tap:100", "tap:✏️", "250"}, check: func(t *testing.T, w *world) {
			if q := lastQuote(t, w); q.Quantity != 250 || q.Fields["username"] != "durov" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "expired quote is repriced", in: []string{"/stars", "durov", "tap:100", "wait:16m", "tap:💳"}, check: func(t *testing.T, w *world) {
			if q := lastQuote(t, w); q.ID != "q2" || q.Expired(w.now) {
				t.Fatalf("expected a fresh second quote, got %+v", q)
			}
		}},
		{name: "cancel mid-flow", in: []string{"/stars", "durov", "/cancel"}, check: func(t *testing.T, w *world) {
			if w.s.Flow != "" || len(w.s.Data) != 0 {
				t.Fatalf("cancel left %+v", w.s)
			}
		}},
		{name: "stale button", in: []string{"/stars", "durov", "stale:100"}, check: atStep("stars", msQty)},
	})
}

func TestPremiumLine(t *testing.T) {
	runScripts(t, "premium", []script{
		{name: "good", in: []string{"/premium", "t.me/durov", "tap:6 months", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			// 15.99 * 1.05 + 0.50 = 17.2895 -> 17.29 USD; /0.013 = 1330 Stars.
			if q.Item != "6" || !q.ShopUSD.Equal(decimal.RequireFromString("17.29")) || q.Stars != 1330 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "russian", lang: "ru", in: []string{"/premium", "durov", "tap:12"}, check: atStep("premium", stepConfirm)},
		{name: "text where a plan is expected", in: []string{"/premium", "durov", "6"}, check: atStep("premium", msPlan)},
		{name: "back at every step", in: []string{"/premium", "durov", "tap:3 months", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
	})
}

func TestGiftCardsLine(t *testing.T) {
	runScripts(t, "giftcards", []script{
		{name: "browse brand region card quantity", in: []string{"/giftcards", "tap:Apple", "tap:US", "tap:Apple 10 USD", "tap:5", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			// The unit as shown: 10.35 +10% = 11.385 -> 11.39 USD; /0.013 = 876.2 -> 877 Stars.
			// The total is exactly 5 units: 56.95 USD, 4,385 Stars (not 4,380 from 56.93).
			if q.Category != "apple-us" || q.Item != "apple-us-10" || q.Quantity != 5 || !q.ShopUSD.Equal(decimal.RequireFromString("56.95")) || q.Stars != 5*877 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "entry from the main menu", in: []string{"/start", "tap:💳 Gift cards"}, check: atStep("giftcards", gcBrands)},
		{name: "search", lang: "ru", in: []string{"/giftcards", "tap:🔍", "apple", "tap:Apple <US>", "tap:Apple 25"}, check: atStep("giftcards", gcQty)},
		{name: "search by text and nothing found", in: []string{"/giftcards", "nothing-like-this", "tap:⬅️"}, check: atStep("giftcards", gcBrands)},
		{name: "bad quantities", lang: "uk", in: []string{"/giftcards", "apple", "tap:Apple <US>", "tap:Apple 25", "0", "4", "51", "two", "3"}, check: func(t *testing.T, w *world) {
			if q := lastQuote(t, w); q.Quantity != 3 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "pagination to the last page and back", in: []string{"/giftcards", "tap:Next", "tap:Next", "tap:◀️", "tap:◀️", "tap:Apple"}, check: atStep("giftcards", gcRegions)},
		{name: "deep link to a category", in: []string{"/start gc-apple-us", "tap:⬅️"}, check: atStep("giftcards", gcBrands)},
		{name: "deep link to an unknown category", in: []string{"/start gc-nope"}, check: atStep("giftcards", gcBrands)},
		{name: "back at every step", in: []string{"/giftcards", "tap:Apple", "tap:US", "tap:Apple 10", "tap:1", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
		{name: "cancel mid-flow", in: []string{"/giftcards", "tap:Apple", "tap:✖️"}, check: atStep("", "")},
		{name: "stale button", in: []string{"/giftcards", "tap:Apple", "stale:US"}, check: atStep("giftcards", gcRegions)},
	})
}

func TestSoldOutCardIsNotChoosable(t *testing.T) {
	w := newWorld(t)
	w.do("/start gc-apple-us")
	for _, row := range w.last.Screen.Rows {
		for _, b := range row {
			if strings.HasPrefix(b.Text, "Apple 5 USD") {
				t.Fatalf("sold-out card has a button: %+v", b)
			}
		}
	}
	if !strings.Contains(w.last.Screen.Text, "<s>Apple 5 USD</s>") || !strings.Contains(w.last.Screen.Text, "Apple &lt;US&gt;") {
		t.Fatalf("screen = %q", w.last.Screen.Text)
	}
	// A press on the sold-out card's old index (stock changed since) is refused.
	w.s.Set("ids", "apple-us-5")
	w.do("tap:Apple 10")
	if w.s.Step != gcCards {
		t.Fatalf("a sold-out card was chosen: step %q", w.s.Step)
	}
}

func TestStaleCatalogAndFailures(t *testing.T) {
	w := newWorld(t)
	w.cat.Stale = true
	w.do("/giftcards")
	if !strings.Contains(w.last.Screen.Text, locales.T(locales.En, "catalog.stale")) {
		t.Fatalf("stale copy without the note: %q", w.last.Screen.Text)
	}
	w.cat.Stale, w.cat.Err = false, fmt.Errorf("upstream down")
	w.do("/stars")
	w.do("durov")
	if !strings.Contains(w.last.Screen.Text, locales.T(locales.En, "catalog.unavailable")) {
		t.Fatalf("failure screen = %q", w.last.Screen.Text)
	}
	w.cat.Err = nil
	w.do("tap:🔄")
	if w.s.Step != msQty || !strings.Contains(w.last.Screen.Text, "100 Stars cost") {
		t.Fatalf("retry: %s %q", w.s.Step, w.last.Screen.Text)
	}
}

func TestQuotesAreRateLimited(t *testing.T) {
	w := newWorld(t)
	w.shop.Limiter = &countLimiter{Limit: 1}
	w.do("/stars")
	w.do("durov")
	w.do("tap:100")
	w.do("tap:✏️")
	w.do("200")
	want := locales.N(locales.En, "err.rate_limited", 42)
	if !strings.Contains(w.out.String(), want) || w.s.Step != msQty {
		t.Fatalf("the second quote was not refused politely:\n%s", w.out.String())
	}
}

func TestPricing(t *testing.T) {
	p := testPricing()
	for _, c := range []struct {
		line, up, usd string
		stars         int64
	}{
		{"stars", "1", "1.10", 85},           // 1.10/0.013 = 84.6
		{"stars", "0.0001", "0.01", 1},       // rounded up to a cent
		{"giftcards", "10.35", "11.39", 877}, // 11.385 -> 11.39
		{"premium", "0", "0.50", 39},         // fixed fee only
		{"stars", "1.3", "1.43", 110},        // exact: 1.43/0.013 = 110
	} {
		usd := p.ShopUSD(c.line, decimal.RequireFromString(c.up))
		if !usd.Equal(decimal.RequireFromString(c.usd)) || p.Stars(usd) != c.stars {
			t.Errorf("%s %s: got %s USD %d Stars, want %s %d", c.line, c.up, usd, p.Stars(usd), c.usd, c.stars)
		}
	}
	p.ShowUSD = true
	if got := p.Format(locales.En, decimal.RequireFromString("1.43")); !strings.Contains(got, "110") || !strings.Contains(got, "1.43") {
		t.Errorf("format = %q", got)
	}
}

func TestParseUsername(t *testing.T) {
	for in, want := range map[string]string{
		"@durov": "durov", "durov": "durov", "t.me/durov": "durov", "https://t.me/durov": "durov", " T.ME/Durov_Bot/ ": "Durov_Bot",
		"telegram.me/durov": "durov", "@abcd": "", "1durov": "", "durov_": "", "du__rov": "", "": "", "@": "",
		"t.me/joinchat/xyz": "", "https://example.com/durov": "", "dur ov": "", strings.Repeat("a", 33): "",
	} {
		got, ok := ParseUsername(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParseUsername(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// simCatalog is the cached catalog over the upstream simulator's default
// catalog.
func simCatalog(t *testing.T) Catalog {
	t.Helper()
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key", reseller.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	r := statetest.New(t)
	return catalog.New(client, state.NewCache(r.Client, r.Prefix), time.Minute)
}

func TestGameKeysLine(t *testing.T) {
	runScripts(t, "keys", []script{
		{name: "search and buy", in: []string{"/keys", "elden ring", "tap:ELDEN RING · GLOBAL", "tap:ELDEN RING Standard", "2", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "keys" || q.Category != resellersim.DemoGame || q.Item != resellersim.DemoGameKey || q.Quantity != 2 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "filters", lang: "ru", in: []string{"/keys", "tap:🌍", "tap:CIS", "tap:🎮", "tap:GOG", "tap:♻️"}, check: atStep("keys", gkGames)},
		{name: "region restriction is shown before choosing", in: []string{"/start key-" + resellersim.DemoGameRestricted}, check: atStep("keys", gkOffers)},
		{name: "deny list restriction", lang: "uk", in: []string{"/start key-" + resellersim.DemoGameRestrictedDeny}, check: atStep("keys", gkOffers)},
		{name: "hidden game is not found", in: []string{"/start key-" + resellersim.DemoGameHidden}, check: atStep("keys", gkGames)},
		{name: "bad quantities", in: []string{"/start key-" + resellersim.DemoGame, "tap:ELDEN RING Standard", "0", "21", "x", "1"}, check: atStep("keys", stepConfirm)},
		{name: "back at every step", in: []string{"/keys", "tap:🔍", "elden", "tap:ELDEN RING · GLOBAL", "tap:ELDEN RING Standard", "tap:1", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
		{name: "pagination to the last page and back", in: []string{"/keys", "tap:Next", "tap:Next", "tap:Next", "tap:◀️", "tap:◀️", "tap:◀️"}, check: atStep("keys", gkGames)},
	})
}

func TestTopUpsLine(t *testing.T) {
	runScripts(t, "games", []script{
		{name: "browse and fill the field", in: []string{"/games", "tap:PUBG Mobile", "tap:PUBG Mobile UC (Global) ", "tap:60 UC", "  5123456789  ", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "games" || q.Category != resellersim.DemoTopUpCategory || q.Item != resellersim.DemoTopUpOffer || q.Fields["player_id"] != "5123456789" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "two fields with bad answers and back", lang: "ru", in: []string{"/start tu-" + resellersim.DemoTopUpCategoryTwoFields, "tap:", "", "12345", "tap:⬅️", "tap:✅", strings.Repeat("9", 257), "line\none", "2001"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if len(q.Fields) != 2 || q.Fields["zone_id"] != "2001" || q.Fields["user_id"] != "12345" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "edit keeps earlier answers", lang: "uk", in: []string{"/start tu-" + resellersim.DemoTopUpCategorySelect, "tap:", "700123456", "europe", "tap:✏️", "tap:✅", "tap:Asia"}, check: func(t *testing.T, w *world) {
			if q := lastQuote(t, w); q.Fields["server"] != "Asia" || len(q.Fields) != 2 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "search", in: []string{"/games", "tap:🔍", "genshin", "tap:Genshin"}, check: atStep("games", tuOffers)},
		{name: "hidden category is not found", in: []string{"/start tu-" + resellersim.DemoTopUpCategoryHidden}, check: atStep("games", tuBrands)},
		{name: "back at every step", in: []string{"/games", "tap:PUBG Mobile", "tap:PUBG Mobile UC (Global) ", "tap:60 UC", "1", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
	})
}

// TestTypedFieldsRefusedBeforeQuote drives a wrong answer of every field kind:
// each is refused with its reason, the earlier answers stay, and no quote
// (so no invoice) exists until the answer is right.
func TestTypedFieldsRefusedBeforeQuote(t *testing.T) {
	noQuote := func(flow string) func(t *testing.T, w *world) {
		return func(t *testing.T, w *world) {
			t.Helper()
			atStep(flow, stepFields)(t, w)
			if w.s.Get("quote") != "" || len(w.quotes.m) != 0 {
				t.Fatalf("a wrong answer was quoted: %v", w.quotes.m)
			}
		}
	}
	runScripts(t, "fields", []script{
		{name: "number and select", in: []string{"/start tu-" + resellersim.DemoTopUpCategorySelect, "tap:", "abc", "12 34", "-5", "7001\u200b23456", "700123456", "😀", "Mars", " europe ", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Fields["uid"] != "700123456" || q.Fields["server"] != "Europe" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "number refused keeps the earlier answer", lang: "ru", in: []string{"/start tu-" + resellersim.DemoTopUpCategoryTwoFields, "tap:", "12345", "20O1"}, check: func(t *testing.T, w *world) {
			noQuote("games")(t, w)
			if w.s.Get("f.user_id") != "12345" || w.s.Get("fi") != "1" {
				t.Fatalf("session = %v", w.s.Data)
			}
		}},
		{name: "select with a bidi override", lang: "uk", in: []string{"/start tu-" + resellersim.DemoTopUpCategorySelect, "tap:", "700123456", "\u202eEurope"}, check: noQuote("games")},
		{name: "email", in: []string{"/start svc-" + resellersim.DemoManualService, "tap:", "notanemail", "Name <psn@example.com>", "psn@localhost", "psn@example..com", "psn\ufeff@example.com"}, check: noQuote("services")},
		{name: "email accepted", lang: "ru", in: []string{"/start svc-" + resellersim.DemoManualService, "tap:", "notanemail", "psn@example.com"}, check: func(t *testing.T, w *world) {
			if w.s.Get("f.login") != "psn@example.com" || w.s.Get("fi") != "1" {
				t.Fatalf("session = %v", w.s.Data)
			}
		}},
		{name: "url", lang: "uk", in: []string{"/start svc-" + resellersim.DemoManualServiceNoChat, "tap:", "steamcommunity.com/tradeoffer", "ftp://example.com/x", "https://localhost/x"}, check: noQuote("services")},
	})
}

func TestInvisibleLoginAndForeignInviteRefused(t *testing.T) {
	w := newWorld(t)
	w.shop.Limiter = &countLimiter{Limit: 100}
	for _, in := range []string{"/topup", "gabe\u200b", "\u2066gabe"} {
		w.do(in)
	}
	if w.s.Step != stLogin || w.shop.Limiter.(*countLimiter).n != 0 || !strings.Contains(w.out.String(), locales.T(locales.En, "fields.invisible")) {
		t.Fatalf("an invisible login reached the check (%d checks):\n%s", w.shop.Limiter.(*countLimiter).n, w.out.String())
	}
	w = newWorld(t)
	for _, in := range []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://example.com/foo", "https://s.team/\u200bp/x", "https://s.team/p/"} {
		w.do(in)
	}
	if w.s.Step != sgInvite || w.s.Get("invite") != "" {
		t.Fatalf("a foreign invite link was taken: step %s, %v", w.s.Step, w.s.Data)
	}
}

func TestFieldKinds(t *testing.T) {
	tests := []struct{ typ, key, label, want string }{
		{"number", "uid", "UID", kindNumber},
		{"select", "server", "Server", kindSelect},
		{"select", "server", "Server", kindText}, // no options: free text
		{"text", "email", "Supercell ID email", kindEmail},
		{"", "login", "PSN login (email)", kindEmail},
		{"", "trade_url", "Trade offer URL", kindURL},
		{"text", "player_id", "Player ID", kindID},
		{"", "phone", "Phone number", kindPhone},
		{"", "password", "PSN password", kindText},
		{"text", "riot_id", "Riot ID", kindText},
		{"colour-picker", "x", "Anything", kindText}, // unknown types are text
	}
	for i, tt := range tests {
		var opts []string
		if i == 1 {
			opts = []string{"A", "B"}
		}
		if got := fieldKind(tt.typ, tt.key, tt.label, opts); got != tt.want {
			t.Errorf("fieldKind(%q, %q, %q) = %q, want %q", tt.typ, tt.key, tt.label, got, tt.want)
		}
	}
}

func TestServicesLine(t *testing.T) {
	runScripts(t, "services", []script{
		{name: "service with two fields, password masked", in: []string{"/services", "tap:", "tap:", "psn-login@example.com", "hunter2pass", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "services" || q.Category != resellersim.DemoManualService || len(q.Fields) != 2 || strings.Contains(q.For, "hunter2pass") {
				t.Fatalf("quote = %+v", q)
			}
			for _, line := range strings.Split(w.out.String(), "\n") {
				if strings.Contains(line, "hunter2pass") && !strings.HasPrefix(line, "> ") {
					t.Fatalf("the password was echoed back: %q", line)
				}
			}
		}},
		{name: "deep link", lang: "ru", in: []string{"/start svc-" + resellersim.DemoManualServiceNoChat, "tap:", "https://steamcommunity.com/tradeoffer/new/?partner=1&token=abc"}, check: atStep("services", stepConfirm)},
		{name: "back at every step", in: []string{"/start svc-" + resellersim.DemoManualService, "tap:", "psn@example.com", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
	})
}

func TestStoreTopupLine(t *testing.T) {
	runScripts(t, "topup", []script{
		{name: "usd amount", in: []string{"/topup", "gabe_newell", "tap:USD", "12.5", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "topup" || q.Fields["store_login"] != "gabe_newell" || q.Fields["amount"] != "12.50" || q.Fields["currency"] != "USD" || !q.UpstreamUSD.Equal(decimal.RequireFromString("12.5")) {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "rub amount converted with the rates", lang: "ru", in: []string{"/topup", "gabe", "tap:RUB", "tap:1"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Fields["currency"] != "RUB" || !q.UpstreamUSD.IsPositive() || q.UpstreamUSD.GreaterThan(decimal.NewFromInt(1000)) {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "bad logins and amounts", lang: "uk", in: []string{"/topup", "a", "two words", "invalid_login", "gabe", "tap:USD", "0.1", "1.234", "ten", "0,15"}, check: atStep("topup", stepConfirm)},
		{name: "back at every step", in: []string{"/topup", "gabe", "tap:KZT", "tap:5", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
	})
}

func TestSearchesAreRateLimited(t *testing.T) {
	w := newWorld(t)
	w.shop.Limiter = &countLimiter{Limit: 1}
	for _, in := range []string{"/keys", "elden", "cyberpunk"} {
		w.do(in)
	}
	if w.s.Get("q") != "elden" || !strings.Contains(w.out.String(), locales.N(locales.En, "err.rate_limited", 42)) {
		t.Fatalf("the second search was not refused:\n%s", w.out.String())
	}
}

func TestLoginChecksAreRateLimited(t *testing.T) {
	w := newWorld(t)
	w.shop.Limiter = &countLimiter{Limit: 2}
	for _, in := range []string{"/topup", "invalid1", "invalid2", "gabe"} {
		w.do(in)
	}
	if w.s.Step != stLogin || !strings.Contains(w.out.String(), locales.N(locales.En, "err.rate_limited", 42)) {
		t.Fatalf("the third check was not refused:\n%s", w.out.String())
	}
}

func TestStoreGiftsLine(t *testing.T) {
	runScripts(t, "gifts", []script{
		{name: "top list edition region invite", in: []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://s.team/p/abcd-efgh/XYZ", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "gifts" || q.Category != strconv.Itoa(resellersim.DemoStoreApp) || q.Fields["invite_url"] != "https://s.team/p/abcd-efgh/XYZ" || q.Fields["region"] == "" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "search within the top list", lang: "ru", in: []string{"/gifts", "elden", "tap:♻️"}, check: atStep("gifts", sgGames)},
		{name: "numeric app id and bad invites", lang: "uk", in: []string{"/gifts", strconv.Itoa(resellersim.DemoStoreApp), "tap:", "tap:", "http://s.team/p/x", "s.team/p/x", "https://", "https://s.team/p/ok"}, check: atStep("gifts", stepConfirm)},
		{name: "deep link and unknown app", in: []string{"/start game-" + strconv.Itoa(resellersim.DemoStoreApp), "tap:⬅️", "999999999"}, check: atStep("gifts", sgGames)},
		{name: "back at every step", in: []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://s.team/p/x", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
	})
}
