package reseller

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestValidation(t *testing.T) {
	env := setup(t) // no handlers: any request fails the test via the request count
	c := env.client
	ctx := t.Context()
	dec := decimal.RequireFromString
	call := func(f func(context.Context) error) func() error { return func() error { return f(ctx) } }
	ignore := func(_ any, err error) error { return err }

	tests := []struct {
		name  string
		field string
		do    func() error
	}{
		{"transactions limit high", "limit", call(func(ctx context.Context) error {
			return ignore(c.Transactions(ctx, &TransactionsOptions{Limit: 101}))
		})},
		{"transactions limit negative", "limit", func() error { return ignore(c.Transactions(ctx, &TransactionsOptions{Limit: -1})) }},
		{"transactions cursor", "cursor", func() error { return ignore(c.Transactions(ctx, &TransactionsOptions{Cursor: -1})) }},
		{"transactions direction", "direction", func() error { return ignore(c.Transactions(ctx, &TransactionsOptions{Direction: "UP"})) }},
		{"transactions type", "type", func() error { return ignore(c.Transactions(ctx, &TransactionsOptions{Type: "order"})) }},
		{"transactions status", "status", func() error { return ignore(c.Transactions(ctx, &TransactionsOptions{Status: "DONE"})) }},
		{"transaction number", "number", func() error { return ignore(c.Transaction(ctx, 0)) }},
		{"orders limit", "limit", func() error { return ignore(c.Orders(ctx, &OrdersOptions{Limit: 101})) }},
		{"orders cursor", "cursor", func() error { return ignore(c.Orders(ctx, &OrdersOptions{Cursor: -5})) }},
		{"orders status", "status", func() error { return ignore(c.Orders(ctx, &OrdersOptions{Status: "shipped"})) }},
		{"orders type", "type", func() error { return ignore(c.Orders(ctx, &OrdersOptions{Type: "gift"})) }},
		{"all orders options", "limit", func() error {
			for _, err := range c.AllOrders(ctx, &OrdersOptions{Limit: 1000}) {
				return err
			}
			return nil
		}},
		{"all transactions options", "cursor", func() error {
			for _, err := range c.AllTransactions(ctx, &TransactionsOptions{Cursor: -1}) {
				return err
			}
			return nil
		}},
		{"order number", "number", func() error { return ignore(c.Order(ctx, -1)) }},
		{"check login empty", "store_login", func() error { return ignore(c.CheckStoreLogin(ctx, " ")) }},
		{"topup nil", "request", func() error { return ignore(c.CreateStoreTopupOrder(ctx, nil)) }},
		{"topup login", "store_login", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{Amount: dec("10")}))
		}},
		{"topup currency", "currency", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "a", Currency: "EUR", Amount: dec("10")}))
		}},
		{"topup currency case", "currency", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "a", Currency: "usd", Amount: dec("10")}))
		}},
		{"topup zero", "amount", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "a"}))
		}},
		{"topup negative", "amount", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "a", Currency: RUB, Amount: dec("-100")}))
		}},
		{"topup USD 3 decimals", "amount", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "a", Amount: dec("1.234")}))
		}},
		{"topup USD below minimum", "amount", func() error {
			return ignore(c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "a", Currency: USD, Amount: dec("0.14")}))
		}},
		{"stars username", "messenger_username", func() error {
			return ignore(c.BuyStars(ctx, &StarsOrderRequest{Quantity: 100}))
		}},
		{"stars below", "quantity", func() error {
			return ignore(c.BuyStars(ctx, &StarsOrderRequest{MessengerUsername: "a", Quantity: 49}))
		}},
		{"stars above", "quantity", func() error {
			return ignore(c.BuyStars(ctx, &StarsOrderRequest{MessengerUsername: "a", Quantity: 10001}))
		}},
		{"stars nil", "request", func() error { return ignore(c.BuyStars(ctx, nil)) }},
		{"premium username", "messenger_username", func() error {
			return ignore(c.BuyPremium(ctx, &PremiumOrderRequest{Months: 3}))
		}},
		{"premium months 1", "months", func() error {
			return ignore(c.BuyPremium(ctx, &PremiumOrderRequest{MessengerUsername: "a", Months: 1}))
		}},
		{"premium months 24", "months", func() error {
			return ignore(c.BuyPremium(ctx, &PremiumOrderRequest{MessengerUsername: "a", Months: 24}))
		}},
		{"manual offers id", "service_id", func() error { return ignore(c.ManualServiceOffers(ctx, "")) }},
		{"manual offers dot-dot", "service_id", func() error { return ignore(c.ManualServiceOffers(ctx, "..")) }},
		{"manual order service", "service_id", func() error {
			return ignore(c.CreateManualServiceOrder(ctx, &ManualServiceOrderRequest{ProductID: "p"}))
		}},
		{"manual order product", "product_id", func() error {
			return ignore(c.CreateManualServiceOrder(ctx, &ManualServiceOrderRequest{ServiceID: "s"}))
		}},
		{"manual order empty key", "fields", func() error {
			return ignore(c.CreateManualServiceOrder(ctx, &ManualServiceOrderRequest{ServiceID: "s", ProductID: "p", Fields: map[string]string{"": "x"}}))
		}},
		{"manual order empty value", "fields.account", func() error {
			return ignore(c.CreateManualServiceOrder(ctx, &ManualServiceOrderRequest{ServiceID: "s", ProductID: "p", Fields: map[string]string{"account": " "}}))
		}},
		{"store games limit", "limit", func() error { return ignore(c.StoreGames(ctx, &StoreGamesOptions{Limit: 501})) }},
		{"store gift offers app", "app_id", func() error { return ignore(c.StoreGiftOffers(ctx, 0)) }},
		{"store gift app", "app_id", func() error {
			return ignore(c.CreateStoreGiftOrder(ctx, &StoreGiftOrderRequest{SubID: 1, Region: "KZ", InviteURL: "u"}))
		}},
		{"store gift sub", "sub_id", func() error {
			return ignore(c.CreateStoreGiftOrder(ctx, &StoreGiftOrderRequest{AppID: 1, Region: "KZ", InviteURL: "u"}))
		}},
		{"store gift region", "region", func() error {
			return ignore(c.CreateStoreGiftOrder(ctx, &StoreGiftOrderRequest{AppID: 1, SubID: 1, InviteURL: "u"}))
		}},
		{"store gift invite", "invite_url", func() error {
			return ignore(c.CreateStoreGiftOrder(ctx, &StoreGiftOrderRequest{AppID: 1, SubID: 1, Region: "KZ"}))
		}},
		{"gift categories limit", "limit", func() error {
			return ignore(c.GiftCardCategories(ctx, &GiftCardCategoriesOptions{Limit: 601}))
		}},
		{"gift offers id", "category_id", func() error { return ignore(c.GiftCardOffers(ctx, "")) }},
		{"gift order category", "category_id", func() error {
			return ignore(c.CreateGiftCardOrder(ctx, &GiftCardOrderRequest{CardID: "c", Quantity: 1}))
		}},
		{"gift order card", "card_id", func() error {
			return ignore(c.CreateGiftCardOrder(ctx, &GiftCardOrderRequest{CategoryID: "c", Quantity: 1}))
		}},
		{"gift order quantity 0", "quantity", func() error {
			return ignore(c.CreateGiftCardOrder(ctx, &GiftCardOrderRequest{CategoryID: "c", CardID: "c"}))
		}},
		{"gift order quantity 101", "quantity", func() error {
			return ignore(c.CreateGiftCardOrder(ctx, &GiftCardOrderRequest{CategoryID: "c", CardID: "c", Quantity: 101}))
		}},
		{"game keys limit", "limit", func() error { return ignore(c.GameKeys(ctx, &GameKeysOptions{Limit: 501})) }},
		{"game key offers id", "game_id", func() error { return ignore(c.GameKeyOffers(ctx, "")) }},
		{"region restriction dot", "game_id", func() error { return ignore(c.GameKeyRegionRestriction(ctx, ".")) }},
		{"game key order game", "game_id", func() error {
			return ignore(c.CreateGameKeyOrder(ctx, &GameKeyOrderRequest{KeyID: "k", Quantity: 1}))
		}},
		{"game key order key", "key_id", func() error {
			return ignore(c.CreateGameKeyOrder(ctx, &GameKeyOrderRequest{GameID: "g", Quantity: 1}))
		}},
		{"game key order quantity", "quantity", func() error {
			return ignore(c.CreateGameKeyOrder(ctx, &GameKeyOrderRequest{GameID: "g", KeyID: "k", Quantity: 101}))
		}},
		{"topup categories limit", "limit", func() error {
			return ignore(c.TopUpCategories(ctx, &TopUpCategoriesOptions{Limit: 601}))
		}},
		{"topup offers id", "category_id", func() error { return ignore(c.TopUpOffers(ctx, " ")) }},
		{"topup order category", "category_id", func() error {
			return ignore(c.CreateTopUpOrder(ctx, &TopUpOrderRequest{OfferID: "o"}))
		}},
		{"topup order offer", "offer_id", func() error {
			return ignore(c.CreateTopUpOrder(ctx, &TopUpOrderRequest{CategoryID: "c"}))
		}},
		{"topup order field value", "fields.player_id", func() error {
			return ignore(c.CreateTopUpOrder(ctx, &TopUpOrderRequest{CategoryID: "c", OfferID: "o", Fields: map[string]string{"player_id": ""}}))
		}},
		{"chat number", "number", func() error { return ignore(c.Chat(ctx, 0)) }},
		{"send chat number", "number", func() error { return ignore(c.SendChatMessage(ctx, 0, &ChatMessageInput{Body: "x"})) }},
		{"send chat nil", "body", func() error { return ignore(c.SendChatMessage(ctx, 1, nil)) }},
		{"send chat blank", "body", func() error { return ignore(c.SendChatMessage(ctx, 1, &ChatMessageInput{Body: "  "})) }},
		{"send chat empty image", "image", func() error {
			return ignore(c.SendChatMessage(ctx, 1, &ChatMessageInput{Image: strings.NewReader("")}))
		}},
		{"send chat huge image", "image", func() error {
			return ignore(c.SendChatMessage(ctx, 1, &ChatMessageInput{Image: io.LimitReader(zeros{}, MaxChatImageSize+1)}))
		}},
		{"send chat bad content type", "image_content_type", func() error {
			return ignore(c.SendChatMessage(ctx, 1, &ChatMessageInput{Image: strings.NewReader("x"), ImageContentType: "image/png\r\nX-Evil: 1"}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %T %v, want *ValidationError", err, err)
			}
			if ve.Field != tt.field {
				t.Errorf("Field = %q, want %q (%v)", ve.Field, tt.field, err)
			}
			if ve.Reason == "" || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Error() = %q", err.Error())
			}
			if IsInvalidRequest(err) {
				t.Error("a local validation error is not an upstream invalid_request")
			}
		})
	}
	if n := env.requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	if n := len(env.observations()); n != 0 {
		t.Errorf("%d attempts observed", n)
	}
}

// zeros reads zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestValidation_boundariesAccepted(t *testing.T) {
	dec := decimal.RequireFromString
	for _, v := range []interface{ Validate() error }{
		&StarsOrderRequest{MessengerUsername: "a", Quantity: 50},
		&StarsOrderRequest{MessengerUsername: "a", Quantity: 10000},
		&PremiumOrderRequest{MessengerUsername: "a", Months: 3},
		&PremiumOrderRequest{MessengerUsername: "a", Months: 6},
		&PremiumOrderRequest{MessengerUsername: "a", Months: 12},
		&GiftCardOrderRequest{CategoryID: "c", CardID: "c", Quantity: 1},
		&GiftCardOrderRequest{CategoryID: "c", CardID: "c", Quantity: 100},
		&GameKeyOrderRequest{GameID: "g", KeyID: "k", Quantity: 100},
		&StoreTopupOrderRequest{StoreLogin: "a", Amount: dec("0.15")},
		&StoreTopupOrderRequest{StoreLogin: "a", Amount: dec("12.50")},
		&StoreTopupOrderRequest{StoreLogin: "a", Amount: dec("12.5000")}, // trailing zeros are not decimals
		&StoreTopupOrderRequest{StoreLogin: "a", Currency: RUB, Amount: dec("0.001")},
		&StoreTopupOrderRequest{StoreLogin: "a", Currency: KZT, Amount: dec("100.123")},
		&TransactionsOptions{Limit: 100, Cursor: 1},
		&OrdersOptions{Limit: 1, Status: "refund", Type: "GAME_TOPUP"},
		&StoreGamesOptions{Limit: 500},
		&GiftCardCategoriesOptions{Limit: 600},
		&GameKeysOptions{Limit: 500},
		&TopUpCategoriesOptions{Limit: 600},
		&TopUpOrderRequest{CategoryID: "c", OfferID: "o"},
		(*OrdersOptions)(nil),
	} {
		if err := v.Validate(); err != nil {
			t.Errorf("%+v: %v", v, err)
		}
	}
}
