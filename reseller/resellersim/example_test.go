package resellersim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"shopbot/reseller/resellersim"
)

func Example() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sim := resellersim.New(resellersim.Config{Now: func() time.Time { return now }, Seed: 1})
	sim.SetBehavior("gift_card", resellersim.Behavior{CompleteAfter: 5 * time.Second})
	srv := httptest.NewServer(sim)
	defer srv.Close()

	call := func(method, path, body string) map[string]any {
		req, _ := http.NewRequest(method, srv.URL+"/api/v1"+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer test-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return out
	}

	o := call("POST", "/gift-cards/order", `{"category_id":"apple-us","card_id":"apple-us-10","quantity":1}`)
	fmt.Println(o["number"], o["status"], o["charged_usd"])
	fmt.Println(call("GET", "/orders/1001", "")["status"])
	now = now.Add(5 * time.Second)
	o = call("GET", "/orders/1001", "")
	fmt.Println(o["status"], len(o["codes"].([]any)))
	fmt.Println(call("GET", "/me", "")["balance_usd"])
	// Output:
	// 1001 created 10.3500
	// processing
	// completed 1
	// 989.6500
}
