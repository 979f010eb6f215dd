package bot_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/images"
	"shopbot/bot/referral"
	"shopbot/bot/storefront"
	"shopbot/flows"
	"shopbot/flows/lines"
	flowshop "shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
)

// inlineShop is a shop with the product lines over the simulator, its
// options adjusted by mod, and the shop's lines with inline limit.
func (h *harness) inlineShop(mod func(*storefront.Options, *reseller.Client), inlineLimit int) *storefront.Shop {
	h.t.Helper()
	sim := resellersim.New(resellersim.Config{Seed: 1})
	srv := httptest.NewServer(sim)
	h.t.Cleanup(srv.Close)
	client, err := reseller.New(srv.URL+"/api/v1", "test-key")
	if err != nil {
		h.t.Fatal(err)
	}
	b := h.newBot(func(o *storefront.Options) {
		if mod != nil {
			mod(o, client)
		}
	})
	lines.Register(b.Engine, &flowshop.Shop{
		Catalog:       catalog.New(client, work.NewCache(h.rdb.Client, h.rdb.Prefix), time.Minute),
		Pricing:       flowshop.Pricing{Markup: flowshop.Markup{Percent: decimal.NewFromInt(10)}, StarsUSDRate: decimal.RequireFromString("0.013"), ShowStars: true},
		Quotes:        catalog.Quotes{Store: records.NewQuotes(h.rdb.Client, h.rdb.Prefix)},
		Limiter:       redisstore.NewLimiter(h.rdb.Client, h.rdb.Prefix, 10, time.Minute),
		InlineLimiter: redisstore.NewLimiter(h.rdb.Client, h.rdb.Prefix, inlineLimit, time.Minute),
	})
	return b
}

// inlineAnswer pushes an inline query and waits for the bot's answer.
func (h *harness) inlineAnswer(user int64, query, offset string) botapitest.InlineAnswer {
	h.t.Helper()
	id := h.fake.PushInlineQuery(user, query, offset, "supergroup")
	var a botapitest.InlineAnswer
	if !h.until(func() bool { var ok bool; a, ok = h.fake.InlineAnswer(id); return ok }) {
		h.t.Fatalf("inline query %q never answered", query)
	}
	return a
}

// openURL is the URL of a result's one button.
func openURL(t *testing.T, r map[string]any) string {
	t.Helper()
	rm, _ := r["reply_markup"].(map[string]any)
	rows, _ := rm["inline_keyboard"].([]any)
	if len(rows) != 1 {
		t.Fatalf("result %v has no button row", r["id"])
	}
	btn := rows[0].([]any)[0].(map[string]any)
	return btn["url"].(string)
}

// Typing @bot elden in a group lists the matching products across the
// lines as cards with their price and a button that opens each in the
// shop; pages follow with next_offset; nothing found offers the shop.
func TestInlineQueryListsProductsAcrossLines(t *testing.T) {
	h := newHarness(t)
	b := h.inlineShop(nil, 100)
	h.run(b)
	h.Listening()

	a := h.inlineAnswer(chat, "elden", "")
	if len(a.Results) < 4 || a.NextOffset != "" || a.CacheTime != 30 || !a.IsPersonal {
		t.Fatalf("answer = %+v", a)
	}
	var lines []string
	for _, r := range a.Results {
		lines = append(lines, r["id"].(string))
		if r["type"] != "article" || !strings.Contains(r["description"].(string), "⭐") {
			t.Errorf("result %v: %v", r["id"], r)
		}
		if want := "https://t.me/shopbot_test_bot?start=" + r["id"].(string); openURL(t, r) != want {
			t.Errorf("result %v opens %q, want %q", r["id"], openURL(t, r), want)
		}
	}
	if got := strings.Join(lines, " "); !strings.Contains(got, "key-elden-ring-global-steam") || !strings.Contains(got, "game-1245620") {
		t.Errorf("results %s: want the keys and the store gift", got)
	}
	if a.Button["text"] != locales.T(locales.En, "inline.shop") || a.Button["start_parameter"] != "shop" {
		t.Errorf("button above = %v", a.Button)
	}

	first := h.inlineAnswer(chat, "", "")
	if len(first.Results) != flowshop.InlinePage || first.NextOffset != "10" {
		t.Fatalf("empty query: %d results, next %q", len(first.Results), first.NextOffset)
	}
	second := h.inlineAnswer(chat, "", first.NextOffset)
	if len(second.Results) == 0 || second.Results[0]["id"] == first.Results[0]["id"] {
		t.Fatalf("second page = %+v", second)
	}

	none := h.inlineAnswer(chat, "zzzz no such thing", "")
	if len(none.Results) != 0 || none.Button["text"] != locales.T(locales.En, "inline.nothing") {
		t.Fatalf("nothing found = %+v", none)
	}

	// A chosen result is taken (counted) and answered with nothing.
	h.fake.PushChosenInlineResult(chat, "key-elden-ring-global-steam", "elden")
	h.idle(b)
	if got := h.fake.CallsFor("sendMessage"); len(got) != 0 {
		t.Fatalf("the inline mode wrote in the buyer's chat: %+v", got)
	}
	h.noViolations()
}

// Over the inline limit, the answer has no cards and says so; the cards
// of a sharer carry their invite when referrals are on, and the empty
// query starts with the invite card.
func TestInlineCardsCarryTheSharersInvite(t *testing.T) {
	h := newHarness(t)
	b := h.inlineShop(func(o *storefront.Options, c *reseller.Client) {
		o.Checkout = &checkout.Options{Wallet: true, Upstream: c}
		o.Referral = referral.Options{Percent: decimal.NewFromInt(10)}
	}, 2)
	h.run(b)
	h.Listening()

	code, err := records.NewReferrals(h.rdb.Client, h.rdb.Prefix).Code(context.Background(), chat)
	if err != nil {
		t.Fatal(err)
	}
	a := h.inlineAnswer(chat, "", "")
	if a.Results[0]["id"] != "invite" || openURL(t, a.Results[0]) != "https://t.me/shopbot_test_bot?start=r"+code {
		t.Fatalf("first result = %v", a.Results[0])
	}
	if got, want := openURL(t, a.Results[1]), "https://t.me/shopbot_test_bot?start=r"+code+"_"+a.Results[1]["id"].(string); got != want {
		t.Fatalf("card opens %q, want %q", got, want)
	}
	if a.Button["start_parameter"] != "r"+code {
		t.Fatalf("button above = %v", a.Button)
	}

	// The link a friend opens attributes them and opens the product.
	friend := chat + 1
	h.fake.SendCommand(friend, "start", "r"+code+"_gc-apple-us")
	m := h.WaitText(friend, "Apple")
	if !strings.Contains(m.Text, "Apple Gift Card (US)") {
		t.Fatalf("the deep link opened %q", m.Text)
	}
	if ref, ok, err := records.NewReferrals(h.rdb.Client, h.rdb.Prefix).Referrer(context.Background(), friend); err != nil || !ok || ref != chat {
		t.Fatalf("friend's referrer = %d, %v, %v", ref, ok, err)
	}

	_ = h.inlineAnswer(chat, "apple", "")
	limited := h.inlineAnswer(chat, "apple", "")
	if len(limited.Results) != 0 || limited.Button["text"] != locales.T(locales.En, "inline.limited") || limited.CacheTime != 0 {
		t.Fatalf("over the limit = %+v", limited)
	}
	h.noViolations()
}

// A product whose image the shop uploaded before is a photo card (its
// file_id); the Mini App's share of a card is a prepared inline message.
func TestInlinePhotoCardAndPreparedShare(t *testing.T) {
	h := newHarness(t)
	b := h.inlineShop(func(o *storefront.Options, _ *reseller.Client) {
		o.Images = &images.Options{Fetch: func(context.Context, string, int) (*reseller.ChatImage, error) {
			return nil, errors.New("no image in this test")
		}}
	}, 100)
	h.run(b)
	h.Listening()

	a := h.inlineAnswer(chat, "pubg", "")
	url, _ := a.Results[0]["thumbnail_url"].(string)
	if a.Results[0]["type"] != "article" || !strings.HasSuffix(url, "/images/topup/pubg.png") {
		t.Fatalf("first card = %v", a.Results[0])
	}
	if err := work.NewImages(h.rdb.Client, h.rdb.Prefix).Remember(context.Background(), url, "AgACpubg"); err != nil {
		t.Fatal(err)
	}
	a = h.inlineAnswer(chat, "pubg", "")
	r := a.Results[0]
	if r["type"] != "photo" || r["photo_file_id"] != "AgACpubg" || !strings.Contains(r["caption"].(string), "<b>PUBG Mobile UC (Global)</b>") {
		t.Fatalf("photo card = %v", r)
	}

	card := flows.Card{ID: "tu-pubg-mobile-global", Link: "tu-pubg-mobile-global", Title: "PUBG", Description: "from 84 ⭐", Text: "<b>PUBG</b>", Image: url}
	p, err := b.PrepareShare(context.Background(), flows.User{ID: chat, LanguageCode: "en"}, card)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := h.fake.PreparedMessage(p.ID)
	if !ok || got.UserID != chat || got.Result["photo_file_id"] != "AgACpubg" || !got.Allow["allow_group_chats"] || p.Expires.IsZero() {
		t.Fatalf("prepared = %+v, %v", got, ok)
	}
	h.noViolations()
}
