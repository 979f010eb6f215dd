package reseller

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
)

func TestTransactions(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /transactions", "transaction_list.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"limit": {"2"}, "cursor": {"81"}, "direction": {"CREDIT"},
			"type": {"DEPOSIT"}, "status": {"PENDING"}})
	})
	got, err := env.client.Transactions(t.Context(), &TransactionsOptions{
		Limit: 2, Cursor: 81, Direction: TxCredit, Type: TxDeposit, Status: TxPending,
	})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &TransactionList{
		Object: "list",
		Data: []Transaction{
			{Object: "transaction", Number: 80, Direction: TxCredit, Type: TxDeposit, Status: TxPending,
				AmountUSD: money("500.0000"), BalanceAfter: money("1738.2500"), Note: "USDT deposit",
				CreatedAt: ts("2024-05-02T09:00:00Z")},
			{Object: "transaction", Number: 79, Direction: TxCredit, Type: TxAdjustment, Status: TxCancelled,
				AmountUSD: money("0.1500"), BalanceAfter: money("1238.2500"),
				CreatedAt: ts("2024-05-01T08:00:00Z")},
		},
		Limit:      2,
		HasMore:    true,
		NextCursor: ptr[int64](79),
	})
}

func TestTransactions_nilOptions(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /transactions", "transaction_list.json", func(t *testing.T, r *http.Request) {
		testQuery(t, r, nil)
	})
	if _, err := env.client.Transactions(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestTransaction(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /transactions/{number}", "transaction.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		if r.PathValue("number") != "77" {
			t.Errorf("number = %q", r.PathValue("number"))
		}
	})
	got, err := env.client.Transaction(t.Context(), 77)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, got, &Transaction{
		Object: "transaction", Number: 77, Direction: TxDebit, Type: TxOrder, Status: TxCompleted,
		AmountUSD: money("12.5000"), BalanceAfter: money("1238.2500"), Note: "",
		CreatedAt: ts("2024-05-01T10:00:00.123Z"),
	})
}

// pagedServer serves three pages of numbered items (9..7, 6..4, 3..1) at
// pattern, checking the cursor chain, and counts the requests.
func pagedServer(t *testing.T, env *testEnv, pattern string, item func(n int) string, extra url.Values) *int {
	calls := 0
	env.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		calls++
		q := r.URL.Query()
		for k, v := range extra {
			if !slices.Equal(q[k], v) {
				t.Errorf("page %d: %s = %v, want %v", calls, k, q[k], v)
			}
		}
		cursor := q.Get("cursor")
		var top int
		switch cursor {
		case "":
			top = 9
		case "7":
			top = 6
		case "4":
			top = 3
		default:
			t.Errorf("unexpected cursor %q", cursor)
			http.Error(w, "bad cursor", http.StatusBadRequest)
			return
		}
		var data []string
		for n := top; n > top-3; n-- {
			data = append(data, item(n))
		}
		next, more := "null", "false"
		if top > 3 {
			next, more = strconv.Itoa(top-2), "true"
		}
		body := fmt.Sprintf(`{"object":"list","data":[%s],"limit":3,"has_more":%s,"next_cursor":%s}`,
			join(data), more, next)
		writeJSON(w, http.StatusOK, []byte(body))
	})
	return &calls
}

func join(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

func txItem(n int) string {
	return fmt.Sprintf(`{"object":"transaction","number":%d,"direction":"DEBIT","type":"ORDER","status":"COMPLETED",`+
		`"amount_usd":"1.0000","balance_after":"2.0000","note":null,"created_at":"2024-05-01T10:00:00Z"}`, n)
}

func TestAllTransactions(t *testing.T) {
	env := setup(t)
	calls := pagedServer(t, env, "GET /transactions", txItem, url.Values{"limit": {"3"}, "type": {"ORDER"}})
	var got []int64
	for tx, err := range env.client.AllTransactions(t.Context(), &TransactionsOptions{Limit: 3, Type: TxOrder}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tx.Number)
	}
	if want := []int64{9, 8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("numbers = %v, want %v", got, want)
	}
	if *calls != 3 {
		t.Errorf("requests = %d, want 3", *calls)
	}
}

func TestAllTransactions_earlyBreak(t *testing.T) {
	env := setup(t)
	calls := pagedServer(t, env, "GET /transactions", txItem, nil)
	var got []int64
	for tx, err := range env.client.AllTransactions(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tx.Number)
		if tx.Number == 5 {
			break
		}
	}
	if want := []int64{9, 8, 7, 6, 5}; !slices.Equal(got, want) {
		t.Errorf("numbers = %v, want %v", got, want)
	}
	if *calls != 2 {
		t.Errorf("requests = %d, want 2", *calls)
	}
}
