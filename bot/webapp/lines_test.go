package webapp_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"shopbot/bot/botapitest"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// All eight lines are sold from the app: the four the chat asks in steps
// of their own (Stars, Premium, store top-ups, store gifts) are shaped as
// a category with items and fields, checked with the chat's checks and
// quoted by the chat's Price (flows/lines/appform.go).
func TestEveryLineSoldFromTheApp(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	a := s.call("GET", "session", data, nil).ok(t)
	lns, _ := a.at("lines").([]any)
	if len(lns) != 8 {
		t.Fatalf("lines: %s", a.raw)
	}
	for _, l := range lns {
		m := l.(map[string]any)
		if m["app"] != true || (lines.SingleCategory(m["id"].(string)) && m["category"] != m["id"]) {
			t.Fatalf("line %v", m)
		}
	}
	// Stars: quick quantities priced as the chat prices them.
	a = s.call("GET", "lines/stars/categories/stars", data, nil).ok(t)
	if !strings.Contains(a.raw, `"id":"500"`) {
		t.Fatalf("stars: %s", a.raw)
	}
	if f := a.at("fields").([]any)[0].(map[string]any); f["key"] != "username" || f["kind"] != "shop.username" {
		t.Fatalf("stars field: %s", a.raw)
	}
	// A refused recipient keeps nothing; the chat's words.
	a = s.call("POST", "quote", data, map[string]any{"line": "stars", "category": "stars", "item": "500", "fields": map[string]string{"username": "du__rov"}})
	if a.status != http.StatusUnprocessableEntity || a.str("error", "field") != "username" || a.str("error", "message") != plainText(locales.T(locales.En, "user.bad")) {
		t.Fatalf("bad username: %d %s", a.status, a.raw)
	}
	a = s.call("POST", "quote", data, map[string]any{"line": "stars", "category": "stars", "item": "40", "fields": map[string]string{"username": "durov"}})
	if a.status != http.StatusUnprocessableEntity || a.str("error", "field") != lines.QuantityField {
		t.Fatalf("40 Stars: %d %s", a.status, a.raw)
	}
	a = s.call("POST", "quote", data, map[string]any{"line": "stars", "category": "stars", "item": "500", "fields": map[string]string{"username": "@durov"}}).ok(t)
	if a.str("quote", "for") != "@durov" || a.at("quote", "quantity").(float64) != 500 {
		t.Fatalf("stars quote: %s", a.raw)
	}
	// Premium's plans.
	a = s.call("GET", "lines/premium/categories/premium", data, nil).ok(t)
	if !strings.Contains(a.raw, `"id":"3"`) {
		t.Fatalf("premium: %s", a.raw)
	}
	s.call("POST", "quote", data, map[string]any{"line": "premium", "category": "premium", "item": "3", "fields": map[string]string{"username": "durov"}}).ok(t)
	// Top-up: currencies without a price until the amount; the login the
	// upstream refuses is refused on the quote, then one it takes.
	a = s.call("GET", "lines/topup/categories/topup", data, nil).ok(t)
	items := a.at("items").([]any)
	usd := items[0].(map[string]any)
	if usd["id"] != flows.USD || usd["price"] != nil || usd["paused"] != nil || usd["note"] == nil {
		t.Fatalf("top-up items: %s", a.raw)
	}
	order := map[string]any{"line": "topup", "category": "topup", "item": "USD", "fields": map[string]string{"store_login": "some_INVALID_user", "amount": "12.50"}}
	a = s.call("POST", "quote", data, order)
	if a.status != http.StatusUnprocessableEntity || a.str("error", "field") != "store_login" {
		t.Fatalf("refused login: %d %s", a.status, a.raw)
	}
	order["fields"] = map[string]string{"store_login": "gaben", "amount": "12,50"}
	if a = s.call("POST", "quote", data, order).ok(t); a.str("quote", "for") != "gaben" {
		t.Fatalf("top-up quote: %s", a.raw)
	}
	// Gifts: the top list, searched; an edition in a region; the invite.
	a = s.call("GET", "lines/gifts?q=elden", data, nil).ok(t)
	app := strconv.Itoa(simcatalog.DemoStoreApp)
	if !strings.Contains(a.raw, `"id":"`+app+`"`) {
		t.Fatalf("gift games: %s", a.raw)
	}
	a = s.call("GET", "lines/gifts/categories/"+app, data, nil).ok(t)
	gift := a.at("items").([]any)[0].(map[string]any)["id"].(string)
	a = s.call("POST", "check", data, map[string]any{"line": "gifts", "category": app, "field": "invite_url", "value": "https://example.com/p/x"}).ok(t)
	if a.at("ok") != false || a.str("reason") != plainText(locales.T(locales.En, "gifts.bad_invite")) {
		t.Fatalf("foreign invite: %s", a.raw)
	}
	s.call("POST", "quote", data, map[string]any{"line": "gifts", "category": app, "item": gift, "fields": map[string]string{"invite_url": "https://s.team/p/abcd-efgh/XYZ"}}).ok(t)

	// Stars bought from the app are delivered as from the chat.
	a = s.call("POST", "quote", data, map[string]any{"line": "stars", "category": "stars", "item": "100", "fields": map[string]string{"username": "durov"}}).ok(t)
	qid := a.str("quote", "id")
	link := s.call("POST", "pay", data, map[string]any{"quote": qid}).ok(t).str("link")
	if _, err := s.Fake.PayLink(context.Background(), buyer, link, botapitest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	var got answer
	if !s.Until(func() bool {
		got = s.call("GET", "quotes/"+qid+"/order", data, nil)
		return got.str("order", "status") == state.OrderDelivered
	}) {
		t.Fatalf("Stars never delivered: %s", got.raw)
	}
}

// One search across the lines (the inline mode's), each product with its
// lowest price and opened on its category's page; lists come a page at a
// time.
func TestSearchAcrossLinesAndPages(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	a := s.call("GET", "search?q=elden", data, nil).ok(t)
	res := a.at("results").([]any)
	lns := map[string]bool{}
	for _, r := range res {
		m := r.(map[string]any)
		lns[m["line"].(string)] = true
		if m["from"] == nil || m["category"] == "" {
			t.Fatalf("result %v", m)
		}
	}
	if !lns["keys"] || !lns["gifts"] {
		t.Fatalf("elden across the lines: %s", a.raw)
	}
	if a := s.call("GET", "search?q=", data, nil); a.status != http.StatusBadRequest {
		t.Fatalf("empty search: %d", a.status)
	}
	a = s.call("GET", "lines/giftcards?page=99", data, nil).ok(t)
	if a.at("page").(float64) != 0 || a.at("more") != false {
		t.Fatalf("a page past the end: %s", a.raw)
	}
	a = s.call("GET", "lines/giftcards/categories/"+simcatalog.DemoGiftCategory+"?page=1", data, nil).ok(t)
	if a.at("more") != false || len(a.at("items").([]any)) == 0 {
		t.Fatalf("items page: %s", a.raw)
	}
}
