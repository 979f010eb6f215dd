package bot

import (
	"context"
	"errors"
	"strconv"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/bot/checkout"
)

// Telegram Stars calls, behind the features' small interfaces
// (checkout.Telegram, fulfil.Messenger, admin.Telegram): invoices,
// pre-checkout answers, refunds, the transaction list and the balance.

// RefundStars gives a Star payment back: the one refund call of the shop
// (checkout refunds a charge that bought nothing, fulfilment an order that
// failed). A charge refunded before (CHARGE_ALREADY_REFUNDED) counts as
// done.
func (b *Bot) RefundStars(ctx context.Context, userID int64, chargeID string) error {
	err := b.API.Do(ctx, "refundStarPayment", 0, func(ctx context.Context) error {
		_, err := b.API.TG.RefundStarPayment(ctx, &tgbot.RefundStarPaymentParams{UserID: userID, TelegramPaymentChargeID: chargeID})
		return err
	})
	if errors.Is(err, ErrChargeAlreadyRefunded) {
		return nil
	}
	return err
}

// SendInvoice sends a Stars invoice and returns its message id.
func (b *Bot) SendInvoice(ctx context.Context, inv checkout.Invoice) (int, error) {
	var msgID int
	err := b.API.Do(ctx, "sendInvoice", inv.ChatID, func(ctx context.Context) error {
		m, err := b.API.TG.SendInvoice(ctx, &tgbot.SendInvoiceParams{
			ChatID: inv.ChatID, Title: inv.Title, Description: inv.Description, Payload: inv.Payload,
			Currency: "XTR", Prices: []models.LabeledPrice{{Label: inv.Label, Amount: int(inv.Stars)}},
		})
		if err == nil {
			msgID = m.ID
		}
		return err
	})
	return msgID, err
}

// CreateInvoiceLink makes a Stars invoice link (what a Mini App opens with
// Telegram.WebApp.openInvoice) and returns it. inv.ChatID is not sent: a
// link belongs to no chat; paying it sends the successful payment to the
// payer's chat with the bot, as an invoice in the chat does.
func (b *Bot) CreateInvoiceLink(ctx context.Context, inv checkout.Invoice) (string, error) {
	var link string
	err := b.API.Do(ctx, "createInvoiceLink", 0, func(ctx context.Context) error {
		l, err := b.API.TG.CreateInvoiceLink(ctx, &tgbot.CreateInvoiceLinkParams{
			Title: inv.Title, Description: inv.Description, Payload: inv.Payload,
			Currency: "XTR", Prices: []models.LabeledPrice{{Label: inv.Label, Amount: int(inv.Stars)}},
		})
		link = l
		return err
	})
	return link, err
}

// AnswerPreCheckout answers a pre-checkout query: ok when refusal is "",
// else refused with that text.
func (b *Bot) AnswerPreCheckout(ctx context.Context, queryID, refusal string) error {
	return b.API.Do(ctx, "answerPreCheckoutQuery", 0, func(ctx context.Context) error {
		_, err := b.API.TG.AnswerPreCheckoutQuery(ctx, &tgbot.AnswerPreCheckoutQueryParams{
			PreCheckoutQueryID: queryID, OK: refusal == "", ErrorMessage: refusal,
		})
		return err
	})
}

// StarTransactions reads a page of the bot's Star transactions.
func (b *Bot) StarTransactions(ctx context.Context, offset, limit int) ([]checkout.StarTransaction, error) {
	var page *models.StarTransactions
	err := b.API.Do(ctx, "getStarTransactions", 0, func(ctx context.Context) error {
		var err error
		page, err = b.API.TG.GetStarTransactions(ctx, &tgbot.GetStarTransactionsParams{Offset: offset, Limit: limit})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]checkout.StarTransaction, 0, len(page.Transactions))
	for _, tx := range page.Transactions {
		t := checkout.StarTransaction{ID: tx.ID, Date: int64(tx.Date), Amount: int64(tx.Amount), Nanos: int64(tx.NanostarAmount)}
		t.Refund = tx.Receiver != nil && tx.Receiver.User != nil
		if t.Refund {
			t.Affiliate = affiliateOf(tx.Receiver.User.Affiliate)
		}
		if src := tx.Source; src != nil && src.User != nil {
			t.Buyer = &checkout.StarBuyer{UserID: src.User.User.ID, LanguageCode: src.User.User.LanguageCode, Payload: src.User.InvoicePayload}
			t.Affiliate = affiliateOf(src.User.Affiliate)
		}
		if src := tx.Source; src != nil && src.AffiliateProgram != nil {
			t.Program = &checkout.StarCommission{PerMille: src.AffiliateProgram.CommissionPerMille, Who: userName(src.AffiliateProgram.SponsorUser)}
		}
		out = append(out, t)
	}
	return out, nil
}

// StarBalance reads the bot's Star balance: whole Stars and nanostars.
func (b *Bot) StarBalance(ctx context.Context) (amount, nano int64, err error) {
	err = b.API.Do(ctx, "getMyStarBalance", 0, func(ctx context.Context) error {
		sa, err := b.API.TG.GetMyStarBalance(ctx)
		if err == nil {
			amount, nano = int64(sa.Amount), int64(sa.NanostarAmount)
		}
		return err
	})
	return amount, nano, err
}

// affiliateOf is the commission an affiliate took from a payment (or gave
// back on its refund), or nil.
func affiliateOf(a *models.AffiliateInfo) *checkout.StarCommission {
	if a == nil {
		return nil
	}
	c := &checkout.StarCommission{PerMille: a.CommissionPerMille, Amount: int64(a.Amount), Nanos: int64(a.NanostarAmount), Who: userName(a.AffiliateUser)}
	if a.AffiliateChat != nil {
		c.Who = a.AffiliateChat.Title
		if a.AffiliateChat.Username != "" {
			c.Who = "@" + a.AffiliateChat.Username
		}
		if c.Who == "" {
			c.Who = strconv.FormatInt(a.AffiliateChat.ID, 10)
		}
	}
	return c
}

// userName is a user's @username, else their id ("" for none).
func userName(u *models.User) string {
	switch {
	case u == nil:
		return ""
	case u.Username != "":
		return "@" + u.Username
	default:
		return strconv.FormatInt(u.ID, 10)
	}
}
