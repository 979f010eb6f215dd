package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"shopbot/bot/webapp/initdata"
)

// The Mini App's API under load (-webapp): the shop runs again with
// WEBAPP_URL set, and the same buyers browse the app instead of the chat:
// the session, then a product line's categories and a category's items
// (with their prices and fields), each request signed with the buyer's
// initData as Telegram would sign it. A request's latency is its HTTP
// round trip; CPU is the shop's per request, as the chat's is per update.

// appPath is where the benchmark's shop serves the Mini App.
const appPath = "/app/"

// initDataHeader carries a request's initData (bot/webapp's
// InitDataHeader: the benchmark drives the app as the page does, from
// outside).
const initDataHeader = "X-Telegram-Init-Data"

// appLines are the lines a buyer browses in the app: those with a list of
// categories.
var appLines = []string{"giftcards", "keys", "games", "services", "gifts"}

// appBuyer is one buyer of the Mini App.
type appBuyer struct {
	client   *http.Client
	base     string // http://addr/app/api/
	initData string
}

func newAppBuyer(client *http.Client, addr string, id int64) *appBuyer {
	data := initdata.SignUser(token, initdata.User{ID: id, FirstName: "Buyer", LanguageCode: "en"}, time.Now())
	return &appBuyer{client: client, base: "http://" + addr + appPath + "api/", initData: data}
}

// get makes one API request and decodes its JSON answer into v (nil:
// read and dropped).
func (b *appBuyer) get(ctx context.Context, path string, v any) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set(initDataHeader, b.initData)
	start := time.Now()
	res, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d %.200s", path, res.StatusCode, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			return 0, fmt.Errorf("GET %s: %w", path, err)
		}
	}
	return took, nil
}

// browseApp opens the app and browses: a line's categories, then one of
// its categories (its items), and so on; presses requests after the
// session, with the think time between them.
func (b *appBuyer) browseApp(ctx context.Context, presses int, think time.Duration, rng *rand.Rand) (lat []time.Duration, lost int) {
	record := func(took time.Duration, err error) {
		if err != nil {
			lost++
			return
		}
		lat = append(lat, took)
	}
	record(b.get(ctx, "session", nil))
	var line string
	var cats []string
	for i := 0; i < presses && ctx.Err() == nil; i++ {
		if think > 0 {
			sleep(ctx, think/2+time.Duration(rng.Int64N(int64(think))))
		}
		if len(cats) == 0 || i%2 == 0 {
			line = appLines[rng.IntN(len(appLines))]
			var list struct {
				Categories []struct {
					ID string `json:"id"`
				} `json:"categories"`
			}
			took, err := b.get(ctx, "lines/"+line, &list)
			record(took, err)
			cats = cats[:0]
			for _, c := range list.Categories {
				cats = append(cats, c.ID)
			}
			continue
		}
		cat := cats[rng.IntN(len(cats))]
		record(b.get(ctx, "lines/"+line+"/categories/"+url.PathEscape(cat), nil))
	}
	return lat, lost
}
