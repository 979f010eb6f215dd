package webapp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/bottest"
	"shopbot/bot/bottest/shoptest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/images"
	"shopbot/bot/storefront"
	"shopbot/bot/webapp"
	"shopbot/bot/webapp/initdata"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

// buyer is the Mini App's buyer in the tests: the harness's chat.
const buyer = bottest.Chat

// appShop is the whole shop (bottest's, with the upstream simulator, the
// fulfilment worker and Stars payments) serving the Mini App on a local
// listener.
type appShop struct {
	*shoptest.Shop
	b    *storefront.Shop
	sh   *shop.Shop
	app  *webapp.App
	base string // the app's address, http://127.0.0.1:port/app/
}

// newAppShop starts the shop with the Mini App; opts adjust the app (nil:
// the defaults).
func newAppShop(t *testing.T, opts *webapp.Options) *appShop {
	t.Helper()
	return newAppShopWith(t, opts)
}

// newAppShopWith is newAppShop with the shop's options adjusted by each
// of with.
func newAppShopWith(t *testing.T, opts *webapp.Options, with ...func(*storefront.Options)) *appShop {
	t.Helper()
	return newAppShopCatalog(t, nil, opts, with...)
}

// newAppShopCatalog is newAppShopWith with the simulator serving cat (nil:
// the default catalog).
func newAppShopCatalog(t *testing.T, cat *simcatalog.Catalog, opts *webapp.Options, with ...func(*storefront.Options)) *appShop {
	t.Helper()
	s := &appShop{Shop: shoptest.NewWithCatalog(t, cat)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.b = s.NewBot(func(o *storefront.Options) {
		o.Reseller, o.Fulfil, o.Admins = s.Client, s.Cfg, []int64{bottest.Admin}
		o.Checkout = &checkout.Options{Stars: true, Upstream: s.Client}
		o.HTTPListener = ln
		o.Images = &images.Options{} // the chat's product images, which the app shows too
		for _, w := range with {
			w(o)
		}
	})
	rdb, prefix := s.Rdb.Client, s.Rdb.Prefix
	s.sh = &shop.Shop{
		Catalog: catalog.New(s.Client, work.NewCache(rdb, prefix), time.Minute),
		Pricing: shop.Pricing{Markup: shop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:  catalog.Quotes{Store: records.NewQuotes(rdb, prefix)},
		Promos:  catalog.Promos{Store: s.b.Promos},
		Limiter: redisstore.NewLimiter(rdb, prefix, 10, time.Minute),
	}
	lines.Register(s.b.Engine, s.sh)
	o := webapp.Options{}
	if opts != nil {
		o = *opts
	}
	if s.app, err = s.b.ServeWebApp(o, s.sh); err != nil {
		t.Fatal(err)
	}
	s.Run(s.b)
	s.Listening()
	s.base = "http://" + ln.Addr().String() + s.app.Path()
	return s
}

// initData is what Telegram gives the page of user, issued at.
func (s *appShop) initData(user int64, at time.Time) string {
	return initdata.SignUser(s.Fake.Token(), initdata.User{ID: user, FirstName: "Buyer", Username: "buyer", LanguageCode: "en"}, at)
}

// answer is one API answer.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// str reads a string at a path of keys in the answer's body.
func (a answer) str(path ...string) string {
	v, _ := a.at(path...).(string)
	return v
}

func (a answer) at(path ...string) any {
	var v any = a.body
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// call makes an API request as the holder of initData (none when "").
func (s *appShop) call(method, path, initData string, body any) answer {
	s.T.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.T.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+"api/"+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		s.T.Fatal(err)
	}
	if initData != "" {
		req.Header.Set(webapp.InitDataHeader, initData)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return s.do(req)
}

func (s *appShop) do(req *http.Request) answer {
	s.T.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, header: res.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// ok fails unless the answer is a 200.
func (a answer) ok(t *testing.T) answer {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.raw)
	}
	return a
}
