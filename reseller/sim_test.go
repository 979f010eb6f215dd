package reseller_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/reseller"
	"shopbot/reseller/resellersim"
	"shopbot/reseller/resellersim/simcatalog"
)

// The client against the simulator, for every endpoint: the two were
// written independently from the spec, so agreement here checks both.

func simClient(t *testing.T) (*reseller.Client, *resellersim.Sim) {
	t.Helper()
	sim := resellersim.New(resellersim.Config{APIKey: "sim-key"})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c, err := reseller.New(srv.URL+"/api/v1", "sim-key", reseller.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return c, sim
}

func TestSimAccountAndTransactions(t *testing.T) {
	c, sim := simClient(t)
	ctx := t.Context()
	me, err := c.Me(ctx)
	if err != nil || me.Status != reseller.AccountActive || !me.BalanceUSD.Equal(sim.Balance()) {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	if _, err := c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	list, err := c.Transactions(ctx, &reseller.TransactionsOptions{Direction: reseller.TxDebit})
	if err != nil || len(list.Data) != 1 || list.Data[0].Type != reseller.TxOrder {
		t.Fatalf("debits = %+v, %v", list, err)
	}
	tx, err := c.Transaction(ctx, list.Data[0].Number)
	if err != nil || !tx.AmountUSD.Equal(list.Data[0].AmountUSD.Decimal) {
		t.Fatalf("Transaction = %+v, %v", tx, err)
	}
	for _, n := range sim.ForeignTransactionNumbers() {
		if _, err := c.Transaction(ctx, int64(n)); !reseller.IsNotFound(err) {
			t.Fatalf("another account's transaction %d: %v", n, err)
		}
	}
	var all int
	for _, err := range c.AllTransactions(ctx, &reseller.TransactionsOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		all++
	}
	if all < 2 {
		t.Fatalf("AllTransactions walked %d", all)
	}
}

func TestSimEveryLineOrdersAndTracks(t *testing.T) {
	c, sim := simClient(t)
	ctx := t.Context()
	before := sim.Balance()

	rates, err := c.StoreRates(ctx)
	if err != nil || rates.Rates[reseller.USD].IsZero() || rates.MinTopupUSD.IsZero() {
		t.Fatalf("rates = %+v, %v", rates, err)
	}
	if chk, err := c.CheckStoreLogin(ctx, "gamer42"); err != nil || !chk.CanRefill {
		t.Fatalf("check-login = %+v, %v", chk, err)
	}
	if chk, err := c.CheckStoreLogin(ctx, "invalid-login"); err != nil || chk.CanRefill {
		t.Fatalf("check-login refusal = %+v, %v", chk, err)
	}
	stars, err := c.StarsPricing(ctx)
	if err != nil || stars.PricePerStar.IsZero() {
		t.Fatalf("stars = %+v, %v", stars, err)
	}
	prem, err := c.PremiumPricing(ctx)
	if err != nil || len(prem.Plans) != 3 {
		t.Fatalf("premium = %+v, %v", prem, err)
	}
	svcs, err := c.ManualServices(ctx)
	if err != nil || len(svcs.Data) == 0 {
		t.Fatalf("services = %+v, %v", svcs, err)
	}
	mo, err := c.ManualServiceOffers(ctx, simcatalog.DemoManualService)
	if err != nil || len(mo.Fields) == 0 || len(mo.Offers) == 0 {
		t.Fatalf("manual offers = %+v, %v", mo, err)
	}
	games, err := c.StoreGames(ctx, &reseller.StoreGamesOptions{Limit: 500})
	if err != nil || len(games.Data) <= 100 {
		t.Fatalf("store games = %d, %v", len(games.Data), err)
	}
	gifts, err := c.StoreGiftOffers(ctx, simcatalog.DemoStoreApp)
	if err != nil || len(gifts.Offers) == 0 || len(gifts.Offers[0].Regions) == 0 {
		t.Fatalf("gift offers = %+v, %v", gifts, err)
	}
	cats, err := c.GiftCardCategories(ctx, &reseller.GiftCardCategoriesOptions{Q: "apple"})
	if err != nil || len(cats.Data) == 0 {
		t.Fatalf("gift categories = %+v, %v", cats, err)
	}
	for _, cat := range cats.Data {
		if cat.CategoryID == simcatalog.DemoGiftCategoryHidden {
			t.Fatal("a hidden category was listed")
		}
	}
	brands, err := c.GiftCardBrands(ctx, &reseller.GiftCardBrandsOptions{})
	if err != nil || len(brands.Data) < 3 || len(brands.Data[0].Subcategories) == 0 {
		t.Fatalf("brands = %+v, %v", brands, err)
	}
	gc, err := c.GiftCardOffers(ctx, simcatalog.DemoGiftCategory)
	if err != nil || len(gc.Offers) == 0 {
		t.Fatalf("gift card offers = %+v, %v", gc, err)
	}
	keys, err := c.GameKeys(ctx, &reseller.GameKeysOptions{Q: "elden"})
	if err != nil || len(keys.Data) == 0 {
		t.Fatalf("game keys = %+v, %v", keys, err)
	}
	ko, err := c.GameKeyOffers(ctx, simcatalog.DemoGame)
	if err != nil || len(ko.Keys) == 0 {
		t.Fatalf("key offers = %+v, %v", ko, err)
	}
	rr, err := c.GameKeyRegionRestriction(ctx, simcatalog.DemoGameRestricted)
	if err != nil || rr.GameID != simcatalog.DemoGameRestricted {
		t.Fatalf("restriction = %+v, %v", rr, err)
	}
	tcats, err := c.TopUpCategories(ctx, &reseller.TopUpCategoriesOptions{Q: "pubg"})
	if err != nil || len(tcats.Data) == 0 {
		t.Fatalf("top-up categories = %+v, %v", tcats, err)
	}
	tbrands, err := c.TopUpBrands(ctx, &reseller.TopUpBrandsOptions{})
	if err != nil || len(tbrands.Data) == 0 {
		t.Fatalf("top-up brands = %+v, %v", tbrands, err)
	}
	to, err := c.TopUpOffers(ctx, simcatalog.DemoTopUpCategory)
	if err != nil || len(to.Fields) == 0 || len(to.Offers) == 0 {
		t.Fatalf("top-up offers = %+v, %v", to, err)
	}

	fields := map[string]string{}
	for _, f := range mo.Fields {
		fields[f.Code] = "value-" + f.Code
	}
	tfields := map[string]string{}
	for _, f := range to.Fields {
		tfields[f.Key] = "12345"
	}
	creates := []struct {
		line   string
		create func() (*reseller.Order, error)
	}{
		{"store_topup", func() (*reseller.Order, error) {
			return c.CreateStoreTopupOrder(ctx, &reseller.StoreTopupOrderRequest{StoreLogin: "gamer42", Currency: reseller.USD, Amount: decimal.RequireFromString("5")})
		}},
		{"messenger_stars", func() (*reseller.Order, error) {
			return c.BuyStars(ctx, &reseller.StarsOrderRequest{MessengerUsername: "durov", Quantity: 100})
		}},
		{"messenger_premium", func() (*reseller.Order, error) {
			return c.BuyPremium(ctx, &reseller.PremiumOrderRequest{MessengerUsername: "durov", Months: 3})
		}},
		{"manual_service", func() (*reseller.Order, error) {
			return c.CreateManualServiceOrder(ctx, &reseller.ManualServiceOrderRequest{ServiceID: simcatalog.DemoManualService, ProductID: mo.Offers[0].ID, Fields: fields})
		}},
		{"store_gift", func() (*reseller.Order, error) {
			return c.CreateStoreGiftOrder(ctx, &reseller.StoreGiftOrderRequest{AppID: gifts.AppID, SubID: gifts.Offers[0].SubID, Region: gifts.Offers[0].Regions[0].Region, InviteURL: "https://s.team/p/abc-def/XYZ"})
		}},
		{"gift_card", func() (*reseller.Order, error) {
			return c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 2})
		}},
		{"game_key", func() (*reseller.Order, error) {
			return c.CreateGameKeyOrder(ctx, &reseller.GameKeyOrderRequest{GameID: simcatalog.DemoGame, KeyID: simcatalog.DemoGameKey, Quantity: 1})
		}},
		{"game_topup", func() (*reseller.Order, error) {
			return c.CreateTopUpOrder(ctx, &reseller.TopUpOrderRequest{CategoryID: simcatalog.DemoTopUpCategory, OfferID: to.Offers[0].OfferID, Fields: tfields})
		}},
	}
	charged := decimal.Zero
	for _, cr := range creates {
		o, err := cr.create()
		if err != nil {
			t.Fatalf("%s: %v", cr.line, err)
		}
		if string(o.Type) != cr.line || o.Number == 0 || o.ChargedUSD.IsZero() {
			t.Fatalf("%s: created %+v", cr.line, o)
		}
		charged = charged.Add(o.ChargedUSD.Decimal)
		got, err := c.Order(ctx, o.Number)
		if err != nil || got.Status != reseller.OrderCompleted || len(got.StatusHistory) == 0 {
			t.Fatalf("%s: tracked %+v, %v", cr.line, got, err)
		}
		switch cr.line {
		case "gift_card":
			if len(got.Codes) != 2 {
				t.Fatalf("gift card codes = %v", got.Codes)
			}
		case "game_key":
			if k := got.DeliveredKeys(); len(k) != 1 || strings.HasPrefix(k[0], "{") {
				t.Fatalf("game keys = %v", k)
			}
		case "game_topup":
			if len(got.DeliverableCodes()) != 0 {
				t.Fatal("an in-game top-up carried codes")
			}
		}
	}
	if !sim.Balance().Equal(before.Sub(charged)) {
		t.Fatalf("balance %s, want %s - %s", sim.Balance(), before, charged)
	}
	var n int
	for o, err := range c.AllOrders(ctx, &reseller.OrdersOptions{Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		if o.StatusHistory != nil {
			t.Fatal("status_history appeared in a list")
		}
		n++
	}
	if n != len(creates) {
		t.Fatalf("AllOrders walked %d, want %d", n, len(creates))
	}
	page, err := c.Orders(ctx, &reseller.OrdersOptions{Type: reseller.OrderTypeGiftCard})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("orders by type = %+v, %v", page, err)
	}
}

func TestSimChatRelay(t *testing.T) {
	c, _ := simClient(t)
	ctx := t.Context()
	mo, err := c.ManualServiceOffers(ctx, simcatalog.DemoManualService)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, f := range mo.Fields {
		fields[f.Code] = "x"
	}
	o, err := c.CreateManualServiceOrder(ctx, &reseller.ManualServiceOrderRequest{ServiceID: simcatalog.DemoManualService, ProductID: mo.Offers[0].ID, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendChatMessage(ctx, o.Number, &reseller.ChatMessageInput{Body: "hello operator"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendChatMessage(ctx, o.Number, &reseller.ChatMessageInput{Image: strings.NewReader("\x89PNG\r\n\x1a\nfake"), ImageName: "shot.png"}); err != nil {
		t.Fatal(err)
	}
	chat, err := c.Chat(ctx, o.Number)
	if err != nil || !chat.ChatOpened || len(chat.Messages) < 3 {
		t.Fatalf("chat = %+v, %v", chat, err)
	}
	var fromOperator, withText int
	for _, m := range chat.Messages {
		if op, known := m.FromOperator(); known && op {
			fromOperator++
		}
		if m.Text() != "" {
			withText++
		}
		if _, ok := m.Time(); !ok {
			t.Errorf("message without a time: %s", m.Raw)
		}
	}
	if fromOperator < 2 || withText < 2 {
		t.Fatalf("operator messages %d, texts %d in %d", fromOperator, withText, len(chat.Messages))
	}
}

func TestSimErrorsReachTheClientTyped(t *testing.T) {
	c, sim := simClient(t)
	ctx := t.Context()
	sim.SetBalance(decimal.RequireFromString("1"))
	_, err := c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
	if !reseller.IsInvalidRequest(err) {
		t.Fatalf("insufficient balance: %v", err)
	}
	creates := sim.CreateCount()
	sim.CutAfterCreate(1)
	sim.SetBalance(decimal.RequireFromString("1000"))
	_, err = c.CreateGiftCardOrder(ctx, &reseller.GiftCardOrderRequest{CategoryID: simcatalog.DemoGiftCategory, CardID: simcatalog.DemoGiftCard, Quantity: 1})
	var unknown *reseller.OutcomeUnknownError
	if !errors.As(err, &unknown) || sim.CreateCount() != creates+1 {
		t.Fatalf("cut connection: %v, creates %d", err, sim.CreateCount())
	}
	sim.RateLimitNext(1, 1)
	if _, err := c.Me(ctx); err != nil {
		t.Fatalf("a 429 on GET must be retried: %v", err)
	}
	sim.SetAccountStatus(resellersim.StatusBlocked)
	if _, err := c.Me(ctx); !reseller.IsForbidden(err) {
		t.Fatalf("blocked account: %v", err)
	}
}
