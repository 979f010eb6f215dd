package webapp_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/bot/bottest"
	"shopbot/bot/storefront"
	"shopbot/bot/webapp"
	"shopbot/bot/webapp/initdata"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

func TestPageAndSecurityHeaders(t *testing.T) {
	s := newAppShop(t, nil)
	for _, path := range []string{"", "app.js", "app.css"} {
		req, _ := http.NewRequest("GET", s.base+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := http.DefaultTransport.RoundTrip(req) // the raw answer, not decompressed
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		h := res.Header
		if res.StatusCode != 200 || h.Get("Content-Encoding") != "gzip" || h.Get("ETag") == "" {
			t.Fatalf("%q: %d, headers %v", path, res.StatusCode, h)
		}
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"frame-ancestors 'self' https://web.telegram.org", "script-src 'self' https://telegram.org", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%q: CSP %q lacks %q", path, csp, want)
			}
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%q: X-Content-Type-Options %q", path, h.Get("X-Content-Type-Options"))
		}
		// Asked again with its ETag: not sent again.
		req.Header.Set("If-None-Match", h.Get("ETag"))
		again, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if again.StatusCode != http.StatusNotModified {
			t.Errorf("%q with its ETag: %d", path, again.StatusCode)
		}
	}
	raw, gz := s.app.PageSize()
	t.Logf("first load: %d bytes, %d gzipped (Telegram's script aside)", raw, gz)
	if gz > 60<<10 {
		t.Errorf("the page is %d bytes gzipped, over 60 KB", gz)
	}
	if a := s.do(mustGet(t, s.base+"nope.js")); a.status != 404 {
		t.Fatalf("unknown file: %d", a.status)
	}
}

func mustGet(t *testing.T, url string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// Every API request needs a fresh initData of this bot; the user is only
// ever the one it names.
func TestAPIAuthenticatesEveryRequest(t *testing.T) {
	s := newAppShop(t, nil)
	now := time.Now()
	other := initdata.SignUser("999:another-bots-token", initdata.User{ID: buyer, FirstName: "X"}, now)
	good := s.initData(buyer, now)
	swapped := strings.Replace(good, "%22id%22%3A5001", "%22id%22%3A5002", 1)
	if swapped == good {
		t.Fatal("the test's swap changed nothing")
	}
	for name, tc := range map[string]struct {
		data, code string
	}{
		"none":                  {"", "auth"},
		"another bot's":         {other, "auth"},
		"a user id swapped":     {swapped, "auth"},
		"expired (replayed)":    {s.initData(buyer, now.Add(-initdata.DefaultMaxAge-time.Minute)), "auth_expired"},
		"issued in the future":  {s.initData(buyer, now.Add(time.Hour)), "auth"},
		"garbage":               {"user=1&hash=zz", "auth"},
		"duplicated hash field": {good + "&hash=00", "auth"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"session", "lines/giftcards", "quotes/q1/order", "orders/1.aaaaaa", "nope"} {
				a := s.call("GET", path, tc.data, nil)
				if a.status != http.StatusUnauthorized || a.str("error", "code") != tc.code || a.str("error", "message") != locales.T(locales.En, "webapp.auth_failed") {
					t.Fatalf("GET %s: %d %s", path, a.status, a.raw)
				}
				if a.header.Get("Cache-Control") != "no-store" {
					t.Fatalf("GET %s: Cache-Control %q", path, a.header.Get("Cache-Control"))
				}
			}
		})
	}
	a := s.call("GET", "session", good, nil).ok(t)
	if int64(a.at("user", "id").(float64)) != buyer || a.str("lang") != "en" || a.str("texts", "webapp.title") != "Shop" {
		t.Fatalf("session: %s", a.raw)
	}
	// The page's language choice wins over Telegram's.
	req := mustGet(t, s.base+"api/session")
	req.Header.Set(webapp.InitDataHeader, good)
	req.Header.Set(webapp.LangHeader, "uk")
	if a := s.do(req).ok(t); a.str("lang") != "uk" || a.str("texts", "webapp.title") != locales.T(locales.Uk, "webapp.title") {
		t.Fatalf("session in uk: %s", a.raw)
	}
}

func TestBrowseWithTheChatsCatalogAndPrices(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	a := s.call("GET", "session", data, nil).ok(t)
	lns, _ := a.at("lines").([]any)
	if len(lns) != len(flows.Lines) {
		t.Fatalf("lines: %s", a.raw)
	}
	for _, l := range lns {
		m := l.(map[string]any)
		if app := m["app"].(bool); app != lines.IsFormLine(m["id"].(string)) || (!app && !strings.HasPrefix(m["chat_url"].(string), "https://t.me/")) {
			t.Fatalf("line %v", m)
		}
	}
	a = s.call("GET", "lines/giftcards", data, nil).ok(t)
	if !strings.Contains(a.raw, `"id":"`+simcatalog.DemoGiftCategory+`"`) || strings.Contains(a.raw, simcatalog.DemoGiftCategoryHidden) {
		t.Fatalf("gift-card categories: %s", a.raw)
	}
	a = s.call("GET", "lines/giftcards/categories/"+simcatalog.DemoGiftCategory, data, nil).ok(t)
	items, _ := a.at("items").([]any)
	var card, soldOut map[string]any
	for _, it := range items {
		m := it.(map[string]any)
		switch m["id"] {
		case simcatalog.DemoGiftCard:
			card = m
		case simcatalog.DemoGiftCardOutOfStock:
			soldOut = m
		}
	}
	if card == nil || soldOut == nil || soldOut["sold_out"] != true || card["sold_out"] != nil || a.at("by_unit") != true {
		t.Fatalf("items: %s", a.raw)
	}
	// The price is the chat's: the same Pricing of the same upstream price.
	offers, _, err := lines.Offers(context.Background(), s.sh, &flows.Env{Lang: locales.En}, "giftcards", simcatalog.DemoGiftCategory)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := offers.Offer(simcatalog.DemoGiftCard)
	usd := s.sh.Pricing.ShopUSD("giftcards", o.PriceUSD)
	p := card["price"].(map[string]any)
	if p["usd"] != usd.StringFixed(2) || int64(p["stars"].(float64)) != s.sh.Pricing.Stars(usd) || p["stars_text"] != locales.Stars(locales.En, s.sh.Pricing.Stars(usd)) {
		t.Fatalf("price %v, want %s USD", p, usd)
	}
	// Searches and the key filters.
	if a := s.call("GET", "lines/keys?q=elden", data, nil).ok(t); !strings.Contains(a.raw, simcatalog.DemoGame) || a.at("filters", "regions") == nil {
		t.Fatalf("keys search: %s", a.raw)
	}
	if a := s.call("GET", "lines/games?q=genshin", data, nil).ok(t); !strings.Contains(a.raw, simcatalog.DemoTopUpCategorySelect) {
		t.Fatalf("top-up search: %s", a.raw)
	}
	if a := s.call("GET", "lines/services", data, nil).ok(t); !strings.Contains(a.raw, simcatalog.DemoManualService) {
		t.Fatalf("services: %s", a.raw)
	}
	// Lines that are not, and unknown categories.
	if a := s.call("GET", "lines/tickets", data, nil); a.status != 404 || a.str("error", "code") != "not_found" {
		t.Fatalf("tickets: %d %s", a.status, a.raw)
	}
	if a := s.call("GET", "lines/giftcards/categories/"+simcatalog.DemoGiftCategoryHidden, data, nil); a.status != 404 || a.str("error", "message") != locales.T(locales.En, "catalog.not_found") {
		t.Fatalf("hidden category: %d %s", a.status, a.raw)
	}
}

// A field is checked by the chat's own check, refused with the chat's
// words, and the quote refuses what the chat refuses.
func TestFieldsAndQuoteUseTheChatsChecks(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	cat := simcatalog.DemoTopUpCategorySelect
	a := s.call("GET", "lines/games/categories/"+cat, data, nil).ok(t)
	fields, _ := a.at("fields").([]any)
	if len(fields) != 2 || fields[0].(map[string]any)["kind"] != "number" || fields[1].(map[string]any)["kind"] != "select" {
		t.Fatalf("fields: %s", a.raw)
	}
	offers, _, err := lines.Offers(context.Background(), s.sh, &flows.Env{Lang: locales.En}, "games", cat)
	if err != nil {
		t.Fatal(err)
	}
	env := &flows.Env{Lang: locales.En}
	_, chatReason := lines.CheckField(env, lines.Fields(offers)[0], "12a")
	a = s.call("POST", "check", data, map[string]any{"line": "games", "category": cat, "field": "uid", "value": "12a"}).ok(t)
	if a.at("ok") != false || chatReason == "" || a.str("reason") != plainText(chatReason) {
		t.Fatalf("refused uid: %s (chat: %q)", a.raw, chatReason)
	}
	a = s.call("POST", "check", data, map[string]any{"line": "games", "category": cat, "field": "server", "value": " europe "}).ok(t)
	if a.at("ok") != true || a.str("value") != "Europe" {
		t.Fatalf("select: %s", a.raw)
	}
	item := offers.Offers[0].ID
	a = s.call("POST", "quote", data, map[string]any{"line": "games", "category": cat, "item": item, "fields": map[string]string{"uid": "12a", "server": "Europe"}})
	if a.status != http.StatusUnprocessableEntity || a.str("error", "code") != "bad_field" || a.str("error", "field") != "uid" {
		t.Fatalf("bad quote: %d %s", a.status, a.raw)
	}
	a = s.call("POST", "quote", data, map[string]any{"line": "games", "category": cat, "item": item, "fields": map[string]string{"uid": "700123456", "server": "europe"}}).ok(t)
	q, err := s.sh.Quotes.Load(context.Background(), a.str("quote", "id"))
	if err != nil || q.UserID != buyer || q.Fields["server"] != "Europe" || q.Fields["uid"] != "700123456" {
		t.Fatalf("stored quote %+v, %v", q, err)
	}
	if a.str("quote", "total", "usd") != q.ShopUSD.StringFixed(2) || int64(a.at("quote", "total", "stars").(float64)) != q.Stars {
		t.Fatalf("quote answer %s, stored %+v", a.raw, q)
	}
	// Units: the quantity's bounds and stock, the sold-out card.
	for _, tc := range []struct {
		item string
		n    int
		want string
	}{{simcatalog.DemoGiftCardLowStock, 4, "quantity"}, {simcatalog.DemoGiftCard, 0, "quantity"}, {simcatalog.DemoGiftCardOutOfStock, 1, ""}} {
		a = s.call("POST", "quote", data, map[string]any{"line": "giftcards", "category": simcatalog.DemoGiftCategory, "item": tc.item, "quantity": tc.n})
		if a.status != http.StatusUnprocessableEntity || a.str("error", "field") != tc.want || a.str("error", "message") == "" {
			t.Fatalf("%s × %d: %d %s", tc.item, tc.n, a.status, a.raw)
		}
	}
}

// Bad input gets a clear JSON error, never a 500.
func TestBadInputIsAClearError(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	post := func(body, ctype string) answer {
		req, _ := http.NewRequest("POST", s.base+"api/quote", strings.NewReader(body))
		req.Header.Set(webapp.InitDataHeader, data)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		return s.do(req)
	}
	for name, tc := range map[string]struct {
		body, ctype string
		status      int
	}{
		"not JSON":         {"line=giftcards", "application/x-www-form-urlencoded", 400},
		"broken JSON":      {`{"line":`, "application/json", 400},
		"an unknown field": {`{"line":"giftcards","price":"0.01"}`, "application/json", 400},
		"two values":       {`{"line":"giftcards"}{}`, "application/json", 400},
		"too large":        {`{"line":"` + strings.Repeat("a", 20<<10) + `"}`, "application/json", 413},
		"unknown line":     {`{"line":"tickets","quantity":50}`, "application/json", 400},
	} {
		a := post(tc.body, tc.ctype)
		if a.status != tc.status || a.str("error", "code") == "" || a.str("error", "message") == "" {
			t.Errorf("%s: %d %s", name, a.status, a.raw)
		}
	}
	if a := s.call("DELETE", "session", data, nil); a.status != http.StatusMethodNotAllowed && a.status != http.StatusNotFound {
		t.Errorf("DELETE session: %d", a.status)
	}
	if a := s.call("GET", "orders/not-a-ref", data, nil); a.status != 404 || a.str("error", "code") != "not_found" {
		t.Errorf("bad ref: %d %s", a.status, a.raw)
	}
}

func TestPerBuyerRateLimit(t *testing.T) {
	s := newAppShop(t, &webapp.Options{Limit: 3, Window: time.Minute})
	data := s.initData(buyer, time.Now())
	for range 3 {
		s.call("GET", "session", data, nil).ok(t)
	}
	a := s.call("GET", "session", data, nil)
	if a.status != http.StatusTooManyRequests || a.str("error", "code") != "rate_limited" || a.header.Get("Retry-After") == "" {
		t.Fatalf("fourth request: %d %s %v", a.status, a.raw, a.header)
	}
	// Another buyer has a limit of their own.
	s.call("GET", "session", s.initData(buyer+1, time.Now()), nil).ok(t)
}

// The purchase: quote, invoice link, payment through Telegram's update (the
// fake's PayLink), and the order followed to its codes; another buyer sees
// none of it.
func TestPayWithStarsAndFollowTheOrder(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	a := s.call("POST", "quote", data, map[string]any{"line": "giftcards", "category": simcatalog.DemoGiftCategory, "item": simcatalog.DemoGiftCard, "quantity": 2}).ok(t)
	qid := a.str("quote", "id")
	if a.at("quote", "unit") == nil || a.at("quote", "quantity").(float64) != 2 {
		t.Fatalf("quote: %s", a.raw)
	}
	intruder := s.initData(buyer+1, time.Now())
	if a := s.call("POST", "pay", intruder, map[string]any{"quote": qid}); a.status != http.StatusConflict || a.str("error", "message") != locales.T(locales.En, "pay.expired") {
		t.Fatalf("another buyer paying the quote: %d %s", a.status, a.raw)
	}
	if a := s.call("GET", "quotes/"+qid+"/order", data, nil).ok(t); a.str("status") != "awaiting_payment" {
		t.Fatalf("before paying: %s", a.raw)
	}
	link := s.call("POST", "pay", data, map[string]any{"quote": qid}).ok(t).str("link")
	if again := s.call("POST", "pay", data, map[string]any{"quote": qid}).ok(t).str("link"); again != link || link == "" {
		t.Fatalf("links %q, %q", link, again)
	}
	// What the page reports is no payment: only Telegram's update is.
	if a := s.call("GET", "quotes/"+qid+"/order", data, nil).ok(t); a.str("status") != "awaiting_payment" {
		t.Fatalf("after the link: %s", a.raw)
	}
	res, err := s.Fake.PayLink(context.Background(), buyer, link, botapitest.PayOptions{})
	if err != nil || res.Declined {
		t.Fatalf("PayLink: %+v, %v", res, err)
	}
	var order answer
	if !s.Until(func() bool {
		order = s.call("GET", "quotes/"+qid+"/order", data, nil)
		return order.str("order", "status") == state.OrderDelivered
	}) {
		t.Fatalf("never delivered: %s", order.raw)
	}
	codes, _ := order.at("order", "codes").([]any)
	if len(codes) != 2 || order.at("order", "done") != true {
		t.Fatalf("delivered order: %s", order.raw)
	}
	ref := order.str("order", "ref")
	s.call("GET", "orders/"+ref, data, nil).ok(t)
	// The codes reached the chat too.
	s.WaitMessage(buyer, codes[0].(string))
	// Nobody else reads the order, by its quote or its ref.
	for _, path := range []string{"quotes/" + qid + "/order", "orders/" + ref} {
		if a := s.call("GET", path, intruder, nil); a.status != 404 || strings.Contains(a.raw, codes[0].(string)) {
			t.Fatalf("another buyer read %s: %d %s", path, a.status, a.raw)
		}
	}
	// A ref of the right number with another charge's tag is not the order.
	num, _, _ := state.ParseRef(ref)
	if a := s.call("GET", "orders/"+strconv.FormatInt(num, 10), data, nil); a.status != 404 {
		t.Fatalf("a bare number: %d", a.status)
	}
	if a := s.call("GET", "orders/"+strconv.FormatInt(num, 10)+"."+state.ChargeTag("another-charge"), data, nil); a.status != 404 {
		t.Fatalf("another charge's tag: %d %s", a.status, a.raw)
	}
	// Paying a paid quote shows the order.
	if a := s.call("POST", "pay", data, map[string]any{"quote": qid}).ok(t); a.str("order", "ref") != ref {
		t.Fatalf("pay again: %s", a.raw)
	}
}

// plainText is a Telegram HTML text as the page shows it.
func plainText(s string) string {
	return html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, ""))
}

// With WEBAPP_URL the bot's menu button opens the app.
func TestMenuButtonOpensTheApp(t *testing.T) {
	h := bottest.New(t)
	b := h.NewBot(func(o *storefront.Options) { o.WebAppURL = "https://shop.example/app/" })
	h.Run(b)
	h.Listening()
	c := h.Wait("setChatMenuButton", 1)[0]
	var mb struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		WebApp struct {
			URL string `json:"url"`
		} `json:"web_app"`
	}
	if err := c.JSON("menu_button", &mb); err != nil || mb.Type != "web_app" || mb.WebApp.URL != "https://shop.example/app/" || mb.Text != locales.T(locales.En, "webapp.menu_button") {
		t.Fatalf("menu button %+v (%v)", mb, err)
	}
	h.NoViolations()
}

// A link into the app (t.me/<bot>/<app>?startapp=gc-<id>) reaches the page
// through the verified initData's start_param.
func TestStartParamReachesThePage(t *testing.T) {
	s := newAppShop(t, nil)
	u := `{"id":5001,"first_name":"Buyer","language_code":"en"}`
	data := initdata.Sign(s.Fake.Token(), map[string]string{"user": u, "auth_date": strconv.FormatInt(time.Now().Unix(), 10), "start_param": "gc-" + simcatalog.DemoGiftCategory})
	if a := s.call("GET", "session", data, nil).ok(t); a.str("start") != "gc-"+simcatalog.DemoGiftCategory {
		t.Fatalf("session: %s", a.raw)
	}
}
