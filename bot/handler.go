package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"shopbot/bot/checkout"
	"shopbot/bot/support"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

func decodeUpdate(body []byte, u *models.Update) error {
	var w wireUpdate
	if err := json.Unmarshal(body, &w); err != nil {
		return err
	}
	*u = models.Update{
		ID: w.ID, Message: w.Message, EditedMessage: w.EditedMessage,
		PreCheckoutQuery: w.PreCheckoutQuery, MyChatMember: w.MyChatMember,
		InlineQuery: w.InlineQuery, ChosenInlineResult: w.ChosenInlineResult,
	}
	if c := w.CallbackQuery; c != nil {
		cq := &models.CallbackQuery{
			ID: c.ID, From: c.From, InlineMessageID: c.InlineMessageID,
			ChatInstance: c.ChatInstance, Data: c.Data, GameShortName: c.GameShortName,
		}
		switch m := c.Message; {
		case m == nil:
		case m.Date == 0: // Telegram's mark of a message the bot can no longer read
			cq.Message = models.MaybeInaccessibleMessage{
				Type:                models.MaybeInaccessibleMessageTypeInaccessibleMessage,
				InaccessibleMessage: &models.InaccessibleMessage{Chat: m.Chat, MessageID: m.ID},
			}
		default:
			cq.Message = models.MaybeInaccessibleMessage{
				Type:    models.MaybeInaccessibleMessageTypeMessage,
				Message: &models.Message{ID: m.ID, Date: m.Date, Chat: m.Chat},
			}
		}
		u.CallbackQuery = cq
	}
	return nil
}

// wireUpdate is an update as the shop reads it. A callback query's message
// is read only as far as its id, date and chat: it carries the whole menu
// the button was on, which the shop never reads and which go-telegram/bot
// decodes twice (a tenth of an update's CPU).
type wireUpdate struct {
	ID                 int64                      `json:"update_id"`
	Message            *models.Message            `json:"message"`
	EditedMessage      *models.Message            `json:"edited_message"`
	CallbackQuery      *wireCallback              `json:"callback_query"`
	PreCheckoutQuery   *models.PreCheckoutQuery   `json:"pre_checkout_query"`
	MyChatMember       *models.ChatMemberUpdated  `json:"my_chat_member"`
	InlineQuery        *models.InlineQuery        `json:"inline_query"`
	ChosenInlineResult *models.ChosenInlineResult `json:"chosen_inline_result"`
}

type wireCallback struct {
	ID      string      `json:"id"`
	From    models.User `json:"from"`
	Message *struct {
		ID   int         `json:"message_id"`
		Date int         `json:"date"`
		Chat models.Chat `json:"chat"`
	} `json:"message"`
	InlineMessageID string `json:"inline_message_id"`
	ChatInstance    string `json:"chat_instance"`
	Data            string `json:"data"`
	GameShortName   string `json:"game_short_name"`
}

// handleUpdate turns an update into the event it means (eventOf) and
// hands that to whoever takes events of its kind: payments to checkout, a
// membership change to the buyer records, a press, command or message to
// the flow engine. It reports whether the session changed.
func (b *Bot) handleUpdate(ctx context.Context, chat int64, u *models.Update, s *flows.Session, loaded flows.LoadResult) (bool, error) {
	now := b.opts.Now()
	switch ev := b.eventOf(u).(type) {
	case checkout.PreCheckoutQuery:
		if b.features.Checkout != nil {
			b.features.Checkout.PreCheckout(ctx, ev)
			return false, nil
		}
		lang := b.Engine.LangFor(s, userOf(u))
		return false, b.AnswerPreCheckout(ctx, ev.ID, locales.T(lang, "pay.disabled"))
	case checkout.Payment:
		if b.features.Checkout != nil {
			b.features.Checkout.Paid(ctx, ev)
		}
		return false, nil // without payments: nothing for the buyer to answer
	case memberChange:
		return false, b.Users.SetBlocked(ctx, ev.chat, ev.blocked, now)
	case inlineQuery:
		return false, b.answerInline(ctx, ev) // inline.go
	case chosenResult:
		return false, nil
	case supportReply:
		if b.features.Support != nil && b.features.Support.TakeReply(ctx, ev.reply) {
			return false, nil
		}
		ev.otherwise.Now = now // not a reply to a relayed message: the flows answer
		return b.handleFlowEvent(ctx, chat, nil, ev.otherwise, s, loaded)
	case flows.Event:
		ev.Now = now
		return b.handleFlowEvent(ctx, chat, u.CallbackQuery, ev, s, loaded)
	}
	return false, nil
}

// memberChange is the buyer blocking the bot (or leaving it) or coming back.
type memberChange struct {
	chat    int64
	blocked bool
}

// supportReply is an admin's reply to a message: an answer to a support
// ticket when it replies to a relayed one, otherwise a flow event.
type supportReply struct {
	reply     support.Reply
	otherwise flows.Event
}

// foreignAction is the action of a button whose callback data is not the
// shop's: the engine answers it as stale.
const foreignAction flows.Action = "?"

// eventOf is what an update means to the shop: a checkout.PreCheckoutQuery,
// a checkout.Payment, a memberChange, a supportReply, an inlineQuery, a
// chosenResult, a flows.Event, or nil
// for what the shop does not answer (messages outside private chats or without a
// sender, our own refunds echoed back).
func (b *Bot) eventOf(u *models.Update) any {
	switch {
	case u.CallbackQuery != nil:
		cq := u.CallbackQuery
		ev := flows.Event{Kind: flows.EvButton, User: flowUser(cq.From, b.staff)}
		if cq.Message.Message != nil {
			ev.MsgID = cq.Message.Message.ID
		} else if cq.Message.InaccessibleMessage != nil {
			ev.MsgID = cq.Message.InaccessibleMessage.MessageID
		}
		cb, ok := flows.DecodeCallback(cq.Data)
		if !ok {
			cb = flows.Callback{Version: "?", Action: foreignAction} // not ours: treated as stale
		}
		ev.Button = cb
		return ev
	case u.Message != nil && u.Message.SuccessfulPayment != nil:
		m, sp := u.Message, u.Message.SuccessfulPayment
		p := checkout.Payment{
			ChargeID: sp.TelegramPaymentChargeID, ChatID: m.Chat.ID, Currency: sp.Currency,
			Total: int64(sp.TotalAmount), Payload: sp.InvoicePayload, At: time.Unix(int64(m.Date), 0),
		}
		if m.From != nil {
			p.UserID, p.LanguageCode = m.From.ID, m.From.LanguageCode
		}
		return p
	case u.Message != nil:
		m := u.Message
		if m.Chat.Type != models.ChatTypePrivate || m.From == nil {
			return nil // the shop lives in private chats only
		}
		if m.RefundedPayment != nil {
			return nil // our own refund echoed back: nothing to do or say
		}
		ev := flows.Event{User: flowUser(*m.From, b.staff)}
		switch {
		case m.Text != "":
			if cmd, arg, ok := parseCommand(m.Text); ok {
				ev.Kind, ev.Command, ev.Arg = flows.EvCommand, cmd, arg
			} else {
				ev.Kind, ev.Text = flows.EvText, m.Text
			}
		case len(m.Photo) > 0:
			ev.Kind, ev.Text, ev.PhotoID = flows.EvPhoto, m.Caption, m.Photo[len(m.Photo)-1].FileID
		case m.Video != nil:
			ev.Kind, ev.Media = flows.EvText, &flows.Media{Kind: state.MediaVideo, FileID: m.Video.FileID, Caption: m.Caption}
		case m.Document != nil:
			ev.Kind, ev.Media = flows.EvText, &flows.Media{Kind: state.MediaDocument, FileID: m.Document.FileID, Caption: m.Caption}
		default:
			ev.Kind = flows.EvText // stickers, voice...: the flow asks again for text
		}
		if m.ReplyToMessage != nil && ev.User.Can(flows.PermTickets) && ev.Kind != flows.EvCommand {
			r := support.Reply{Admin: m.Chat.ID, ReplyTo: m.ReplyToMessage.ID, LanguageCode: m.From.LanguageCode, Text: m.Text}
			if len(m.Photo) > 0 {
				r.Text, r.Photo = m.Caption, m.Photo[len(m.Photo)-1].FileID
			}
			return supportReply{reply: r, otherwise: ev}
		}
		return ev
	case u.MyChatMember != nil:
		st := u.MyChatMember.NewChatMember.Type
		return memberChange{chat: u.MyChatMember.Chat.ID, blocked: st == models.ChatMemberTypeBanned || st == models.ChatMemberTypeLeft}
	case u.InlineQuery != nil && u.InlineQuery.From != nil:
		iq := u.InlineQuery
		return inlineQuery{id: iq.ID, text: iq.Query, offset: iq.Offset, user: flowUser(*iq.From, b.staff)}
	case u.ChosenInlineResult != nil:
		return chosenResult{}
	case u.PreCheckoutQuery != nil:
		pq := u.PreCheckoutQuery
		q := checkout.PreCheckoutQuery{ID: pq.ID, Currency: pq.Currency, Total: int64(pq.TotalAmount), Payload: pq.InvoicePayload}
		if pq.From != nil {
			q.UserID, q.LanguageCode = pq.From.ID, pq.From.LanguageCode
		}
		return q
	}
	return nil
}

// handleFlowEvent runs a press, command or message through the flow
// engine, carries out the effects its reply asks for (effects) and renders
// it.
func (b *Bot) handleFlowEvent(ctx context.Context, chat int64, cq *models.CallbackQuery, ev flows.Event, s *flows.Session, loaded flows.LoadResult) (bool, error) {
	r, err := b.Engine.Handle(ctx, s, ev)
	if err == nil {
		r, err = b.effects(ctx, s, ev, r)
	}
	if err != nil {
		return false, err // the caller apologizes and answers the press, once
	}
	lang := b.Engine.LangFor(s, ev.User)
	b.noteSeen(ctx, ev.User.ID, string(lang), ev.Now)
	if loaded == flows.Reset {
		r.Notices = append([]flows.Notice{{Text: locales.T(lang, "err.session_reset")}}, r.Notices...)
		r.Save = true
	}
	moved, err := b.Render(ctx, chat, s, r, cq, ev.MsgID)
	switch {
	case errors.Is(err, ErrFlooded):
		b.log.Info("reply waits for the chat's flood wait", "chat", chat, "err", err)
	case err != nil && !errors.Is(err, flows.ErrBlocked):
		b.log.Warn("render reply", "chat", chat, "err", err)
	}
	return r.Save || moved || loaded != flows.Loaded, nil
}

// effects carries out what the engine's reply asks of the host before it
// is shown: a /start is recorded (the buyer no longer blocks the bot; a new
// buyer who came through an invite link is attributed first; one who came
// through a broadcast's link counts as its open) and
// deliveries that could not reach them are handed over; a confirmed quote
// goes to checkout, whose reply is shown instead.
func (b *Bot) effects(ctx context.Context, s *flows.Session, ev flows.Event, r *flows.Reply) (*flows.Reply, error) {
	if r.Started {
		if b.features.Referral != nil {
			// Before the buyer is recorded: only a new buyer is attributed.
			if err := b.features.Referral.Started(ctx, ev.User.ID, ev.Arg, ev.Now); err != nil {
				return nil, err
			}
		}
		if err := b.Users.Started(ctx, ev.User.ID, ev.Now); err != nil {
			return nil, err
		}
		if id, _ := flows.CutCampaign(ev.Arg); id != "" && b.features.Broadcasts != nil {
			b.features.Broadcasts.Opened(ctx, id, ev.User.ID, ev.Now)
		}
		if b.features.Deliveries != nil {
			b.features.Deliveries.Redeliver(ctx, ev.User.ID)
		}
	}
	if r.Pay == nil {
		return r, nil
	}
	env := b.Engine.Env(s, ev)
	paid := flows.PaymentsDisabled(env)
	if b.features.Checkout != nil {
		var err error
		// The shop's record of a quote is the flows' one (tags aside).
		if paid, err = b.features.Checkout.Pay(ctx, env, s, (*state.Quote)(r.Pay)); err != nil {
			return nil, err
		}
	}
	return b.Engine.Then(s, ev, paid)
}

// Render performs a reply: answers the button press, sends the notices,
// and edits the live menu in place (or sends it anew), as text or as a
// photo (screen.go). It reports whether the live menu moved to a new
// message or changed kind, which changes the session.
func (b *Bot) Render(ctx context.Context, chat int64, s *flows.Session, r *flows.Reply, cq *models.CallbackQuery, pressed int) (bool, error) {
	if cq != nil {
		b.answer(ctx, cq.ID, r.Answer, r.Alert)
	}
	if r.Stale && pressed != 0 && pressed != s.MenuMsg {
		// Take the keyboard off the outdated message so it is not pressed again.
		_ = b.API.Do(ctx, "editMessageReplyMarkup", chat, func(ctx context.Context) error {
			return b.API.callJSON(ctx, "editMessageReplyMarkup", &tgbot.EditMessageReplyMarkupParams{ChatID: chat, MessageID: pressed}, nil)
		})
	}
	for _, n := range r.Notices {
		if _, err := b.Send(ctx, chat, n.Text, n.Rows); err != nil {
			return false, err
		}
	}
	if r.Screen == nil || r.NoScreen {
		return false, nil
	}
	return b.showScreen(ctx, chat, s, r.Screen, r.Stale) // screen.go
}

var noPreview = &models.LinkPreviewOptions{IsDisabled: tgbot.True()}

// Send sends an HTML message with an optional inline keyboard and returns
// its message id.
func (b *Bot) Send(ctx context.Context, chat int64, text string, rows [][]flows.Button) (int, error) {
	var id int
	err := b.API.Do(ctx, "sendMessage", chat, func(ctx context.Context) error {
		p := &tgbot.SendMessageParams{ChatID: chat, Text: text, ParseMode: models.ParseModeHTML, LinkPreviewOptions: noPreview}
		if len(rows) > 0 {
			p.ReplyMarkup = keyboard(rows)
		}
		var m sentMessage
		err := b.API.callJSON(ctx, "sendMessage", p, &m)
		id = m.ID
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("send message: %w", err)
	}
	return id, nil
}

func (b *Bot) answer(ctx context.Context, id, text string, alert bool) {
	err := b.API.Do(ctx, "answerCallbackQuery", 0, func(ctx context.Context) error {
		return b.API.callJSON(ctx, "answerCallbackQuery", &tgbot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text, ShowAlert: alert}, nil)
	})
	if err != nil {
		b.log.Warn("answer callback query", "err", err)
	}
}

// keyboard renders flow buttons as an inline keyboard.
func keyboard(rows [][]flows.Button) *models.InlineKeyboardMarkup {
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: make([][]models.InlineKeyboardButton, 0, len(rows))}
	for _, row := range rows {
		out := make([]models.InlineKeyboardButton, 0, len(row))
		for _, btn := range row {
			switch {
			case btn.URL != "":
				out = append(out, models.InlineKeyboardButton{Text: btn.Text, URL: btn.URL})
			case btn.Share:
				out = append(out, models.InlineKeyboardButton{Text: btn.Text, SwitchInlineQueryChosenChat: shareTo(btn.Arg)})
			default:
				out = append(out, models.InlineKeyboardButton{Text: btn.Text, CallbackData: btn.Data})
			}
		}
		kb.InlineKeyboard = append(kb.InlineKeyboard, out)
	}
	return kb
}

// shareTo opens the chat picker (users, groups and channels) with the
// bot's username and query typed, for a share button.
func shareTo(query string) *models.SwitchInlineQueryChosenChat {
	return &models.SwitchInlineQueryChosenChat{Query: query, AllowUserChats: true, AllowGroupChats: true, AllowChannelChats: true}
}
