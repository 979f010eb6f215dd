package reseller

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestOrders(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /orders", "order_list.json", func(t *testing.T, r *http.Request) {
		testMethod(t, r, "GET")
		testQuery(t, r, url.Values{"limit": {"2"}, "cursor": {"1010"}, "status": {"COMPLETED"}, "type": {"GIFT_CARD"}})
	})
	// Lowercase response forms are sent in the uppercase filter form.
	got, err := env.client.Orders(t.Context(), &OrdersOptions{Limit: 2, Cursor: 1010, Status: OrderCompleted, Type: OrderTypeGiftCard})
	if err != nil {
		t.Fatal(err)
	}
	if got.Object != "list" || got.Limit != 2 || got.HasMore || got.NextCursor != nil || len(got.Data) != 2 {
		t.Fatalf("list = %+v", got)
	}
	if o := got.Data[0]; o.Number != 1009 || o.Type != OrderTypeGameTopup || string(o.Status) != "created" {
		t.Errorf("first = %+v", o)
	}
	if raw, ok := got.Data[0].RawField("offer_id"); !ok || string(raw) != `"mlbb-86"` {
		t.Errorf("RawField(offer_id) = %s, %v", raw, ok)
	}
	if o := got.Data[1]; !slices.Equal(o.Codes, []string{"ZZZZ"}) || o.ChargedUSD.String() != "9.9000" {
		t.Errorf("second = %+v", o)
	}
}

func TestOrders_uppercaseFilters(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /orders", "order_list.json", func(t *testing.T, r *http.Request) {
		testQuery(t, r, url.Values{"status": {"REFUND"}, "type": {"GAME_TOPUP"}})
	})
	if _, err := env.client.Orders(t.Context(), &OrdersOptions{Status: "REFUND", Type: "GAME_TOPUP"}); err != nil {
		t.Fatal(err)
	}
}

// orderFixtures are the hand-written orders of every product line and what
// they decode to (Raw is checked against the fixture separately).
var orderFixtures = []struct {
	file string
	want Order
	keys []string // DeliverableCodes
}{
	{"order_store_topup.json", Order{
		Object: "order", Number: 1001, Type: OrderTypeStoreTopup, Status: OrderCompleted,
		StoreLogin: "gamer_42", Currency: RUB, Amount: moneyPtr("1500.0000"), AmountUSD: moneyPtr("16.3200"),
		ChargedUSD: money("15.9900"), CreatedAt: ts("2024-05-01T10:00:00Z"),
	}, nil},
	{"order_messenger_stars.json", Order{
		Object: "order", Number: 1002, Type: OrderTypeMessengerStars, Status: OrderProcessing,
		MessengerUsername: "alice", Stars: 500, ChargedUSD: money("7.5000"), CreatedAt: ts("2024-05-01T10:01:00Z"),
	}, nil},
	{"order_messenger_premium.json", Order{
		Object: "order", Number: 1003, Type: OrderTypeMessengerPremium, Status: OrderFailed,
		MessengerUsername: "bob", Months: 12, ChargedUSD: money("0.0000"), StatusReason: "user not found",
		CreatedAt: ts("2024-05-01T10:02:00Z"),
		StatusHistory: []StatusChange{
			{Status: OrderCreated, At: ts("2024-05-01T10:02:00Z")},
			{Status: OrderFailed, Reason: "user not found", At: ts("2024-05-01T10:03:00Z")},
		},
	}, nil},
	{"order_manual_service.json", Order{
		Object: "order", Number: 1004, Type: OrderTypeManualService, Status: OrderProcessing,
		ServiceID: "svc-wallet", ServiceName: "Wallet transfer", ProductID: "p-10", ProductName: "10 USD transfer",
		ManualKind: "transfer", ChatRequired: ptr(true), DeadlineAt: ptr(ts("2024-05-02T10:04:00Z")),
		ChargedUSD: money("10.9000"), CreatedAt: ts("2024-05-01T10:04:00Z"),
		StatusHistory: []StatusChange{
			{Status: OrderCreated, At: ts("2024-05-01T10:04:00Z")},
			{Status: OrderProcessing, At: ts("2024-05-01T10:05:00Z")},
		},
	}, nil},
	{"order_store_gift.json", Order{
		Object: "order", Number: 1005, Type: OrderTypeStoreGift, Status: OrderCompleted,
		AppID: 730, AppName: "Counter-Strike 2", SubID: 54029, OfferName: "Prime Status Upgrade", Region: "KZ",
		InviteURL: "https://store.example/p/invite/ABC", ChatRequired: ptr(false),
		ChargedUSD: money("13.2100"), CreatedAt: ts("2024-05-01T10:05:00Z"),
	}, nil},
	{"order_gift_card.json", Order{
		Object: "order", Number: 1006, Type: OrderTypeGiftCard, Status: OrderCompleted,
		CategoryID: "cat-psn-us", CategoryName: "PSN USA", CardID: "psn-10", CardName: "PSN 10 USD", Quantity: 2,
		Codes:      []string{"AAAA-BBBB-CCCC", "DDDD-EEEE-FFFF"},
		ChargedUSD: money("19.8000"), CreatedAt: ts("2024-05-01T10:06:00Z"),
		StatusHistory: []StatusChange{{Status: OrderCompleted, At: ts("2024-05-01T10:07:00Z")}},
	}, []string{"AAAA-BBBB-CCCC", "DDDD-EEEE-FFFF"}},
	{"order_game_key_strings.json", Order{
		Object: "order", Number: 1007, Type: OrderTypeGameKey, Status: OrderCompleted, Quantity: 2,
		Keys:       RawList{json.RawMessage(`"KEY1-AAAA-BBBB"`), json.RawMessage(`" KEY2-CCCC-DDDD "`)},
		ChargedUSD: money("39.9800"), CreatedAt: ts("2024-05-01T10:08:00Z"),
	}, []string{"KEY1-AAAA-BBBB", "KEY2-CCCC-DDDD"}},
	{"order_game_key_objects.json", Order{
		Object: "order", Number: 1008, Type: OrderTypeGameKey, Status: OrderCompleted, Quantity: 5,
		Keys: RawList{
			json.RawMessage(`{"key": "OBJ1-AAAA", "issued_at": "2024-05-01T10:09:00Z"}`),
			json.RawMessage(`{"Code": "OBJ2-BBBB", "pin": "1234"}`),
			json.RawMessage(`{"serial": 987654321}`),
			json.RawMessage(`{"activation_key": "OBJ4-DDDD", "value": ""}`),
			json.RawMessage(`{"weird": {"nested": true}}`),
			json.RawMessage(`null`),
			json.RawMessage(`42`),
		},
		ChargedUSD: money("99.9500"), CreatedAt: ts("2024-05-01T10:09:00Z"),
	}, []string{"OBJ1-AAAA", "OBJ2-BBBB (pin: 1234)", "987654321", "OBJ4-DDDD", `{"weird":{"nested":true}}`, "42"}},
	{"order_game_topup.json", Order{
		Object: "order", Number: 1009, Type: OrderTypeGameTopup, Status: OrderCreated,
		CategoryID: "cat-mlbb", OfferName: "86 Diamonds",
		ChargedUSD: money("1.4200"), CreatedAt: ts("2024-05-01T10:10:00Z"),
	}, nil},
}

func TestOrder(t *testing.T) {
	for _, tt := range orderFixtures {
		t.Run(tt.file, func(t *testing.T) {
			env := setup(t)
			env.serveFixture("GET /orders/{number}", tt.file, func(t *testing.T, r *http.Request) {
				testMethod(t, r, "GET")
				testNoBody(t, r)
				if want := fmt.Sprint(tt.want.Number); r.PathValue("number") != want {
					t.Errorf("number = %s, want %s", r.PathValue("number"), want)
				}
			})
			got, err := env.client.Order(t.Context(), tt.want.Number)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(got.Raw, fixture(t, tt.file)) {
				t.Errorf("Raw = %s", got.Raw)
			}
			want := tt.want
			want.Raw = got.Raw
			assertEqual(t, got, &want)
			if codes := got.DeliverableCodes(); !slices.Equal(codes, tt.keys) {
				t.Errorf("DeliverableCodes = %q, want %q", codes, tt.keys)
			}
		})
	}
}

func TestOrder_gameTopupRawFields(t *testing.T) {
	o := decodeFixture[Order](t, "order_game_topup.json")
	raw, ok := o.RawField("fields")
	if !ok || !jsonEqual(raw, []byte(`{"player_id": "12345678", "zone_id": "2001"}`)) {
		t.Errorf("RawField(fields) = %s, %v", raw, ok)
	}
	if _, ok := o.RawField("absent"); ok {
		t.Error("RawField(absent) found")
	}
	if len(o.DeliverableCodes()) != 0 {
		t.Errorf("game top-up has codes: %q", o.DeliverableCodes())
	}
}

func TestOrder_roundTripMoney(t *testing.T) {
	o := decodeFixture[Order](t, "order_store_topup.json")
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"amount":"1500.0000"`, `"amount_usd":"16.3200"`, `"charged_usd":"15.9900"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("marshalled order lacks %s: %s", want, b)
		}
	}
}

func TestOrder_toleratesOddDeliveries(t *testing.T) {
	var o Order
	err := json.Unmarshal([]byte(`{"object":"order","number":5,"codes":["A",{"code":"B"},null,""],"keys":"SINGLE-KEY"}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Codes, []string{"A", "B"}) {
		t.Errorf("Codes = %q", o.Codes)
	}
	if got := o.DeliveredKeys(); !slices.Equal(got, []string{"SINGLE-KEY"}) {
		t.Errorf("DeliveredKeys = %q", got)
	}
	if got := o.DeliverableCodes(); !slices.Equal(got, []string{"A", "B", "SINGLE-KEY"}) {
		t.Errorf("DeliverableCodes = %q", got)
	}
}

func TestOrderTypeAndStatus(t *testing.T) {
	for typ, want := range map[OrderType]string{
		OrderTypeStoreTopup: "STORE_TOPUP", OrderTypeMessengerStars: "MESSENGER_STARS",
		OrderTypeMessengerPremium: "MESSENGER_PREMIUM", OrderTypeManualService: "MANUAL_SERVICE",
		OrderTypeStoreGift: "STORE_GIFT", OrderTypeGiftCard: "GIFT_CARD", OrderTypeGameKey: "GAME_KEY",
		OrderTypeGameTopup: "GAME_TOPUP", "new_line": "NEW_LINE",
	} {
		if got := typ.Filter(); got != want {
			t.Errorf("%s.Filter() = %s, want %s", typ, got, want)
		}
	}
	if !OrderType("GIFT_CARD").Is(OrderTypeGiftCard) {
		t.Error("Is should ignore case")
	}
	if OrderRefund.Filter() != "REFUND" || !OrderRefund.Terminal() || OrderProcessing.Terminal() || !OrderStatus("COMPLETED").Terminal() {
		t.Error("OrderStatus helpers")
	}
	var o Order
	if err := json.Unmarshal([]byte(`{"number":1,"type":"brand_new_line","status":"on_hold"}`), &o); err != nil {
		t.Fatal(err)
	}
	if o.Type != "brand_new_line" || o.Status != "on_hold" {
		t.Errorf("unknown values not kept: %+v", o)
	}
}

func orderItem(n int) string {
	return fmt.Sprintf(`{"object":"order","number":%d,"type":"gift_card","status":"completed","codes":["C%d"],`+
		`"charged_usd":"1.0000","created_at":"2024-05-01T10:00:00Z"}`, n, n)
}

func TestAllOrders(t *testing.T) {
	env := setup(t)
	calls := pagedServer(t, env, "GET /orders", orderItem, url.Values{"limit": {"3"}, "status": {"COMPLETED"}})
	var got []int64
	for o, err := range env.client.AllOrders(t.Context(), &OrdersOptions{Limit: 3, Status: OrderCompleted}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Number)
	}
	if want := []int64{9, 8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("numbers = %v, want %v", got, want)
	}
	if *calls != 3 {
		t.Errorf("requests = %d, want 3", *calls)
	}
}

func TestAllOrders_earlyBreak(t *testing.T) {
	env := setup(t)
	calls := pagedServer(t, env, "GET /orders", orderItem, nil)
	n := 0
	for _, err := range env.client.AllOrders(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if *calls != 1 {
		t.Errorf("requests = %d, want 1", *calls)
	}
}

func TestAllOrders_stuckCursor(t *testing.T) {
	env := setup(t)
	calls := 0
	env.mux.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		calls++
		writeJSON(w, http.StatusOK, []byte(`{"object":"list","data":[`+orderItem(5)+`],"limit":1,"has_more":true,"next_cursor":5}`))
	})
	var errs int
	for _, err := range env.client.AllOrders(t.Context(), nil) {
		if err != nil {
			errs++
		}
	}
	if errs != 1 || calls != 2 {
		t.Errorf("errors = %d, requests = %d; want 1 and 2", errs, calls)
	}
}

func TestAllOrders_errorStops(t *testing.T) {
	env := setup(t, WithMaxAttempts(1))
	env.mux.HandleFunc("GET /orders", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusUnauthorized, []byte(`{"error":{"type":"unauthorized","message":"bad key"}}`))
	})
	var errs []error
	for _, err := range env.client.AllOrders(t.Context(), nil) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !IsUnauthorized(errs[0]) {
		t.Errorf("errors = %v", errs)
	}
}
