package upstreamorder

import (
	"encoding/json"
	"testing"

	"shopbot/reseller"
	"shopbot/state"
)

// TestRequestsKeepTheirStoredShape pins, for a quote of every line, the
// stored request (its JSON), its slot name (kind) and its signature: running
// shops keep all three in Redis and compare them with what the code builds
// now, so none may change.
func TestRequestsKeepTheirStoredShape(t *testing.T) {
	for _, tc := range []struct {
		q               state.Quote
		kind, signature string
		json            string
		fungible        bool
	}{
		{state.Quote{Line: "topup", Item: "EUR", Quantity: 1, Fields: map[string]string{"store_login": "Gamer_01", "currency": "eur", "amount": "12.50"}},
			"store_topup:5807cb89d6c7069d", "05fb903dc36a0f53165895bd15374bda", `{"type":"store_topup","params":{"amount":"12.50","currency":"eur","store_login":"Gamer_01"}}`, true},
		{state.Quote{Line: "topup", Item: "USD", Quantity: 1, Fields: map[string]string{"login": " player ", "amount": "5"}},
			"store_topup:2bf7793fba1cc807", "a824dc444e26c9cd93db32c02bbb3eec", `{"type":"store_topup","params":{"amount":"5","currency":"USD","store_login":" player "}}`, true},
		{state.Quote{Line: "stars", Item: "stars", Quantity: 500, Fields: map[string]string{"username": "@Durov"}},
			"messenger_stars:135d81051dcbeb62", "f7ea946d1eacd9891d9fecb39db8080c", `{"type":"messenger_stars","params":{"messenger_username":"@Durov","quantity":"500"}}`, true},
		{state.Quote{Line: "premium", Item: "3", Quantity: 1, Fields: map[string]string{"username": "durov"}},
			"messenger_premium:8bb1c4aa60977fee", "6a533ea363e659d94b897c856e5b4dbc", `{"type":"messenger_premium","params":{"messenger_username":"durov","months":"3"}}`, true},
		{state.Quote{Line: "premium", Item: "plan", Quantity: 1, Fields: map[string]string{"messenger_username": "@someone", "months": "12"}},
			"messenger_premium:1ee736a3fac51eee", "a82f7e5a5be2d6abe69815c0230674d3", `{"type":"messenger_premium","params":{"messenger_username":"@someone","months":"12"}}`, true},
		{state.Quote{Line: "services", Category: "svc-1", Item: "offer-2", Quantity: 1, Fields: map[string]string{"email": "a@b.c", "note": " hi "}},
			"manual_service:40924afb234f56e9", "d3204fd0e82c919868898106008d9b10", `{"type":"manual_service","params":{"product_id":"offer-2","service_id":"svc-1"},"fields":{"email":"a@b.c","note":" hi "}}`, false},
		{state.Quote{Line: "gifts", Category: "730", Item: "12345", Quantity: 1, Fields: map[string]string{"region": "tr", "invite_url": "https://s.example/p/1"}},
			"store_gift:713cd38b9dbcf72e", "6c9c66aa3e4554458b84176a2c2ad119", `{"type":"store_gift","params":{"app_id":"730","invite_url":"https://s.example/p/1","region":"tr","sub_id":"12345"}}`, true},
		{state.Quote{Line: "giftcards", Category: "apple", Item: "apple-10", Quantity: 3},
			"gift_card:2bfec44f37302bbf", "03df5299706040202b8791b72a52c826", `{"type":"gift_card","params":{"card_id":"apple-10","category_id":"apple","quantity":"3"}}`, true},
		{state.Quote{Line: "keys", Category: "game-7", Item: "key-9", Quantity: 2},
			"game_key:e3b0c44298fc1c14", "0ca04e78819731e5202335b22109b5ea", `{"type":"game_key","params":{"game_id":"game-7","key_id":"key-9","quantity":"2"}}`, false},
		{state.Quote{Line: "games", Category: "pubg", Item: "uc-60", Quantity: 1, Fields: map[string]string{"player_id": "5551234"}},
			"game_topup:e3b0c44298fc1c14", "7bc2ea5805e5fdb0c1d56b2a7b353550", `{"type":"game_topup","params":{"category_id":"pubg","offer_id":"uc-60"},"fields":{"player_id":"5551234"}}`, false},
	} {
		t.Run(tc.q.Line, func(t *testing.T) {
			r, err := Build(&tc.q)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tc.json {
				t.Errorf("stored as %s, want %s", raw, tc.json)
			}
			if got := r.Kind(); got != tc.kind {
				t.Errorf("kind %s, want %s", got, tc.kind)
			}
			if got := r.Signature(); got != tc.signature {
				t.Errorf("signature %s, want %s", got, tc.signature)
			}
			if got := r.Fungible(); got != tc.fungible {
				t.Errorf("fungible %v, want %v", got, tc.fungible)
			}
			// A request read back from the store is the same request.
			var back Request
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if back.Kind() != tc.kind || back.Signature() != tc.signature {
				t.Errorf("read back: kind %s signature %s", back.Kind(), back.Signature())
			}
		})
	}
	if _, err := Build(&state.Quote{Line: "nope"}); err == nil {
		t.Error("a quote of an unknown line built a request")
	}
}

// TestRequestMatchesWhatTheUpstreamEchoes: an upstream order matches a
// request when every echoed field is equal (after normalising), possibly
// when one is missing, and not when one differs or the type does.
func TestRequestMatchesWhatTheUpstreamEchoes(t *testing.T) {
	order := func(raw string) *reseller.Order {
		t.Helper()
		var u reseller.Order
		if err := json.Unmarshal([]byte(raw), &u); err != nil {
			t.Fatal(err)
		}
		return &u
	}
	stars := &Request{Type: reseller.OrderTypeMessengerStars, Params: map[string]string{"messenger_username": "@Durov", "quantity": "500"}}
	topup := &Request{Type: reseller.OrderTypeStoreTopup, Params: map[string]string{"store_login": "gamer", "currency": "eur", "amount": "12.50"}}
	keys := &Request{Type: reseller.OrderTypeGameKey, Params: map[string]string{"game_id": "g", "key_id": "k", "quantity": "2"}}
	for _, tc := range []struct {
		name string
		r    *Request
		u    string
		want Match
	}{
		{"stars: the username without @ and in other case, stars for quantity", stars, `{"number":1,"type":"messenger_stars","messenger_username":"durov","stars":500}`, FullMatch},
		{"stars: another quantity", stars, `{"number":1,"type":"messenger_stars","messenger_username":"durov","stars":50}`, NoMatch},
		{"stars: the username missing", stars, `{"number":1,"type":"messenger_stars","messenger_username":null,"stars":500}`, PossibleMatch},
		{"stars: another type", stars, `{"number":1,"type":"messenger_premium","messenger_username":"durov","months":3}`, NoMatch},
		{"topup: the amount as a number, the currency upper case", topup, `{"number":2,"type":"STORE_TOPUP","store_login":"gamer","currency":"EUR","amount":12.5}`, FullMatch},
		{"topup: another login", topup, `{"number":2,"type":"store_topup","store_login":"other","currency":"EUR","amount":"12.50"}`, NoMatch},
		{"keys: nothing echoed, anything of the type matches", keys, `{"number":3,"type":"game_key"}`, FullMatch},
	} {
		if got := tc.r.Match(order(tc.u)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
