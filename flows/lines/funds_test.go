package lines_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/locales"
	"shopbot/reseller/resellersim/simcatalog"
)

// payCounter is a checkout that counts what reached payment.
type payCounter struct{ n int }

func (p *payCounter) pay(*flows.Env, *flows.Quote) *flows.Reply {
	p.n++
	return &flows.Reply{Answer: "paying", NoScreen: true}
}

func fundedWorld(t *testing.T, balance string) (*world, *fixedFunds, *payCounter) {
	w := newWorld(t)
	funds := &fixedFunds{Balance: decimal.RequireFromString(balance)}
	pay := &payCounter{}
	w.shop.Funds, w.checkout = funds, pay.pay
	return w, funds, pay
}

func (w *world) hasButton(prefix string) bool {
	for _, row := range w.last.Screen.Rows {
		for _, b := range row {
			if strings.HasPrefix(b.Text, prefix) {
				return true
			}
		}
	}
	return false
}

func TestLowUpstreamBalancePausesGiftCardsItCannotCover(t *testing.T) {
	// Apple 10 USD costs 10.35 upstream, Apple 25 USD 25.80; the balance is 20.
	w, _, pay := fundedWorld(t, "20.00")
	w.do("/start gc-apple-us")
	if !strings.Contains(w.last.Screen.Text, "<s>Apple 25 USD</s> — temporarily unavailable") || w.hasButton("Apple 25 USD") {
		t.Fatalf("Apple 25 USD is not paused:\n%s", w.last.Screen.Text)
	}
	if !w.hasButton("Apple 10 USD") {
		t.Fatalf("Apple 10 USD is paused though 20 covers 10.35")
	}
	// A press on the paused card's old index (the balance dropped since) is refused.
	w.s.Set("ids", "apple-us-25")
	w.do("tap:Apple 10")
	if w.s.Step != lines.GcCards || !strings.Contains(w.out.String(), "temporarily unavailable. Please try again") {
		t.Fatalf("a paused card was chosen: step %q\n%s", w.s.Step, w.out.String())
	}
	w.do("/start gc-apple-us")
	w.do("tap:Apple 10 USD")
	// 20 covers one card: the quick quantities stop at 1.
	if !w.hasButton("1") || w.hasButton("2") || w.hasButton("5") {
		t.Fatalf("quick quantities beyond the balance: %+v", w.last.Screen.Rows)
	}
	// Typing more than the balance covers is refused before any quote.
	w.do("2")
	if w.s.Step != lines.GcQty || w.s.Get("quote") != "" || !strings.Contains(w.out.String(), "Nothing was charged") {
		t.Fatalf("2 cards were quoted on a balance of 20: step %q quote %q", w.s.Step, w.s.Get("quote"))
	}
	w.do("1")
	w.do("tap:💳")
	if pay.n != 1 {
		t.Fatalf("a covered card did not reach payment: %d", pay.n)
	}
}

func TestBalanceDroppingAfterTheQuoteStopsPay(t *testing.T) {
	w, funds, pay := fundedWorld(t, "100")
	w.do("/start gc-apple-us")
	w.do("tap:Apple 10 USD")
	w.do("3")
	if w.s.Step != shop.StepConfirm {
		t.Fatalf("not at confirmation: %s", w.s.Step)
	}
	funds.Balance = decimal.RequireFromString("30") // 3 * 10.35 = 31.05
	w.do("tap:💳")
	if pay.n != 0 || w.s.Step != lines.GcQty || !strings.Contains(w.out.String(), "temporarily unavailable in this amount") {
		t.Fatalf("paid on a balance that no longer covers the quote: pay %d step %q", pay.n, w.s.Step)
	}
}

func TestLowUpstreamBalancePausesPremiumPlansAndStars(t *testing.T) {
	// Premium plans cost 11.99, 15.99 and 28.99 upstream; a Star 0.015.
	w, _, pay := fundedWorld(t, "20")
	w.do("/premium")
	w.do("durov")
	if !w.hasButton("⏸") || w.hasButton("12 months") {
		t.Fatalf("the 12-month plan is not paused: %+v", w.last.Screen.Rows)
	}
	w.do("tap:⏸")
	if !strings.Contains(w.out.String(), "answer (alert=true): Sorry, this item is temporarily unavailable") || w.s.Step != lines.MsPlan {
		t.Fatalf("a paused plan was not refused:\n%s", w.out.String())
	}
	w.do("tap:6 months")
	w.do("tap:💳")
	if pay.n != 1 {
		t.Fatalf("a covered plan did not reach payment")
	}

	w, _, _ = fundedWorld(t, "20")
	w.do("/stars")
	w.do("durov")
	w.do("2000") // 2000 * 0.015 = 30 > 20
	if w.s.Get("quote") != "" || !strings.Contains(w.out.String(), "temporarily unavailable in this amount") {
		t.Fatalf("stars beyond the balance were quoted:\n%s", w.out.String())
	}
	w.do("1000") // 15
	if w.s.Step != shop.StepConfirm {
		t.Fatalf("1000 stars on a balance of 20 not quoted: %s", w.s.Step)
	}
}

func TestUnknownBalancePausesNothing(t *testing.T) {
	w, funds, _ := fundedWorld(t, "0")
	funds.Err = errors.New("upstream down")
	w.do("/start gc-apple-us")
	if !w.hasButton("Apple 25 USD") || strings.Contains(w.last.Screen.Text, "temporarily unavailable") {
		t.Fatalf("an unknown balance paused items:\n%s", w.last.Screen.Text)
	}
}

// absurdCatalog serves gift cards with a negative, a zero and an absurd price.
type absurdCatalog struct{ *fakeCatalog }

func (c absurdCatalog) GiftCardOffers(_ context.Context, id string) (*flows.Offers, bool, error) {
	return &flows.Offers{CategoryID: id, Name: "Odd", Offers: []flows.Offer{
		{ID: "neg", Name: "Negative", PriceUSD: dec("-5"), Stock: 9, MinQuantity: 1, MaxQuantity: 5},
		{ID: "zero", Name: "Zero", PriceUSD: dec("0"), Stock: 9, MinQuantity: 1, MaxQuantity: 5},
		{ID: "huge", Name: "Huge", PriceUSD: dec("999999999999"), Stock: 9, MinQuantity: 1, MaxQuantity: 5},
		{ID: "ok", Name: "Fine", PriceUSD: dec("5"), Stock: 9, MinQuantity: 1, MaxQuantity: 5},
	}}, false, nil
}

func TestNonPositiveOrAbsurdPricesAreUnavailable(t *testing.T) {
	w := newWorld(t)
	w.shop.Catalog = absurdCatalog{w.cat}
	w.do("/start gc-odd")
	sc := w.last.Screen
	var labels []string
	for _, row := range sc.Rows {
		for _, b := range row {
			labels = append(labels, b.Text)
		}
	}
	if len(labels) != 3 || !strings.HasPrefix(labels[0], "Fine") { // Fine, Back, Cancel
		t.Fatalf("buttons %q", labels)
	}
	for _, bad := range []string{"−", "-5", "Negative —", "Huge —", "Zero —"} {
		if strings.Contains(sc.Text, bad) {
			t.Fatalf("screen shows %q:\n%s", bad, sc.Text)
		}
	}
}

// regionlessCatalog has a gift-card brand with a category that has no
// region beside one that has.
type regionlessCatalog struct{ *fakeCatalog }

func (c regionlessCatalog) GiftCardBrands(context.Context) ([]flows.Brand, bool, error) {
	return []flows.Brand{{Name: "Tessera", Categories: []flows.Category{{ID: "tessera"}, {ID: "tessera-us", Region: "US"}}}}, false, nil
}

func TestRegionlessCategoryIsAnyRegionNotItsID(t *testing.T) {
	w := newWorld(t)
	w.shop.Catalog = regionlessCatalog{w.cat}
	w.do("/giftcards")
	w.do("tap:Tessera")
	b := w.button(locales.T(locales.En, "gc.any_region"))
	if strings.Contains(b.Text, "tessera") {
		t.Fatalf("region button %q", b.Text)
	}
}

// A step with one choice is skipped: a gift-card brand or an in-game
// top-up game with one category opens it at once, an edition of a gift
// with one region asks for the invite link; Back returns to the list
// before the skipped step.
func TestStepWithOneChoiceIsSkipped(t *testing.T) {
	t.Run("gift-card brand", func(t *testing.T) {
		w := newWorld(t)
		w.shop.Catalog = oneRegionCatalog{w.cat}
		w.do("/giftcards")
		w.do("tap:Apple")
		if w.s.Step != "cards" || !strings.Contains(w.last.Screen.Text, "Apple &lt;US&gt;") {
			t.Fatalf("step %q: %s", w.s.Step, w.last.Screen.Text)
		}
		w.do("tap:" + locales.T(locales.En, "btn.back"))
		if w.s.Step != "brands" {
			t.Fatalf("Back went to %q", w.s.Step)
		}
	})
	t.Run("in-game top-up", func(t *testing.T) {
		w := newWorld(t)
		w.do("/games")
		w.do("tap:Genshin Impact")
		if w.s.Step != "offers" || !strings.Contains(w.last.Screen.Text, "Genshin Impact Genesis Crystals") {
			t.Fatalf("step %q: %s", w.s.Step, w.last.Screen.Text)
		}
		w.do("tap:" + locales.T(locales.En, "btn.back"))
		if w.s.Step != "brands" {
			t.Fatalf("Back went to %q", w.s.Step)
		}
	})
	t.Run("gift edition", func(t *testing.T) {
		w := newWorld(t)
		w.shop.Catalog = oneRegionCatalog{w.cat}
		w.do("/gifts")
		w.do("tap:ELDEN RING")
		w.do("tap:")
		if w.s.Step != "invite" {
			t.Fatalf("step %q: %s", w.s.Step, w.last.Screen.Text)
		}
		w.do("tap:" + locales.T(locales.En, "btn.back"))
		if w.s.Step != "editions" {
			t.Fatalf("Back went to %q", w.s.Step)
		}
	})
}

func (c oneRegionCatalog) StoreGiftEditions(ctx context.Context, app int64) ([]flows.Edition, bool, error) {
	eds, stale, err := c.fakeCatalog.StoreGiftEditions(ctx, app)
	for i := range eds {
		eds[i].Regions = eds[i].Regions[:min(1, len(eds[i].Regions))]
	}
	return eds, stale, err
}

// oneRegionCatalog sells Apple cards of the US region only.
type oneRegionCatalog struct{ *fakeCatalog }

func (c oneRegionCatalog) GiftCardBrands(ctx context.Context) ([]flows.Brand, bool, error) {
	brands, stale, err := c.fakeCatalog.GiftCardBrands(ctx)
	for i, b := range brands {
		if b.Name == "Apple" {
			brands[i].Categories = b.Categories[:1]
		}
	}
	return brands, stale, err
}

// A letters-only Player ID (PUBG declares the field as text) is refused
// with the reason and never reaches the summary; the digits do, and the
// summary shows them with a request to check them.
func TestLettersOnlyPlayerIDIsRefused(t *testing.T) {
	w := newWorld(t)
	w.do("/start tu-" + simcatalog.DemoTopUpCategory)
	w.do("tap:")
	w.do("PIayerOne")
	if w.s.Step != "fields" || !strings.Contains(w.out.String(), "must contain digits only") {
		t.Fatalf("step %q after letters:\n%s", w.s.Step, w.out.String())
	}
	w.do("5123456789")
	sc := w.last.Screen.Text
	if w.s.Step != shop.StepConfirm || !strings.Contains(sc, "Player ID: 5123456789") || !strings.Contains(sc, locales.T(locales.En, "confirm.check_details")) {
		t.Fatalf("step %q, summary:\n%s", w.s.Step, sc)
	}
}
