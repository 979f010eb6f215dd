package webapp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/botapitest"
	"shopbot/bot/storefront"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
	"shopbot/state"
)

// withWallet turns the shop wallet on beside Stars.
func withWallet(o *storefront.Options) {
	o.Checkout.Wallet = true
}

// Paying from the wallet in the app is the chat's wallet payment: refused
// while the balance is short (nothing lost: the quote stays payable), then
// one debit by the quote's ref makes the order; paying again shows it.
// The wallet page shows the balance and the payment; a top-up is paid in
// Stars through an invoice link and credited only by the payment update.
func TestPayFromTheWalletAndTopUp(t *testing.T) {
	s := newAppShopWith(t, nil, withWallet)
	data := s.initData(buyer, time.Now())
	if a := s.call("GET", "session", data, nil).ok(t); a.at("pay", "wallet") != true {
		t.Fatalf("session: %s", a.raw)
	}
	a := s.call("POST", "quote", data, map[string]any{"line": "giftcards", "category": simcatalog.DemoGiftCategory, "item": simcatalog.DemoGiftCard, "quantity": 1}).ok(t)
	qid := a.str("quote", "id")
	total := decimal.RequireFromString(a.str("quote", "total", "usd"))
	a = s.call("POST", "pay", data, map[string]any{"quote": qid, "method": "wallet"})
	if a.status != http.StatusConflict || !strings.Contains(a.str("error", "message"), locales.Money(locales.En, total)) {
		t.Fatalf("short wallet: %d %s", a.status, a.raw)
	}
	// Top up through the app: the link's invoice, paid in Stars.
	w := s.call("GET", "wallet", data, nil).ok(t)
	if w.str("balance") != "0.00" || w.at("topup") == nil {
		t.Fatalf("wallet: %s", w.raw)
	}
	if a := s.call("POST", "wallet/topup", data, map[string]any{"usd": "0.01"}); a.status != http.StatusUnprocessableEntity || a.str("error", "field") != "usd" {
		t.Fatalf("a top-up under the minimum: %d %s", a.status, a.raw)
	}
	link := s.call("POST", "wallet/topup", data, map[string]any{"usd": "50"}).ok(t).str("link")
	if w := s.call("GET", "wallet", data, nil).ok(t); w.str("balance") != "0.00" {
		t.Fatalf("credited before paying: %s", w.raw)
	}
	if _, err := s.Fake.PayLink(context.Background(), buyer, link, botapitest.PayOptions{}); err != nil {
		t.Fatal(err)
	}
	if !s.Until(func() bool { return s.call("GET", "wallet", data, nil).str("balance") == "50.00" }) {
		t.Fatal("the top-up was never credited")
	}
	// Now the payment goes through, once.
	a = s.call("POST", "pay", data, map[string]any{"quote": qid, "method": "wallet"}).ok(t)
	ref := a.str("order", "ref")
	if a.str("order", "method") != state.PayWallet || ref == "" {
		t.Fatalf("paid: %s", a.raw)
	}
	if again := s.call("POST", "pay", data, map[string]any{"quote": qid, "method": "wallet"}).ok(t); again.str("order", "ref") != ref {
		t.Fatalf("paid twice: %s", again.raw)
	}
	want := decimal.NewFromInt(50).Sub(total).StringFixed(2)
	w = s.call("GET", "wallet", data, nil).ok(t)
	if w.str("balance") != want || len(w.at("entries").([]any)) != 2 {
		t.Fatalf("after paying %s: %s", total, w.raw)
	}
	var delivered answer
	if !s.Until(func() bool {
		delivered = s.call("GET", "orders/"+ref, data, nil)
		return delivered.str("order", "status") == state.OrderDelivered
	}) {
		t.Fatalf("never delivered: %s", delivered.raw)
	}
	code := delivered.at("order", "codes").([]any)[0].(string)
	s.WaitMessage(buyer, code)
	// Another buyer cannot pay this buyer's quote from their wallet.
	if a := s.call("POST", "pay", s.initData(buyer+1, time.Now()), map[string]any{"quote": qid, "method": "wallet"}); a.status == http.StatusOK {
		t.Fatalf("another buyer's wallet: %s", a.raw)
	}
	// My orders lists it, without codes.
	list := s.call("GET", "orders", data, nil).ok(t)
	if orders := list.at("orders").([]any); len(orders) != 1 || orders[0].(map[string]any)["ref"] != ref || strings.Contains(list.raw, code) {
		t.Fatalf("orders: %s", list.raw)
	}
}

// Without the wallet the app offers none of it.
func TestWalletOff(t *testing.T) {
	s := newAppShop(t, nil)
	data := s.initData(buyer, time.Now())
	if a := s.call("GET", "session", data, nil).ok(t); a.at("pay", "wallet") != false {
		t.Fatalf("session: %s", a.raw)
	}
	if a := s.call("GET", "wallet", data, nil); a.status != http.StatusNotFound {
		t.Fatalf("wallet: %d %s", a.status, a.raw)
	}
	if a := s.call("POST", "pay", data, map[string]any{"quote": "q", "method": "wallet"}); a.status != http.StatusServiceUnavailable {
		t.Fatalf("pay from wallet: %d %s", a.status, a.raw)
	}
}

// A promo code on the app's quote is the chat's: an unknown one refused
// with the chat's words (the quote stays), a good one makes a new quote
// at the discounted price.
func TestPromoCodeOnTheQuote(t *testing.T) {
	s := newAppShop(t, nil)
	ctx := context.Background()
	if err := s.b.Promos.Add(ctx, &state.Promo{Code: "TEN", Percent: decimal.NewFromInt(10), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	data := s.initData(buyer, time.Now())
	a := s.call("POST", "quote", data, map[string]any{"line": "giftcards", "category": simcatalog.DemoGiftCategory, "item": simcatalog.DemoGiftCard, "quantity": 2}).ok(t)
	qid := a.str("quote", "id")
	total := decimal.RequireFromString(a.str("quote", "total", "usd"))
	a = s.call("POST", "quotes/"+qid+"/promo", data, map[string]any{"code": "NOPE"})
	if a.status != http.StatusUnprocessableEntity || a.str("error", "field") != "promo" || a.str("error", "message") != plainText(locales.T(locales.En, "promo.unknown", "code", "NOPE")) {
		t.Fatalf("unknown code: %d %s", a.status, a.raw)
	}
	a = s.call("POST", "quotes/"+qid+"/promo", data, map[string]any{"code": " ten "}).ok(t)
	got := decimal.RequireFromString(a.str("quote", "total", "usd"))
	if a.str("quote", "promo") != "TEN" || !got.LessThan(total) || a.str("quote", "list", "usd") != total.StringFixed(2) || a.str("quote", "id") == qid {
		t.Fatalf("applied: %s (was %s)", a.raw, total)
	}
	if a := s.call("POST", "quotes/"+qid+"/promo", s.initData(buyer+1, time.Now()), map[string]any{"code": "TEN"}); a.status != http.StatusUnprocessableEntity {
		t.Fatalf("another buyer's quote: %d %s", a.status, a.raw)
	}
}
