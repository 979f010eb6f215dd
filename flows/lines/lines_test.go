package lines_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/golden"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
)

// world is one chat driven through the engine with the test shop.
type world struct {
	t      *testing.T
	e      *flows.Engine
	shop   *shop.Shop
	cat    *fakeCatalog
	quotes *memQuotes
	s      flows.Session
	now    time.Time
	user   flows.User
	last   *flows.Reply
	out    strings.Builder
	// checkout answers Reply.Pay as the host would (default: payments
	// are not enabled).
	checkout func(env *flows.Env, q *flows.Quote) *flows.Reply
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, cat: &fakeCatalog{Catalog: simCatalog(t)}, quotes: &memQuotes{}, now: lines.Now, user: flows.User{ID: 77, LanguageCode: "en", Username: "buyer_one"}}
	w.checkout = func(env *flows.Env, _ *flows.Quote) *flows.Reply { return flows.PaymentsDisabled(env) }
	w.e = lines.NewTestEngine()
	w.shop = &shop.Shop{Catalog: w.cat, Pricing: lines.SamplePricing(), Quotes: w.quotes, QuoteTTL: 15 * time.Minute, PerPage: 8}
	lines.Register(w.e, w.shop)
	return w
}

// do runs one scripted input: "/cmd arg", "tap:<label prefix>", a
// "stale:<label prefix>" press with an old nonce, "wait:<duration>", or
// plain text.
func (w *world) do(in string) {
	w.t.Helper()
	ev := flows.Event{Now: w.now, User: w.user}
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
		ev.Kind, ev.Command, ev.Arg = flows.EvCommand, cmd, arg
	case strings.HasPrefix(in, "tap:"), strings.HasPrefix(in, "stale:"):
		kind, label, _ := strings.Cut(in, ":")
		b := w.button(label)
		cb, ok := flows.DecodeCallback(b.Data)
		if !ok {
			w.t.Fatalf("button %q has bad data %q", b.Text, b.Data)
		}
		if kind == "stale" {
			cb.Nonce = "old"
		}
		ev.Kind, ev.Button = flows.EvButton, cb
	default:
		ev.Kind, ev.Text = flows.EvText, in
	}
	r, err := w.e.Handle(context.Background(), &w.s, ev)
	if err == nil && r.Pay != nil {
		r, err = w.e.Then(&w.s, ev, w.checkout(w.e.Env(&w.s, ev), r.Pay))
	}
	if err != nil {
		w.t.Fatalf("%q: %v", in, err)
	}
	if r.Screen != nil {
		w.last = r
	}
	w.record(in, r)
}

func (w *world) button(prefix string) flows.Button {
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
	return flows.Button{}
}

func (w *world) record(in string, r *flows.Reply) {
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
				if len(b.Data) > flows.MaxCallbackData {
					w.t.Errorf("button %q data %d bytes", b.Text, len(b.Data))
				}
				_, action, _ := strings.Cut(strings.TrimPrefix(b.Data, flows.CallbackVersion+":"), ":")
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

func lastQuote(t *testing.T, w *world) *flows.Quote {
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
		{name: "t.me link and free entry", lang: "ru", in: []string{"/stars", "https://t.me/Durov_Bot/", "1 234"}, check: atStep("stars", shop.StepConfirm)},
		{name: "for me", lang: "uk", in: []string{"/start stars", "tap:🙋", "tap:50"}, check: atStep("stars", shop.StepConfirm)},
		{name: "bad usernames keep the question", in: []string{"/stars", "@abc", "1durov", "durov_", "du__rov", "some text", "durov"}, check: atStep("stars", lines.MsQty)},
		{name: "bad quantities keep the answer", in: []string{"/stars", "durov", "49", "10001", "many", "tap:⬅️"}, check: func(t *testing.T, w *world) {
			if w.s.Step != lines.MsUser {
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
		{name: "stale button", in: []string{"/stars", "durov", "stale:100"}, check: atStep("stars", lines.MsQty)},
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
		{name: "russian", lang: "ru", in: []string{"/premium", "durov", "tap:12"}, check: atStep("premium", shop.StepConfirm)},
		{name: "text where a plan is expected", in: []string{"/premium", "durov", "6"}, check: atStep("premium", lines.MsPlan)},
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
		{name: "entry from the main menu", in: []string{"/start", "tap:💳 Gift cards"}, check: atStep("giftcards", lines.GcBrands)},
		{name: "search", lang: "ru", in: []string{"/giftcards", "tap:🔍", "apple", "tap:Apple <US>", "tap:Apple 25"}, check: atStep("giftcards", lines.GcQty)},
		{name: "search by text and nothing found", in: []string{"/giftcards", "nothing-like-this", "tap:⬅️"}, check: atStep("giftcards", lines.GcBrands)},
		{name: "bad quantities", lang: "uk", in: []string{"/giftcards", "apple", "tap:Apple <US>", "tap:Apple 25", "0", "4", "51", "two", "3"}, check: func(t *testing.T, w *world) {
			if q := lastQuote(t, w); q.Quantity != 3 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "pagination to the last page and back", in: []string{"/giftcards", "tap:Next", "tap:Next", "tap:◀️", "tap:◀️", "tap:Apple"}, check: atStep("giftcards", lines.GcRegions)},
		{name: "deep link to a category", in: []string{"/start gc-apple-us", "tap:⬅️"}, check: atStep("giftcards", lines.GcBrands)},
		{name: "deep link to an unknown category", in: []string{"/start gc-nope"}, check: atStep("giftcards", lines.GcBrands)},
		{name: "back at every step", in: []string{"/giftcards", "tap:Apple", "tap:US", "tap:Apple 10", "tap:1", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
		{name: "cancel mid-flow", in: []string{"/giftcards", "tap:Apple", "tap:✖️"}, check: atStep("", "")},
		{name: "stale button", in: []string{"/giftcards", "tap:Apple", "stale:US"}, check: atStep("giftcards", lines.GcRegions)},
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
	if w.s.Step != lines.GcCards {
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
	if w.s.Step != lines.MsQty || !strings.Contains(w.last.Screen.Text, "100 Stars cost") {
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
	if !strings.Contains(w.out.String(), want) || w.s.Step != lines.MsQty {
		t.Fatalf("the second quote was not refused politely:\n%s", w.out.String())
	}
}

func TestGameKeysLine(t *testing.T) {
	runScripts(t, "keys", []script{
		{name: "search and buy", in: []string{"/keys", "elden ring", "tap:ELDEN RING · GLOBAL", "tap:ELDEN RING Standard", "2", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "keys" || q.Category != simcatalog.DemoGame || q.Item != simcatalog.DemoGameKey || q.Quantity != 2 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "filters", lang: "ru", in: []string{"/keys", "tap:🌍", "tap:CIS", "tap:🎮", "tap:GOG", "tap:♻️"}, check: atStep("keys", lines.GkGames)},
		{name: "region restriction is shown before choosing", in: []string{"/start key-" + simcatalog.DemoGameRestricted}, check: atStep("keys", lines.GkOffers)},
		{name: "deny list restriction", lang: "uk", in: []string{"/start key-" + simcatalog.DemoGameRestrictedDeny}, check: atStep("keys", lines.GkOffers)},
		{name: "hidden game is not found", in: []string{"/start key-" + simcatalog.DemoGameHidden}, check: atStep("keys", lines.GkGames)},
		{name: "bad quantities", in: []string{"/start key-" + simcatalog.DemoGame, "tap:ELDEN RING Standard", "0", "21", "x", "1"}, check: atStep("keys", shop.StepConfirm)},
		{name: "back at every step", in: []string{"/keys", "tap:🔍", "elden", "tap:ELDEN RING · GLOBAL", "tap:ELDEN RING Standard", "tap:1", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
		{name: "pagination to the last page and back", in: []string{"/keys", "tap:Next", "tap:Next", "tap:Next", "tap:◀️", "tap:◀️", "tap:◀️"}, check: atStep("keys", lines.GkGames)},
	})
}

func TestTopUpsLine(t *testing.T) {
	runScripts(t, "games", []script{
		{name: "browse and fill the field", in: []string{"/games", "tap:PUBG Mobile", "tap:PUBG Mobile UC (Global) ", "tap:60 UC", "  5123456789  ", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "games" || q.Category != simcatalog.DemoTopUpCategory || q.Item != simcatalog.DemoTopUpOffer || q.Fields["player_id"] != "5123456789" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "two fields with bad answers and back", lang: "ru", in: []string{"/start tu-" + simcatalog.DemoTopUpCategoryTwoFields, "tap:", "", "12345", "tap:⬅️", "tap:✅", strings.Repeat("9", 257), "line\none", "2001"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if len(q.Fields) != 2 || q.Fields["zone_id"] != "2001" || q.Fields["user_id"] != "12345" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "edit keeps earlier answers", lang: "uk", in: []string{"/start tu-" + simcatalog.DemoTopUpCategorySelect, "tap:", "700123456", "europe", "tap:✏️", "tap:✅", "tap:Asia"}, check: func(t *testing.T, w *world) {
			if q := lastQuote(t, w); q.Fields["server"] != "Asia" || len(q.Fields) != 2 {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "search", in: []string{"/games", "tap:🔍", "genshin", "tap:Genshin"}, check: atStep("games", lines.TuOffers)},
		{name: "hidden category is not found", in: []string{"/start tu-" + simcatalog.DemoTopUpCategoryHidden}, check: atStep("games", lines.TuBrands)},
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
			atStep(flow, lines.StepFields)(t, w)
			if w.s.Get("quote") != "" || len(w.quotes.m) != 0 {
				t.Fatalf("a wrong answer was quoted: %v", w.quotes.m)
			}
		}
	}
	runScripts(t, "fields", []script{
		{name: "number and select", in: []string{"/start tu-" + simcatalog.DemoTopUpCategorySelect, "tap:", "abc", "12 34", "-5", "7001\u200b23456", "700123456", "😀", "Mars", " europe ", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Fields["uid"] != "700123456" || q.Fields["server"] != "Europe" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "number refused keeps the earlier answer", lang: "ru", in: []string{"/start tu-" + simcatalog.DemoTopUpCategoryTwoFields, "tap:", "12345", "20O1"}, check: func(t *testing.T, w *world) {
			noQuote("games")(t, w)
			if w.s.Get("f.user_id") != "12345" || w.s.Get("fi") != "1" {
				t.Fatalf("session = %v", w.s.Data)
			}
		}},
		{name: "select with a bidi override", lang: "uk", in: []string{"/start tu-" + simcatalog.DemoTopUpCategorySelect, "tap:", "700123456", "\u202eEurope"}, check: noQuote("games")},
		{name: "email", in: []string{"/start svc-" + simcatalog.DemoManualService, "tap:", "notanemail", "Name <psn@example.com>", "psn@localhost", "psn@example..com", "psn\ufeff@example.com"}, check: noQuote("services")},
		{name: "email accepted", lang: "ru", in: []string{"/start svc-" + simcatalog.DemoManualService, "tap:", "notanemail", "psn@example.com"}, check: func(t *testing.T, w *world) {
			if w.s.Get("f.login") != "psn@example.com" || w.s.Get("fi") != "1" {
				t.Fatalf("session = %v", w.s.Data)
			}
		}},
		{name: "url", lang: "uk", in: []string{"/start svc-" + simcatalog.DemoManualServiceNoChat, "tap:", "steamcommunity.com/tradeoffer", "ftp://example.com/x", "https://localhost/x"}, check: noQuote("services")},
	})
}

func TestInvisibleLoginAndForeignInviteRefused(t *testing.T) {
	w := newWorld(t)
	w.shop.Limiter = &countLimiter{Limit: 100}
	for _, in := range []string{"/topup", "gabe\u200b", "\u2066gabe"} {
		w.do(in)
	}
	if w.s.Step != lines.StLogin || w.shop.Limiter.(*countLimiter).n != 0 || !strings.Contains(w.out.String(), locales.T(locales.En, "fields.invisible")) {
		t.Fatalf("an invisible login reached the check (%d checks):\n%s", w.shop.Limiter.(*countLimiter).n, w.out.String())
	}
	w = newWorld(t)
	for _, in := range []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://example.com/foo", "https://s.team/\u200bp/x", "https://s.team/p/"} {
		w.do(in)
	}
	if w.s.Step != lines.SgInvite || w.s.Get("invite") != "" {
		t.Fatalf("a foreign invite link was taken: step %s, %v", w.s.Step, w.s.Data)
	}
}

func TestServicesLine(t *testing.T) {
	runScripts(t, "services", []script{
		{name: "service with two fields, password masked", in: []string{"/services", "tap:", "tap:", "psn-login@example.com", "hunter2pass", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "services" || q.Category != simcatalog.DemoManualService || len(q.Fields) != 2 || strings.Contains(q.For, "hunter2pass") {
				t.Fatalf("quote = %+v", q)
			}
			for _, line := range strings.Split(w.out.String(), "\n") {
				if strings.Contains(line, "hunter2pass") && !strings.HasPrefix(line, "> ") {
					t.Fatalf("the password was echoed back: %q", line)
				}
			}
		}},
		{name: "deep link", lang: "ru", in: []string{"/start svc-" + simcatalog.DemoManualServiceNoChat, "tap:", "https://steamcommunity.com/tradeoffer/new/?partner=1&token=abc"}, check: atStep("services", shop.StepConfirm)},
		{name: "back at every step", in: []string{"/start svc-" + simcatalog.DemoManualService, "tap:", "psn@example.com", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
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
		{name: "bad logins and amounts", lang: "uk", in: []string{"/topup", "a", "two words", "invalid_login", "gabe", "tap:USD", "0.1", "1.234", "ten", "0,15"}, check: atStep("topup", shop.StepConfirm)},
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
	if w.s.Step != lines.StLogin || !strings.Contains(w.out.String(), locales.N(locales.En, "err.rate_limited", 42)) {
		t.Fatalf("the third check was not refused:\n%s", w.out.String())
	}
}

func TestStoreGiftsLine(t *testing.T) {
	runScripts(t, "gifts", []script{
		{name: "top list edition region invite", in: []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://s.team/p/abcd-efgh/XYZ", "tap:💳"}, check: func(t *testing.T, w *world) {
			q := lastQuote(t, w)
			if q.Line != "gifts" || q.Category != strconv.Itoa(simcatalog.DemoStoreApp) || q.Fields["invite_url"] != "https://s.team/p/abcd-efgh/XYZ" || q.Fields["region"] == "" {
				t.Fatalf("quote = %+v", q)
			}
		}},
		{name: "search within the top list", lang: "ru", in: []string{"/gifts", "elden", "tap:♻️"}, check: atStep("gifts", lines.SgGames)},
		{name: "numeric app id and bad invites", lang: "uk", in: []string{"/gifts", strconv.Itoa(simcatalog.DemoStoreApp), "tap:", "tap:", "http://s.team/p/x", "s.team/p/x", "https://", "https://s.team/p/ok"}, check: atStep("gifts", shop.StepConfirm)},
		{name: "deep link and unknown app", in: []string{"/start game-" + strconv.Itoa(simcatalog.DemoStoreApp), "tap:⬅️", "999999999"}, check: atStep("gifts", lines.SgGames)},
		{name: "back at every step", in: []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://s.team/p/x", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️", "tap:⬅️"}, check: atStep("", "")},
	})
}
