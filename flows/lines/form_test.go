package lines_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
)

// The form (the Mini App) orders through the chat's own checks and
// pricing: these tests buy the same thing in a chat and from a form and
// compare, and refuse in the form exactly what the chat refuses, with the
// same words.

// formEnv is the env of the world's buyer for a form request.
func formEnv(w *world) *flows.Env {
	return &flows.Env{Lang: locales.Match(w.user.LanguageCode, nil, locales.En), Now: w.now, User: w.user}
}

// sameQuote fails unless the form's quote is the chat's but for its id.
func sameQuote(t *testing.T, chat, form *flows.Quote) {
	t.Helper()
	c, f := *chat, *form
	c.ID, f.ID = "", ""
	if c.Line != f.Line || c.Item != f.Item || c.Category != f.Category || c.ItemName != f.ItemName || c.For != f.For ||
		c.Quantity != f.Quantity || !c.UpstreamUSD.Equal(f.UpstreamUSD) || !c.ShopUSD.Equal(f.ShopUSD) || c.Stars != f.Stars ||
		c.UserID != f.UserID || c.ChatID != f.ChatID || !c.Expires.Equal(f.Expires) || len(c.Fields) != len(f.Fields) {
		t.Fatalf("the form's quote differs from the chat's:\nchat %+v\nform %+v", c, f)
	}
	for k, v := range c.Fields {
		if f.Fields[k] != v {
			t.Fatalf("field %s: chat %q, form %q", k, v, f.Fields[k])
		}
	}
}

func TestFormQuoteIsTheChatsQuote(t *testing.T) {
	t.Run("gift cards by the unit", func(t *testing.T) {
		w := newWorld(t)
		for _, in := range []string{"/giftcards", "tap:Apple", "tap:US", "tap:Apple 10 USD", "tap:5"} {
			w.do(in)
		}
		chat := lastQuote(t, w)
		form, stale, err := lines.Quote(context.Background(), w.shop, formEnv(w), lines.Order{Line: "giftcards", Category: "apple-us", Item: "apple-us-10", Quantity: 5})
		if err != nil || stale {
			t.Fatalf("Quote: %v (stale %v)", err, stale)
		}
		sameQuote(t, chat, form)
		if usd, stars, ok := w.shop.UnitPrice(form); !ok || !usd.Equal(decimal.RequireFromString("11.39")) || stars != 877 {
			t.Fatalf("unit price = %v %d %v", usd, stars, ok)
		}
		if stored, err := w.quotes.Load(context.Background(), form.ID); err != nil || stored.Stars != form.Stars {
			t.Fatalf("stored quote = %+v, %v", stored, err)
		}
	})
	t.Run("in-game top-up with its fields", func(t *testing.T) {
		w := newWorld(t)
		for _, in := range []string{"/start tu-" + simcatalog.DemoTopUpCategorySelect, "tap:", "700123456", " europe "} {
			w.do(in)
		}
		chat := lastQuote(t, w)
		form, _, err := lines.Quote(context.Background(), w.shop, formEnv(w), lines.Order{Line: "games", Category: simcatalog.DemoTopUpCategorySelect,
			Item: chat.Item, Fields: map[string]string{"uid": " 700123456", "server": "europe ", "extra": "ignored"}})
		if err != nil {
			t.Fatal(err)
		}
		sameQuote(t, chat, form)
		if form.Fields["server"] != "Europe" {
			t.Fatalf("the select's answer is not spelt as the upstream spells it: %q", form.Fields["server"])
		}
	})
	t.Run("manual service", func(t *testing.T) {
		w := newWorld(t)
		offers, _, err := lines.Offers(context.Background(), w.shop, formEnv(w), "services", simcatalog.DemoManualService)
		if err != nil {
			t.Fatal(err)
		}
		answers := map[string]string{}
		in := []string{"/start svc-" + simcatalog.DemoManualService, "tap:"}
		for _, f := range lines.Fields(offers) {
			v := "12345"
			switch f.Kind {
			case "email":
				v = "psn@example.com"
			case "select":
				v = f.Options[0]
			}
			answers[f.Key] = v
			in = append(in, v)
		}
		for _, s := range in {
			w.do(s)
		}
		chat := lastQuote(t, w)
		form, _, err := lines.Quote(context.Background(), w.shop, formEnv(w), lines.Order{Line: "services", Category: simcatalog.DemoManualService, Item: chat.Item, Fields: answers})
		if err != nil {
			t.Fatal(err)
		}
		sameQuote(t, chat, form)
		if !strings.Contains(form.For, "••••••") && hasSecret(lines.Fields(offers)) {
			t.Fatalf("a secret answer is shown in For: %q", form.For)
		}
	})
}

func hasSecret(fs []lines.Field) bool {
	for _, f := range fs {
		if f.Secret {
			return true
		}
	}
	return false
}

// Every wrong answer the chat refuses (TestTypedFieldsRefusedBeforeQuote)
// is refused by CheckField and by Quote with the chat's reason, and
// nothing is stored.
func TestFormRefusesWhatTheChatRefuses(t *testing.T) {
	w := newWorld(t)
	w.user.LanguageCode = "ru"
	env := formEnv(w)
	offers, _, err := lines.Offers(context.Background(), w.shop, formEnv(w), "games", simcatalog.DemoTopUpCategorySelect)
	if err != nil {
		t.Fatal(err)
	}
	fields := lines.Fields(offers)
	uid := fields[0]
	if uid.Key != "uid" || uid.Kind != "number" || fields[1].Kind != "select" {
		t.Fatalf("fields = %+v", fields)
	}
	for _, bad := range []string{"abc", "12 34", "-5", "7001\u200b23456", "", strings.Repeat("9", 257), "line\none"} {
		_, reason := lines.CheckField(env, uid, bad)
		if reason == "" {
			t.Errorf("%q accepted", bad)
			continue
		}
		// The chat answers the same text with the same reason.
		cw := newWorld(t)
		cw.user.LanguageCode = "ru"
		cw.do("/start tu-" + simcatalog.DemoTopUpCategorySelect)
		cw.do("tap:")
		cw.do(bad)
		if !strings.Contains(cw.out.String(), reason) {
			t.Errorf("%q: the chat did not say %q:\n%s", bad, reason, cw.out.String())
		}
		_, _, err := lines.Quote(context.Background(), w.shop, env, lines.Order{Line: "games", Category: offers.CategoryID, Item: offers.Offers[0].ID,
			Fields: map[string]string{"uid": bad, "server": "Europe"}})
		var oe *lines.OrderError
		if !errors.As(err, &oe) || oe.Field != "uid" || oe.Reason != reason {
			t.Errorf("%q: Quote = %v (%+v)", bad, err, oe)
		}
	}
	if v, reason := lines.CheckField(env, fields[1], " europe "); v != "Europe" || reason != "" {
		t.Fatalf("select: %q %q", v, reason)
	}
	if len(w.quotes.m) != 0 {
		t.Fatalf("refused orders were quoted: %v", w.quotes.m)
	}
}

func TestFormRefusals(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	env := formEnv(w)
	var oe *lines.OrderError
	_, _, err := lines.Quote(ctx, w.shop, env, lines.Order{Line: "giftcards", Category: "apple-us", Item: "apple-us-5", Quantity: 1})
	if !errors.As(err, &oe) || oe.Field != "" || oe.Reason != env.T("gc.sold_out_alert") {
		t.Fatalf("sold out: %v", err)
	}
	for n, want := range map[int]string{0: "qty.range", 51: "qty.range", 4: "qty.stock"} {
		item := "apple-us-10"
		if want == "qty.stock" {
			item = "apple-us-25" // 3 in stock
		}
		_, _, err = lines.Quote(ctx, w.shop, env, lines.Order{Line: "giftcards", Category: "apple-us", Item: item, Quantity: n})
		if !errors.As(err, &oe) || oe.Field != lines.QuantityField {
			t.Fatalf("quantity %d: %v", n, err)
		}
	}
	if _, _, err = lines.Quote(ctx, w.shop, env, lines.Order{Line: "giftcards", Category: "apple-us", Item: "nope", Quantity: 1}); !errors.Is(err, flows.ErrNotFound) {
		t.Fatalf("unknown item: %v", err)
	}
	if _, _, err = lines.Quote(ctx, w.shop, env, lines.Order{Line: "giftcards", Category: "nope", Item: "x", Quantity: 1}); !errors.Is(err, flows.ErrNotFound) {
		t.Fatalf("unknown category: %v", err)
	}
	if _, _, err = lines.Quote(ctx, w.shop, env, lines.Order{Line: "tickets", Quantity: 100}); !errors.Is(err, lines.ErrNotFormLine) {
		t.Fatalf("an unknown line from a form: %v", err)
	}
	w.shop.Funds = &fixedFunds{Balance: dec("5")}
	if _, _, err = lines.Quote(ctx, w.shop, env, lines.Order{Line: "giftcards", Category: "apple-us", Item: "apple-us-10", Quantity: 1}); !errors.Is(err, shop.ErrPaused) {
		t.Fatalf("over the upstream balance: %v", err)
	}
	if len(w.quotes.m) != 0 {
		t.Fatalf("refused orders were quoted: %v", w.quotes.m)
	}
}

// The form's quotes count against the chat's limit on costly actions.
func TestFormQuotesShareTheChatsRateLimit(t *testing.T) {
	w := newWorld(t)
	w.shop.Limiter = &countLimiter{Limit: 1}
	env := formEnv(w)
	o := lines.Order{Line: "giftcards", Category: "apple-us", Item: "apple-us-10", Quantity: 1}
	if _, _, err := lines.Quote(context.Background(), w.shop, env, o); err != nil {
		t.Fatal(err)
	}
	var rl *shop.RateLimited
	if _, _, err := lines.Quote(context.Background(), w.shop, env, o); !errors.As(err, &rl) || rl.Seconds() != 42 {
		t.Fatalf("second quote: %v", err)
	}
	w.do("/start gc-apple-us")
	w.do("tap:Apple 10")
	w.do("1")
	if !strings.Contains(w.out.String(), locales.N(locales.En, "err.rate_limited", 42)) {
		t.Fatalf("the chat's quote was not limited after the form's:\n%s", w.out.String())
	}
}

// The four lines the chat asks in steps (Stars, Premium, store top-ups,
// store gifts) quote from a form exactly as from the chat.
func TestFormQuoteOfTheStepLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chat  []string
		order func(chat *flows.Quote) lines.Order
	}{
		{"stars", []string{"/stars", "@durov", "tap:500"}, func(*flows.Quote) lines.Order {
			return lines.Order{Line: "stars", Category: "stars", Item: "500", Fields: map[string]string{"username": "https://t.me/durov"}}
		}},
		{"premium", []string{"/premium", "t.me/durov", "tap:6 months"}, func(*flows.Quote) lines.Order {
			return lines.Order{Line: "premium", Category: "premium", Item: "6", Fields: map[string]string{"username": "@durov"}}
		}},
		{"store top-up", []string{"/topup", "gabe", "tap:RUB", "1 000,5"}, func(*flows.Quote) lines.Order {
			return lines.Order{Line: "topup", Category: "topup", Item: "RUB", Fields: map[string]string{"store_login": " gabe ", "amount": "1000.50"}}
		}},
		{"store gift", []string{"/gifts", "tap:ELDEN RING", "tap:", "tap:", "https://s.team/p/abcd-efgh/XYZ"}, func(c *flows.Quote) lines.Order {
			return lines.Order{Line: "gifts", Category: c.Category, Item: c.Item + "|" + c.Fields["region"], Fields: map[string]string{"invite_url": "https://s.team/p/abcd-efgh/XYZ"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			for _, in := range tc.chat {
				w.do(in)
			}
			chat := lastQuote(t, w)
			form, _, err := lines.Quote(context.Background(), w.shop, formEnv(w), tc.order(chat))
			if err != nil {
				t.Fatal(err)
			}
			sameQuote(t, chat, form)
		})
	}
}

// The step lines' answers are refused from a form with the chat's words.
func TestFormRefusesTheStepLinesBadAnswers(t *testing.T) {
	w := newWorld(t)
	env := formEnv(w)
	en := func(key string, kv ...any) string { return locales.T(locales.En, key, kv...) }
	for _, tc := range []struct {
		o      lines.Order
		field  string
		reason string
	}{
		{lines.Order{Line: "stars", Category: "stars", Item: "49", Fields: map[string]string{"username": "durov"}}, lines.QuantityField, en("stars.bad_qty", "min", "50", "max", "10,000")},
		{lines.Order{Line: "stars", Category: "stars", Item: "100", Fields: map[string]string{"username": "du__rov"}}, "username", en("user.bad")},
		{lines.Order{Line: "topup", Category: "topup", Item: "USD", Fields: map[string]string{"store_login": "two words", "amount": "10"}}, "store_login", en("topup.bad_login")},
		{lines.Order{Line: "topup", Category: "topup", Item: "USD", Fields: map[string]string{"store_login": "invalid_login", "amount": "10"}}, "store_login", en("topup.cannot_refill", "login", "invalid_login")},
		{lines.Order{Line: "topup", Category: "topup", Item: "USD", Fields: map[string]string{"store_login": "gabe", "amount": "1.234"}}, "amount", en("topup.bad_amount")},
		{lines.Order{Line: "topup", Category: "topup", Item: "USD", Fields: map[string]string{"store_login": "gabe", "amount": "0.1"}}, "amount", ""},
		{lines.Order{Line: "gifts", Category: strconv.Itoa(simcatalog.DemoStoreApp), Item: "x|y", Fields: map[string]string{"invite_url": "https://s.team/p/ok"}}, "", ""},
	} {
		_, _, err := lines.Quote(context.Background(), w.shop, env, tc.o)
		var oe *lines.OrderError
		if tc.field == "" {
			if !errors.Is(err, flows.ErrNotFound) {
				t.Errorf("%+v: %v, want not found", tc.o, err)
			}
			continue
		}
		if !errors.As(err, &oe) || oe.Field != tc.field || (tc.reason != "" && oe.Reason != tc.reason) {
			t.Errorf("%+v: %v (%+v), want field %s: %q", tc.o, err, oe, tc.field, tc.reason)
		}
	}
	offers, _, err := lines.Offers(context.Background(), w.shop, env, "gifts", strconv.Itoa(simcatalog.DemoStoreApp))
	if err != nil || len(offers.Offers) == 0 || lines.Fields(offers)[0].Key != "invite_url" {
		t.Fatalf("gift offers %+v, %v", offers, err)
	}
	if _, r := lines.CheckField(env, lines.Fields(offers)[0], "https://example.com/foo"); r != en("gifts.bad_invite") {
		t.Fatalf("foreign invite: %q", r)
	}
}
