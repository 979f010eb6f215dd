package resellersim

import (
	"net/http"
	"regexp"
	"shopbot/reseller/resellersim/simcatalog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// lineFields are the order fields that belong to one line only, as the
// spec's Order table lists them: game-key and in-game top-up orders have
// none (their request fields are not echoed), and game keys come in "keys"
// only on the order fetched by number (fetchedFields).
var lineFields = map[string][]string{
	LineStoreTopup:       {"store_login", "currency", "amount", "amount_usd"},
	LineMessengerStars:   {"messenger_username", "stars"},
	LineMessengerPremium: {"messenger_username", "months"},
	LineManualService:    {"service_id", "service_name", "product_id", "product_name", "manual_kind", "chat_required", "deadline_at"},
	LineStoreGift:        {"app_id", "app_name", "sub_id", "offer_name", "region", "invite_url"},
	LineGiftCard:         {"category_id", "category_name", "card_id", "card_name", "quantity", "codes"},
	LineGameKey:          {},
	LineGameTopup:        {},
}

// fetchedFields are the fields a line adds on GET /orders/{number}.
var fetchedFields = map[string][]string{
	LineGameKey: {"keys"},
}

// commonFields are on every order object.
var commonFields = []string{"object", "number", "type", "status", "charged_usd", "status_reason", "created_at"}

// checkOrderShape checks the common fields and that only the line's own
// fields are present (with status_history and fetchedFields when fetched by
// number): nothing the spec does not list is echoed.
func checkOrderShape(t *testing.T, o obj, line string, fetched bool) {
	t.Helper()
	eq(t, "object", o["object"], any("order"))
	eq(t, "type", o["type"], any(line))
	allowed := map[string]bool{}
	for _, k := range commonFields {
		allowed[k] = true
		if _, ok := o[k]; !ok {
			t.Fatalf("order lacks %s: %v", k, o)
		}
	}
	if !regexp.MustCompile(`^\d+\.\d{4}$`).MatchString(o["charged_usd"].(string)) {
		t.Fatalf("charged_usd %v", o["charged_usd"])
	}
	own := lineFields[line]
	if fetched {
		own = append(append([]string{"status_history"}, own...), fetchedFields[line]...)
	}
	for _, k := range own {
		allowed[k] = true
		if _, ok := o[k]; !ok {
			t.Fatalf("%s order lacks %s: %v", line, k, o)
		}
	}
	for k := range o {
		if !allowed[k] {
			t.Fatalf("%s order (fetched %v) carries %s=%v, which the spec does not list for it", line, fetched, k, o[k])
		}
	}
}

func TestOrderEveryLine(t *testing.T) {
	e := newEnv(t, Config{Seed: 42})
	cases := []struct {
		line, path string
		body       obj
		charged    string
		check      func(t *testing.T, created, done obj)
	}{
		{LineGiftCard, "/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 3}, "31.0500",
			func(t *testing.T, c, d obj) {
				eq(t, "codes before", len(list(t, c["codes"])), 0)
				codes := list(t, d["codes"])
				eq(t, "codes", len(codes), 3)
				if !regexp.MustCompile(`^[A-Z0-9]{4}(-[A-Z0-9]{4}){3}$`).MatchString(codes[0].(string)) {
					t.Fatalf("code %v", codes[0])
				}
				eq(t, "card_name", d["card_name"], any("Apple Gift Card 10 USD"))
				eq(t, "category_name", d["category_name"], any("Apple Gift Card (US)"))
			}},
		{LineGameKey, "/game-keys/order", obj{"game_id": simcatalog.DemoGame, "key_id": simcatalog.DemoGameKey, "quantity": 2}, "119.9800",
			func(t *testing.T, c, d obj) {
				keys := list(t, d["keys"])
				eq(t, "keys", len(keys), 2)
				k := keys[0].(obj)
				if !regexp.MustCompile(`^[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}$`).MatchString(k["key"].(string)) {
					t.Fatalf("key %v", k)
				}
				eq(t, "key name", k["name"], any("ELDEN RING Standard Edition (Steam, GLOBAL)"))
			}},
		{LineGameTopup, "/top-ups/order", obj{"category_id": simcatalog.DemoTopUpCategorySelect, "offer_id": simcatalog.DemoTopUpCategorySelect + "-60",
			"fields": obj{"uid": "700123456", "server": "Europe"}}, "0.9500",
			func(t *testing.T, c, d obj) {
				// checkOrderShape: no category, offer, buyer fields or codes.
			}},
		{LineManualService, "/manual-services/order", obj{"service_id": simcatalog.DemoManualService, "product_id": simcatalog.DemoManualOffer,
			"fields": obj{"login": "a@b.c", "password": "pw"}}, "17.4000",
			func(t *testing.T, c, d obj) {
				eq(t, "kind", d["manual_kind"], any("replenishment"))
				eq(t, "chat_required", d["chat_required"], any(true))
				eq(t, "product_name", d["product_name"], any("500 TRY"))
				created, _ := time.Parse(time.RFC3339, d["created_at"].(string))
				deadline, _ := time.Parse(time.RFC3339, d["deadline_at"].(string))
				eq(t, "deadline", deadline.Sub(created), time.Hour)
			}},
		{LineStoreGift, "/store-gifts/order", obj{"app_id": simcatalog.DemoStoreApp, "sub_id": simcatalog.DemoStoreSub, "region": "TR",
			"invite_url": "https://s.team/p/abcd-efgh/XYZ"}, "27.0000",
			func(t *testing.T, c, d obj) {
				eq(t, "app_name", d["app_name"], any("ELDEN RING"))
				eq(t, "offer_name", d["offer_name"], any("ELDEN RING Standard Edition"))
				eq(t, "region", d["region"], any("TR"))
				eq(t, "sub_id", num(t, d["sub_id"]), simcatalog.DemoStoreSub)
			}},
		{LineStoreTopup, "/store-topup/order", obj{"store_login": "gaben", "currency": "RUB", "amount": "925"}, "9.7000",
			func(t *testing.T, c, d obj) {
				eq(t, "amount", d["amount"], any("925.00"))
				eq(t, "amount_usd", d["amount_usd"], any("10.0000"))
				eq(t, "currency", d["currency"], any("RUB"))
			}},
		{LineMessengerStars, "/messenger/stars/buy", obj{"messenger_username": "@durov", "quantity": 500}, "7.5000",
			func(t *testing.T, c, d obj) {
				eq(t, "stars", num(t, d["stars"]), 500)
				eq(t, "username", d["messenger_username"], any("@durov"))
			}},
		{LineMessengerPremium, "/messenger/premium/buy", obj{"messenger_username": "durov", "months": 6}, "15.9900",
			func(t *testing.T, c, d obj) {
				eq(t, "months", num(t, d["months"]), 6)
			}},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			before := e.sim.Balance()
			created := e.post(c.path, c.body)
			checkOrderShape(t, created, c.line, false)
			eq(t, "created status", created["status"], any("created"))
			eq(t, "charged", created["charged_usd"], any(c.charged))
			if _, ok := created["status_history"]; ok {
				t.Fatal("create answer carries status_history")
			}
			eq(t, "balance", e.sim.Balance().String(), before.Sub(decimal.RequireFromString(c.charged)).String())
			n := num(t, created["number"])
			done := e.get(path("/orders/%d", n))
			checkOrderShape(t, done, c.line, true)
			listed := list(t, e.get("/orders?limit=1")["data"])[0].(obj)
			checkOrderShape(t, listed, c.line, false)
			eq(t, "status", done["status"], any("completed"))
			h := list(t, done["status_history"])
			eq(t, "history", len(h), 3)
			for i, want := range []string{"created", "processing", "completed"} {
				eq(t, "history status", h[i].(obj)["status"], any(want))
				eq(t, "history reason", h[i].(obj)["reason"], nil)
			}
			c.check(t, created, done)

			tx := list(t, e.get("/transactions?limit=1")["data"])[0].(obj)
			eq(t, "tx type", tx["type"], any("ORDER"))
			eq(t, "tx amount", tx["amount_usd"], any(c.charged))
			if !strings.Contains(tx["note"].(string), strconv.Itoa(n)) {
				t.Fatalf("note %v does not name order %d", tx["note"], n)
			}
		})
	}
}

func TestDeterministicCodes(t *testing.T) {
	codes := func(seed int64) string {
		e := newEnv(t, Config{Seed: seed})
		n := e.buyGiftCard(simcatalog.DemoGiftCard, 2)
		o, _ := e.sim.Order(n)
		return strings.Join(o.Codes, ",")
	}
	a, b, c := codes(7), codes(7), codes(8)
	if a != b || a == c || a == "" {
		t.Fatalf("seed 7: %s and %s; seed 8: %s", a, b, c)
	}
}

func TestLifecycleWithClock(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetBehavior(LineGiftCard, Behavior{Mode: Complete, ProcessingAfter: 2 * time.Second, CompleteAfter: 5 * time.Second})
	n := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	p := path("/orders/%d", n)
	eq(t, "t0", e.get(p)["status"], any("created"))
	e.clock.Add(2 * time.Second)
	o := e.get(p)
	eq(t, "t2", o["status"], any("processing"))
	eq(t, "codes while processing", len(list(t, o["codes"])), 0)
	e.clock.Add(2 * time.Second)
	eq(t, "t4", e.get(p)["status"], any("processing"))
	e.clock.Add(time.Second)
	o = e.get(p)
	eq(t, "t5", o["status"], any("completed"))
	eq(t, "codes", len(list(t, o["codes"])), 1)
	h := list(t, o["status_history"])
	start := newClock().Now()
	for i, off := range []time.Duration{0, 2 * time.Second, 5 * time.Second} {
		eq(t, "at", h[i].(obj)["at"], any(start.Add(off).Format(time.RFC3339)))
	}
}

func TestLifecycleFailAndRefund(t *testing.T) {
	for _, mode := range []Mode{Fail, Refund} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newEnv(t, Config{})
			e.sim.SetBehavior(simcatalog.DemoGiftCard, Behavior{Mode: mode, ProcessingAfter: time.Second, CompleteAfter: 3 * time.Second, Reason: "supplier out of codes"})
			n := e.buyGiftCard(simcatalog.DemoGiftCard, 2)
			eq(t, "charged", e.sim.Balance().StringFixed(4), "979.3000")
			eq(t, "stock taken", e.sim.Catalog().GiftCategories[0].Cards[2].Stock, 248)
			e.clock.Add(3 * time.Second)
			e.sim.Advance()
			eq(t, "credited", e.sim.Balance().StringFixed(4), "1000.0000")
			o := e.get(path("/orders/%d", n))
			want := map[Mode]string{Fail: "failed", Refund: "refund"}[mode]
			eq(t, "status", o["status"], any(want))
			eq(t, "reason", o["status_reason"], any("supplier out of codes"))
			eq(t, "codes", len(list(t, o["codes"])), 0)
			h := list(t, o["status_history"])
			last := h[len(h)-1].(obj)
			eq(t, "history", last["status"], any(want))
			eq(t, "history reason", last["reason"], any("supplier out of codes"))
			credit := list(t, e.get("/transactions?direction=CREDIT&type=ORDER")["data"])
			eq(t, "credits", len(credit), 1)
			eq(t, "credit amount", credit[0].(obj)["amount_usd"], any("20.7000"))
			eq(t, "credit balance_after", credit[0].(obj)["balance_after"], any("1000.0000"))
			eq(t, "stock restored", e.sim.Catalog().GiftCategories[0].Cards[2].Stock, 250)
			me := e.get("/me")
			eq(t, "total_orders", num(t, me["total_orders"]), 1)
			eq(t, "total_spent", me["total_spent_usd"], any("0.0000"))
		})
	}
}

func TestDefaultReasons(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetBehavior("stars", Behavior{Mode: Fail})
	e.sim.SetBehavior(LineMessengerPremium, Behavior{Mode: Refund})
	s := num(t, e.post("/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 50})["number"])
	p := num(t, e.post("/messenger/premium/buy", obj{"messenger_username": "bob", "months": 3})["number"])
	eq(t, "fail reason", e.get(path("/orders/%d", s))["status_reason"], any(defaultFailReason))
	eq(t, "refund reason", e.get(path("/orders/%d", p))["status_reason"], any(defaultRefundReason))
}

func TestLifecycleStayAndManualControl(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetBehavior(LineGameKey, Behavior{Mode: Stay})
	buy := func() int {
		return num(t, e.post("/game-keys/order", obj{"game_id": simcatalog.DemoGame, "key_id": simcatalog.DemoGameKey, "quantity": 1})["number"])
	}
	a, b, c := buy(), buy(), buy()
	e.clock.Add(24 * time.Hour)
	for _, n := range []int{a, b, c} {
		eq(t, "stays", e.get(path("/orders/%d", n))["status"], any("processing"))
	}
	balance := e.sim.Balance()
	if err := e.sim.CompleteOrder(a); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.FailOrder(b, "key revoked"); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.RefundOrder(c, ""); err != nil {
		t.Fatal(err)
	}
	oa := e.get(path("/orders/%d", a))
	eq(t, "completed", oa["status"], any("completed"))
	eq(t, "keys", len(list(t, oa["keys"])), 1)
	ob := e.get(path("/orders/%d", b))
	eq(t, "failed", ob["status"], any("failed"))
	eq(t, "reason", ob["status_reason"], any("key revoked"))
	eq(t, "refund", e.get(path("/orders/%d", c))["status"], any("refund"))
	eq(t, "credited twice", e.sim.Balance().String(), balance.Add(decimal.RequireFromString("119.98")).String())
	if err := e.sim.CompleteOrder(a); err == nil {
		t.Fatal("completing a completed order succeeded")
	}
	if err := e.sim.FailOrder(9999, "x"); err == nil {
		t.Fatal("failing an unknown order succeeded")
	}
	snap, ok := e.sim.Order(a)
	if !ok || snap.Status != OrderCompleted || len(snap.Keys) != 1 || snap.KeyID != simcatalog.DemoGameKey || snap.Type != LineGameKey {
		t.Fatalf("snapshot %+v", snap)
	}
	if _, ok := e.sim.Order(9999); ok {
		t.Fatal("unknown order found")
	}
}

func TestBehaviorPrecedence(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetBehavior(LineGiftCard, Behavior{Mode: Fail})
	e.sim.SetBehavior(simcatalog.DemoGiftCard, Behavior{Mode: Complete})
	e.sim.SetBehavior("google-play-us", Behavior{Mode: Refund})
	e.sim.SetStock("google-play-us-10", 10)
	item := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	line := e.buyGiftCard(simcatalog.DemoGiftCardLowStock, 1)
	cat := num(t, e.post("/gift-cards/order", obj{"category_id": "google-play-us", "card_id": "google-play-us-10", "quantity": 1})["number"])
	other := num(t, e.post("/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 50})["number"])
	e.sim.ClearBehavior(simcatalog.DemoGiftCard)
	later := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	for n, want := range map[int]string{item: "completed", line: "failed", cat: "refund", other: "completed", later: "failed"} {
		eq(t, path("order %d", n), e.get(path("/orders/%d", n))["status"], any(want))
	}
}

func TestSlowConfig(t *testing.T) {
	e := newEnv(t, Config{Slow: true})
	n := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	p := path("/orders/%d", n)
	eq(t, "t0", e.get(p)["status"], any("created"))
	e.clock.Add(time.Second)
	eq(t, "t1", e.get(p)["status"], any("processing"))
	e.clock.Add(3 * time.Second)
	eq(t, "t4", e.get(p)["status"], any("completed"))
}

func TestInsufficientBalance(t *testing.T) {
	e := newEnv(t, Config{Balance: decimal.RequireFromString("10")})
	r := e.send(e.key, http.MethodPost, "/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1})
	e.wantError(r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(r.body["error"].(obj)["message"].(string), "insufficient balance") {
		t.Fatalf("message %s", r.raw)
	}
	eq(t, "orders", len(e.sim.Orders()), 0)
	eq(t, "balance", e.sim.Balance().String(), "10")
	eq(t, "transactions", len(e.sim.Transactions()), 1)
	eq(t, "stock", e.sim.Catalog().GiftCategories[0].Cards[2].Stock, 250)
	// An order for exactly the balance goes through.
	e.post("/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 666})
	eq(t, "balance", e.sim.Balance().StringFixed(4), "0.0100")
}

func TestOrderValidation(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetStock(simcatalog.DemoGiftCardLowStock, 3)
	gc := func(cat, card string, qty any) obj { return obj{"category_id": cat, "card_id": card, "quantity": qty} }
	gk := func(game, key string, qty any) obj { return obj{"game_id": game, "key_id": key, "quantity": qty} }
	tu := func(cat, offer string, fields any) obj {
		return obj{"category_id": cat, "offer_id": offer, "fields": fields}
	}
	mo := func(svc, prod string, fields any) obj {
		return obj{"service_id": svc, "product_id": prod, "fields": fields}
	}
	sg := func(app, sub any, region, invite any) obj {
		return obj{"app_id": app, "sub_id": sub, "region": region, "invite_url": invite}
	}
	st := func(login, currency, amount any) obj {
		return obj{"store_login": login, "currency": currency, "amount": amount}
	}
	cases := []struct {
		name, path string
		body       any
	}{
		{"empty body", "/gift-cards/order", ""},
		{"malformed", "/gift-cards/order", "{"},
		{"gc missing card", "/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory, "quantity": 1}},
		{"gc missing quantity", "/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard}},
		{"gc quantity string", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCard, "1")},
		{"gc quantity fraction", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCard, 1.5)},
		{"gc quantity 0", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCard, 0)},
		{"gc quantity 101", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCard, 101)},
		{"gc above max", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCard, 51)},
		{"gc below min", "/gift-cards/order", gc("steam-us", simcatalog.DemoGiftCardMinQuantity, 4)},
		{"gc above stock", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCardLowStock, 4)},
		{"gc out of stock", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCardOutOfStock, 1)},
		{"gc hidden card", "/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCardHidden, 1)},
		{"gc hidden category", "/gift-cards/order", gc(simcatalog.DemoGiftCategoryHidden, "apple-in-100", 1)},
		{"gc card of other category", "/gift-cards/order", gc("google-play-us", simcatalog.DemoGiftCard, 1)},
		{"gc unknown", "/gift-cards/order", gc("nope", "nope", 1)},
		{"gk out of stock", "/game-keys/order", gk(simcatalog.DemoGame, simcatalog.DemoGameKeyOutOfStock, 1)},
		{"gk hidden key", "/game-keys/order", gk(simcatalog.DemoGame, simcatalog.DemoGameKeyHidden, 1)},
		{"gk hidden game", "/game-keys/order", gk(simcatalog.DemoGameHidden, simcatalog.DemoGameHidden+"-std", 1)},
		{"gk above max", "/game-keys/order", gk(simcatalog.DemoGame, simcatalog.DemoGameKey, 21)},
		{"gk missing game", "/game-keys/order", obj{"key_id": simcatalog.DemoGameKey, "quantity": 1}},
		{"tu missing fields", "/top-ups/order", obj{"category_id": simcatalog.DemoTopUpCategory, "offer_id": simcatalog.DemoTopUpOffer}},
		{"tu missing field", "/top-ups/order", tu(simcatalog.DemoTopUpCategoryTwoFields, simcatalog.DemoTopUpCategoryTwoFields+"-86", obj{"user_id": "1"})},
		{"tu extra field", "/top-ups/order", tu(simcatalog.DemoTopUpCategory, simcatalog.DemoTopUpOffer, obj{"player_id": "5", "zone": "1"})},
		{"tu empty field", "/top-ups/order", tu(simcatalog.DemoTopUpCategory, simcatalog.DemoTopUpOffer, obj{"player_id": " "})},
		{"tu field not string", "/top-ups/order", tu(simcatalog.DemoTopUpCategory, simcatalog.DemoTopUpOffer, obj{"player_id": 5})},
		{"tu bad select", "/top-ups/order", tu(simcatalog.DemoTopUpCategorySelect, simcatalog.DemoTopUpCategorySelect+"-60", obj{"uid": "7", "server": "Mars"})},
		{"tu bad number", "/top-ups/order", tu(simcatalog.DemoTopUpCategorySelect, simcatalog.DemoTopUpCategorySelect+"-60", obj{"uid": "x7", "server": "Asia"})},
		{"tu offer of other category", "/top-ups/order", tu(simcatalog.DemoTopUpCategory, "free-fire-100", obj{"player_id": "5"})},
		{"tu hidden offer", "/top-ups/order", tu(simcatalog.DemoTopUpCategory, simcatalog.DemoTopUpCategory+"-16200", obj{"player_id": "5"})},
		{"tu hidden category", "/top-ups/order", tu(simcatalog.DemoTopUpCategoryHidden, simcatalog.DemoTopUpCategoryHidden+"-475", obj{"riot_id": "a#1"})},
		{"mo missing field", "/manual-services/order", mo(simcatalog.DemoManualService, simcatalog.DemoManualOffer, obj{"login": "a"})},
		{"mo no fields", "/manual-services/order", obj{"service_id": simcatalog.DemoManualService, "product_id": simcatalog.DemoManualOffer}},
		{"mo extra field", "/manual-services/order", mo(simcatalog.DemoManualServiceNoChat, simcatalog.DemoManualOfferNoChat, obj{"trade_url": "u", "x": "y"})},
		{"mo product of other service", "/manual-services/order", mo(simcatalog.DemoManualService, simcatalog.DemoManualOfferNoChat, obj{"login": "a", "password": "b"})},
		{"mo missing service", "/manual-services/order", obj{"product_id": simcatalog.DemoManualOffer}},
		{"sg unknown app", "/store-gifts/order", sg(1, simcatalog.DemoStoreSub, "US", "https://s.team/p/x")},
		{"sg unknown sub", "/store-gifts/order", sg(simcatalog.DemoStoreApp, 1, "US", "https://s.team/p/x")},
		{"sg unknown region", "/store-gifts/order", sg(simcatalog.DemoStoreApp, simcatalog.DemoStoreSub, "MARS", "https://s.team/p/x")},
		{"sg bad invite", "/store-gifts/order", sg(simcatalog.DemoStoreApp, simcatalog.DemoStoreSub, "US", "not a url")},
		{"sg missing invite", "/store-gifts/order", obj{"app_id": simcatalog.DemoStoreApp, "sub_id": simcatalog.DemoStoreSub, "region": "US"}},
		{"sg app string", "/store-gifts/order", sg("1245620", simcatalog.DemoStoreSub, "US", "https://s.team/p/x")},
		{"st missing login", "/store-topup/order", obj{"amount": "5"}},
		{"st missing amount", "/store-topup/order", obj{"store_login": "gaben"}},
		{"st amount number", "/store-topup/order", st("gaben", "USD", 5)},
		{"st three decimals", "/store-topup/order", st("gaben", "USD", "5.125")},
		{"st below min", "/store-topup/order", st("gaben", "USD", "0.14")},
		{"st below min RUB", "/store-topup/order", st("gaben", "RUB", "13")},
		{"st unknown currency", "/store-topup/order", st("gaben", "EUR", "5")},
		{"st lowercase currency", "/store-topup/order", st("gaben", "usd", "5")},
		{"st negative", "/store-topup/order", st("gaben", "USD", "-5")},
		{"st zero", "/store-topup/order", st("gaben", "USD", "0")},
		{"st exponent", "/store-topup/order", st("gaben", "USD", "1e2")},
		{"st invalid login", "/store-topup/order", st("invalid-login", "USD", "5")},
		{"stars below", "/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 49}},
		{"stars above", "/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 10001}},
		{"stars no user", "/messenger/stars/buy", obj{"quantity": 100}},
		{"stars bad user", "/messenger/stars/buy", obj{"messenger_username": "bob smith", "quantity": 100}},
		{"premium bad months", "/messenger/premium/buy", obj{"messenger_username": "bob", "months": 4}},
		{"premium missing months", "/messenger/premium/buy", obj{"messenger_username": "bob"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.wantError(e.send(e.key, http.MethodPost, c.path, c.body), http.StatusBadRequest, "invalid_request")
		})
	}
	eq(t, "no order created", len(e.sim.Orders()), 0)
	eq(t, "balance untouched", e.sim.Balance().String(), "1000")

	// Boundaries that are accepted.
	e.post("/gift-cards/order", gc("steam-us", simcatalog.DemoGiftCardMinQuantity, 5))
	e.post("/gift-cards/order", gc(simcatalog.DemoGiftCategory, simcatalog.DemoGiftCardLowStock, 3))
	e.post("/store-topup/order", st("gaben", "USD", "0.15"))
	e.post("/store-topup/order", obj{"store_login": "gaben", "amount": "5.5"})
	e.post("/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 10000})
	o := e.post("/store-gifts/order", obj{"app_id": simcatalog.DemoStoreApp, "sub_id": simcatalog.DemoStoreSub, "region": "us",
		"invite_url": "https://s.team/p/x", "app_name": "Elden Ring (gift)"})
	eq(t, "app_name given", o["app_name"], any("Elden Ring (gift)"))
	eq(t, "region canonical", o["region"], any("US"))
	eq(t, "low stock sold out", e.sim.Catalog().GiftCategories[0].Cards[3].Stock, 0)
}

func TestStoreTopupCharge(t *testing.T) {
	e := newEnv(t, Config{})
	cases := []struct{ currency, amount, amountUSD, charged, shown string }{
		{"USD", "10", "10.0000", "9.7000", "10.00"},
		{"USD", "0.15", "0.1500", "0.1455", "0.15"},
		{"UAH", "100", "2.4272", "2.3544", "100.00"},
		{"KZT", "5000.5", "9.8049", "9.5108", "5000.50"},
		{"RUB", "100.125", "1.0824", "1.0499", "100.125"},
	}
	for _, c := range cases {
		o := e.post("/store-topup/order", obj{"store_login": "gaben", "currency": c.currency, "amount": c.amount})
		eq(t, c.currency+" "+c.amount+" amount_usd", o["amount_usd"], any(c.amountUSD))
		eq(t, c.currency+" "+c.amount+" charged", o["charged_usd"], any(c.charged))
		eq(t, c.currency+" "+c.amount+" amount", o["amount"], any(c.shown))
		eq(t, "login", o["store_login"], any("gaben"))
	}
}

func TestListOrders(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetBehavior(LineMessengerStars, Behavior{Mode: Stay})
	e.sim.SetBehavior(LineMessengerPremium, Behavior{Mode: Fail})
	var all []int
	for i := range 7 {
		switch i % 3 {
		case 0:
			all = append(all, e.buyGiftCard(simcatalog.DemoGiftCard, 1))
		case 1:
			all = append(all, num(t, e.post("/messenger/stars/buy", obj{"messenger_username": "bob", "quantity": 50})["number"]))
		case 2:
			all = append(all, num(t, e.post("/messenger/premium/buy", obj{"messenger_username": "bob", "months": 3})["number"]))
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(all)))

	l := e.get("/orders")
	eq(t, "object", l["object"], any("list"))
	eq(t, "limit", num(t, l["limit"]), 20)
	eq(t, "has_more", l["has_more"], any(false))
	eq(t, "next_cursor", l["next_cursor"], nil)
	data := list(t, l["data"])
	eq(t, "count", len(data), 7)
	for i, v := range data {
		o := v.(obj)
		eq(t, "newest first", num(t, o["number"]), all[i])
		if _, ok := o["status_history"]; ok {
			t.Fatal("list carries status_history")
		}
	}

	var paged []int
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("too many pages")
		}
		page := e.get("/orders?limit=3" + cursor)
		for _, v := range list(t, page["data"]) {
			paged = append(paged, num(t, v.(obj)["number"]))
		}
		if page["has_more"] != true {
			eq(t, "last cursor", page["next_cursor"], nil)
			break
		}
		cursor = path("&cursor=%d", num(t, page["next_cursor"]))
	}
	eq(t, "paged", fmtInts(paged), fmtInts(all))

	eq(t, "type filter", len(list(t, e.get("/orders?type=GIFT_CARD")["data"])), 3)
	eq(t, "status filter", len(list(t, e.get("/orders?status=PROCESSING")["data"])), 2)
	eq(t, "failed", len(list(t, e.get("/orders?status=FAILED&type=MESSENGER_PREMIUM")["data"])), 2)
	eq(t, "none", len(list(t, e.get("/orders?status=REFUND")["data"])), 0)
	eq(t, "cursor", num(t, list(t, e.get(path("/orders?cursor=%d", all[0]))["data"])[0].(obj)["number"]), all[1])

	for _, q := range []string{"limit=0", "limit=101", "cursor=0", "cursor=x", "status=completed", "status=DONE", "type=gift_card", "type=GIFT"} {
		e.wantError(e.send(e.key, http.MethodGet, "/orders?"+q, nil), http.StatusBadRequest, "invalid_request")
	}
	for _, p := range []string{"/orders/1", "/orders/0", "/orders/abc", "/orders/-5"} {
		e.wantError(e.send(e.key, http.MethodGet, p, nil), http.StatusNotFound, "not_found")
	}
	eq(t, "snapshots", len(e.sim.Orders()), 7)
}

func fmtInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestConcurrentOrders(t *testing.T) {
	e := newEnv(t, Config{Balance: decimal.RequireFromString("100")})
	// 20 buyers race for 9 cards of 10.35 USD: the balance allows 9.
	var wg sync.WaitGroup
	statuses := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			r := e.send(e.key, http.MethodPost, "/gift-cards/order", obj{"category_id": simcatalog.DemoGiftCategory, "card_id": simcatalog.DemoGiftCard, "quantity": 1})
			statuses <- r.status
			e.sim.Orders()
			e.sim.Balance()
		})
	}
	wg.Wait()
	close(statuses)
	ok := 0
	for s := range statuses {
		if s == http.StatusOK {
			ok++
		}
	}
	eq(t, "accepted", ok, 9)
	eq(t, "balance", e.sim.Balance().StringFixed(4), "6.8500")
	eq(t, "creates", e.sim.CreateCount(), 20)
}

func TestOrderCompletesOnItsSecondRead(t *testing.T) {
	e := newEnv(t, Config{})
	e.sim.SetBehavior(LineGiftCard, Behavior{Mode: Complete, ProcessingAfter: time.Hour, CompleteOnRead: 2})
	n := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	p := path("/orders/%d", n)
	eq(t, "first read", e.get(p)["status"], any("created"))
	e.clock.Add(24 * time.Hour) // time alone ends nothing
	if o, _ := e.sim.Order(n); o.Status != "created" && o.Status != "processing" {
		t.Fatalf("after a day unread: %s", o.Status)
	}
	o := e.get(p)
	eq(t, "second read", o["status"], any("completed"))
	eq(t, "codes", len(list(t, o["codes"])), 1)
	eq(t, "third read", e.get(p)["status"], any("completed"))
}
