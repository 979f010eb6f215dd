package resellersim

import (
	"net/http"
	"shopbot/reseller/resellersim/simcatalog"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestMe(t *testing.T) {
	e := newEnv(t, Config{Nickname: "alice", Email: "alice@example.com"})
	me := e.get("/me")
	eq(t, "object", me["object"], any("account"))
	eq(t, "nickname", me["nickname"], any("alice"))
	eq(t, "email", me["email"], any("alice@example.com"))
	eq(t, "status", me["status"], any("ACTIVE"))
	eq(t, "balance_usd", me["balance_usd"], any("1000.0000"))
	eq(t, "total_orders", num(t, me["total_orders"]), 0)
	eq(t, "total_spent_usd", me["total_spent_usd"], any("0.0000"))
	if _, err := time.Parse(time.RFC3339, me["created_at"].(string)); err != nil {
		t.Fatal(err)
	}

	e.buyGiftCard(simcatalog.DemoGiftCard, 2)
	me = e.get("/me")
	eq(t, "balance_usd", me["balance_usd"], any("979.3000"))
	eq(t, "total_orders", num(t, me["total_orders"]), 1)
	eq(t, "total_spent_usd", me["total_spent_usd"], any("20.7000"))
}

func TestConfigBalance(t *testing.T) {
	e := newEnv(t, Config{Balance: decimal.RequireFromString("12.5")})
	eq(t, "balance_usd", e.get("/me")["balance_usd"], any("12.5000"))
	e.sim.SetBalance(decimal.Zero)
	eq(t, "balance_usd", e.get("/me")["balance_usd"], any("0.0000"))
	tx := list(t, e.get("/transactions")["data"])[0].(obj)
	eq(t, "type", tx["type"], any("ADJUSTMENT"))
	eq(t, "direction", tx["direction"], any("DEBIT"))
	eq(t, "amount_usd", tx["amount_usd"], any("12.5000"))
	eq(t, "balance_after", tx["balance_after"], any("0.0000"))
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t, Config{APIKey: "secret"})
	for name, key := range map[string]string{"missing": "", "wrong": "test-key"} {
		t.Run(name, func(t *testing.T) {
			e.wantError(e.send(key, http.MethodGet, "/me", nil), http.StatusUnauthorized, "unauthorized")
			e.wantError(e.send(key, http.MethodGet, "/gift-cards/categories", nil), http.StatusUnauthorized, "unauthorized")
		})
	}
	req, _ := http.NewRequest(http.MethodGet, e.base+"/me", nil)
	req.Header.Set("Authorization", "Basic secret")
	e.wantError(e.do(req), http.StatusUnauthorized, "unauthorized")
	eq(t, "status", e.send("secret", http.MethodGet, "/me", nil).status, http.StatusOK)
}

func TestNotFoundEndpoint(t *testing.T) {
	e := newEnv(t, Config{})
	e.wantError(e.send(e.key, http.MethodGet, "/nope", nil), http.StatusNotFound, "not_found")
	e.wantError(e.send(e.key, http.MethodDelete, "/me", nil), http.StatusNotFound, "not_found")
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v2/me", nil)
	req.Header.Set("Authorization", "Bearer test-key")
	e.wantError(e.do(req), http.StatusNotFound, "not_found")
}

func TestBlockedAccount(t *testing.T) {
	e := newEnv(t, Config{})
	n := e.buyGiftCard(simcatalog.DemoGiftCard, 1)
	e.sim.SetAccountStatus(StatusBlocked)
	forbidden := []struct{ method, path string }{
		{"GET", "/me"}, {"GET", "/transactions"}, {"GET", "/transactions/2"},
		{"POST", "/gift-cards/order"}, {"POST", "/game-keys/order"}, {"POST", "/top-ups/order"},
		{"POST", "/manual-services/order"}, {"POST", "/store-gifts/order"}, {"POST", "/store-topup/order"},
		{"POST", "/messenger/stars/buy"}, {"POST", "/messenger/premium/buy"},
	}
	for _, f := range forbidden {
		e.wantError(e.send(e.key, f.method, f.path, obj{}), http.StatusForbidden, "forbidden")
	}
	// Endpoints that do not list 403 keep working.
	e.get("/gift-cards/categories")
	e.get("/orders")
	e.get(path("/orders/%d", n))
	e.get("/store-topup/rates")
	eq(t, "creates", e.sim.CreateCount(), 9)
	eq(t, "orders", len(e.sim.Orders()), 1)

	e.sim.SetAccountStatus(StatusActive)
	eq(t, "status", e.get("/me")["status"], any("ACTIVE"))
}

func TestTransactions(t *testing.T) {
	e := newEnv(t, Config{})
	first := list(t, e.get("/transactions")["data"])
	eq(t, "seeded", len(first), 1)
	dep := first[0].(obj)
	eq(t, "object", dep["object"], any("transaction"))
	eq(t, "direction", dep["direction"], any("CREDIT"))
	eq(t, "type", dep["type"], any("DEPOSIT"))
	eq(t, "status", dep["status"], any("COMPLETED"))
	eq(t, "amount", dep["amount_usd"], any("1000.0000"))
	eq(t, "balance_after", dep["balance_after"], any("1000.0000"))

	e.sim.SetBehavior(simcatalog.DemoGiftCardLowStock, Behavior{Mode: Fail, Reason: "no codes"})
	n1 := e.buyGiftCard(simcatalog.DemoGiftCard, 1)         // 10.35
	n2 := e.buyGiftCard(simcatalog.DemoGiftCardLowStock, 1) // 25.88, fails and is credited back
	e.get(path("/orders/%d", n2))
	n3 := e.buyGiftCard(simcatalog.DemoGiftCard, 3) // 31.05

	all := list(t, e.get("/transactions")["data"])
	eq(t, "count", len(all), 5)
	var numbers []int
	for _, v := range all {
		numbers = append(numbers, num(t, v.(obj)["number"]))
	}
	for i := 1; i < len(numbers); i++ {
		if numbers[i] >= numbers[i-1] {
			t.Fatalf("numbers %v are not newest first", numbers)
		}
	}
	newest := all[0].(obj)
	eq(t, "newest direction", newest["direction"], any("DEBIT"))
	eq(t, "newest type", newest["type"], any("ORDER"))
	eq(t, "newest amount", newest["amount_usd"], any("31.0500"))
	eq(t, "newest balance", newest["balance_after"], any("958.6000"))
	eq(t, "newest note", newest["note"], any(path("Order #%d (gift_card)", n3)))
	refund := all[1].(obj)
	eq(t, "refund direction", refund["direction"], any("CREDIT"))
	eq(t, "refund type", refund["type"], any("ORDER"))
	eq(t, "refund amount", refund["amount_usd"], any("25.8800"))
	eq(t, "refund note", refund["note"], any(path("Refund for order #%d", n2)))
	_ = n1

	// Filters.
	eq(t, "debits", len(list(t, e.get("/transactions?direction=DEBIT")["data"])), 3)
	eq(t, "credits", len(list(t, e.get("/transactions?direction=CREDIT&type=ORDER")["data"])), 1)
	eq(t, "deposits", len(list(t, e.get("/transactions?type=DEPOSIT&status=COMPLETED")["data"])), 1)
	eq(t, "pending", len(list(t, e.get("/transactions?status=PENDING")["data"])), 0)

	// Pagination across pages.
	var seen []int
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		page := e.get("/transactions?limit=2" + cursor)
		eq(t, "object", page["object"], any("list"))
		eq(t, "limit", num(t, page["limit"]), 2)
		for _, v := range list(t, page["data"]) {
			seen = append(seen, num(t, v.(obj)["number"]))
		}
		if page["has_more"] != true {
			if page["next_cursor"] != nil {
				t.Fatalf("next_cursor %v on the last page", page["next_cursor"])
			}
			break
		}
		cursor = path("&cursor=%d", num(t, page["next_cursor"]))
	}
	eq(t, "paged", len(seen), len(numbers))
	for i := range seen {
		eq(t, "paged number", seen[i], numbers[i])
	}
	// cursor returns older transactions only.
	older := list(t, e.get(path("/transactions?cursor=%d", numbers[1]))["data"])
	eq(t, "older", num(t, older[0].(obj)["number"]), numbers[2])

	got := e.get(path("/transactions/%d", numbers[0]))
	eq(t, "get number", num(t, got["number"]), numbers[0])
	eq(t, "get object", got["object"], any("transaction"))
	eq(t, "default limit", num(t, e.get("/transactions")["limit"]), 20)
}

func TestTransactionsInvalidQuery(t *testing.T) {
	e := newEnv(t, Config{})
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "limit=", "cursor=0", "cursor=-3", "cursor=abc",
		"direction=credit", "direction=IN", "type=REFUND", "status=DONE"} {
		t.Run(q, func(t *testing.T) {
			e.wantError(e.send(e.key, http.MethodGet, "/transactions?"+q, nil), http.StatusBadRequest, "invalid_request")
		})
	}
	eq(t, "limit 100", num(t, e.get("/transactions?limit=100")["limit"]), 100)
}

func TestForeignTransaction(t *testing.T) {
	e := newEnv(t, Config{})
	foreign := e.sim.ForeignTransactionNumbers()
	if len(foreign) == 0 {
		t.Fatal("no foreign transactions seeded")
	}
	for _, n := range foreign {
		e.wantError(e.send(e.key, http.MethodGet, path("/transactions/%d", n), nil), http.StatusNotFound, "not_found")
	}
	for _, p := range []string{"/transactions/999", "/transactions/0", "/transactions/abc"} {
		e.wantError(e.send(e.key, http.MethodGet, p, nil), http.StatusNotFound, "not_found")
	}
	// Foreign transactions never appear in the list.
	for _, v := range list(t, e.get("/transactions?limit=100")["data"]) {
		for _, n := range foreign {
			if num(t, v.(obj)["number"]) == n {
				t.Fatalf("foreign transaction %d listed", n)
			}
		}
	}
	eq(t, "own", len(e.sim.Transactions()), 1)
}
