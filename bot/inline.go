package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"

	"shopbot/flows"
	"shopbot/locales"
)

// The inline mode: someone types @<bot> <text> in any chat and picks a
// product card to send there (docs/design.md, "Inline mode"). The engine
// finds the cards (flows.Engine.Inline, the product lines' search); this
// file answers Telegram with them. Each card sends the product with a
// button that opens it in the shop: a t.me link whose /start payload is
// the product's deep link, with the sender's invite when referrals are on
// (flows.StartPayload). A card whose image the shop has uploaded before
// (bot/images) is that photo; any other card is a text message, with the
// image as its thumbnail in the picker.

// inlineCacheTime is how long Telegram may keep an answer: short, as the
// prices and the stock move.
const inlineCacheTime = 30

// inlineQuery is an inline query as the shop takes it.
type inlineQuery struct {
	id           string
	text, offset string
	user         flows.User
}

// chosenResult is a card someone sent (Telegram sends it when inline
// feedback is on in BotFather): counted with the updates
// (kind chosen_inline_result), nothing else to do.
type chosenResult struct{}

// inlineButton is the button above the results (InlineQueryResultsButton).
type inlineButton struct {
	Text           string `json:"text"`
	StartParameter string `json:"start_parameter"`
}

// answerInlineParams are answerInlineQuery's parameters.
type answerInlineParams struct {
	InlineQueryID string        `json:"inline_query_id"`
	Results       []any         `json:"results"`
	CacheTime     int           `json:"cache_time"`
	IsPersonal    bool          `json:"is_personal,omitempty"`
	NextOffset    string        `json:"next_offset,omitempty"`
	Button        *inlineButton `json:"button,omitempty"`
}

// textContent is InputTextMessageContent.
type textContent struct {
	MessageText        string                     `json:"message_text"`
	ParseMode          string                     `json:"parse_mode"`
	LinkPreviewOptions *models.LinkPreviewOptions `json:"link_preview_options,omitempty"`
}

// articleResult is InlineQueryResultArticle.
type articleResult struct {
	Type                string                       `json:"type"`
	ID                  string                       `json:"id"`
	Title               string                       `json:"title"`
	InputMessageContent textContent                  `json:"input_message_content"`
	ReplyMarkup         *models.InlineKeyboardMarkup `json:"reply_markup,omitempty"`
	Description         string                       `json:"description,omitempty"`
	ThumbnailURL        string                       `json:"thumbnail_url,omitempty"`
}

// cachedPhotoResult is InlineQueryResultCachedPhoto.
type cachedPhotoResult struct {
	Type        string                       `json:"type"`
	ID          string                       `json:"id"`
	PhotoFileID string                       `json:"photo_file_id"`
	Title       string                       `json:"title,omitempty"`
	Description string                       `json:"description,omitempty"`
	Caption     string                       `json:"caption,omitempty"`
	ParseMode   string                       `json:"parse_mode,omitempty"`
	ReplyMarkup *models.InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// answerInline answers an inline query with the engine's cards. A failure
// to find them is logged and answered as nothing found: the picker never
// waits for an answer that does not come.
func (b *Bot) answerInline(ctx context.Context, q inlineQuery) error {
	now := b.opts.Now()
	env := b.Engine.InlineEnv(q.user, now)
	a, err := b.Engine.Inline(ctx, flows.InlineQuery{Text: q.text, Offset: q.offset, User: q.user, Now: now})
	if err != nil {
		b.log.Warn("inline query: find products", "user", q.user.ID, "err", err)
		a = &flows.InlineAnswer{}
	}
	invite := b.invite(ctx, q.user.ID)
	p := &answerInlineParams{InlineQueryID: q.id, Results: []any{}, CacheTime: inlineCacheTime, IsPersonal: true, NextOffset: a.Next}
	if q.text == "" && q.offset == "" && invite != "" {
		p.Results = append(p.Results, b.inviteCard(env, invite))
	}
	for _, c := range a.Cards {
		p.Results = append(p.Results, b.cardResult(ctx, env, c, invite))
	}
	shop := flows.StartPayload(invite, "")
	if shop == "" {
		shop = "shop" // a payload that names nothing: the main menu
	}
	switch {
	case a.Limited:
		p.Button = &inlineButton{Text: env.T("inline.limited"), StartParameter: shop}
		p.CacheTime = 0
	case len(p.Results) == 0:
		p.Button = &inlineButton{Text: env.T("inline.nothing"), StartParameter: shop}
	default:
		p.Button = &inlineButton{Text: env.T("inline.shop"), StartParameter: shop}
	}
	err = b.API.Do(ctx, "answerInlineQuery", 0, func(ctx context.Context) error {
		return b.API.callJSON(ctx, "answerInlineQuery", p, nil)
	})
	if err != nil {
		// Too late or refused: the picker shows nothing, the next
		// keystroke asks again.
		b.log.Warn("answer inline query", "user", q.user.ID, "err", err)
	}
	return nil
}

// invite is user's invite (r<code>) when referrals are on, else "".
func (b *Bot) invite(ctx context.Context, user int64) string {
	if b.features.Referral == nil {
		return ""
	}
	inv, err := b.features.Referral.Invite(ctx, user)
	if err != nil {
		b.log.Warn("inline query: the sharer's invite", "user", user, "err", err)
		return ""
	}
	return inv
}

// startLink is the t.me link that starts the bot with payload.
func (b *Bot) startLink(payload string) string {
	if payload == "" {
		return "https://t.me/" + b.Username()
	}
	return "https://t.me/" + b.Username() + "?start=" + payload
}

// cardResult is a product card: the uploaded photo with the card's text as
// its caption, or the text with the image as the picker's thumbnail.
func (b *Bot) cardResult(ctx context.Context, env *flows.Env, c flows.Card, invite string) any {
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: env.T("inline.open"), URL: b.startLink(flows.StartPayload(invite, c.Link))},
	}}}
	if c.Image != "" && b.images != nil {
		if id := b.images.Cached(ctx, c.Image); id != "" {
			return cachedPhotoResult{Type: "photo", ID: c.ID, PhotoFileID: id, Title: c.Title, Description: c.Description,
				Caption: c.Text, ParseMode: string(models.ParseModeHTML), ReplyMarkup: kb}
		}
	}
	return articleResult{Type: "article", ID: c.ID, Title: c.Title, Description: c.Description, ThumbnailURL: c.Image,
		InputMessageContent: textContent{MessageText: c.Text, ParseMode: string(models.ParseModeHTML), LinkPreviewOptions: noPreview},
		ReplyMarkup:         kb}
}

// inviteCard is the card that invites to the shop with the sharer's invite.
func (b *Bot) inviteCard(env *flows.Env, invite string) articleResult {
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{
		{Text: env.T("inline.shop"), URL: b.startLink(flows.StartPayload(invite, ""))},
	}}}
	text := env.T("inline.invite_text", "shop", locales.Escape("@"+b.Username()), "text", env.T("ref.share_text"))
	return articleResult{Type: "article", ID: "invite", Title: env.T("inline.invite_title"), Description: env.T("ref.share_text"),
		InputMessageContent: textContent{MessageText: text, ParseMode: string(models.ParseModeHTML), LinkPreviewOptions: noPreview},
		ReplyMarkup:         kb}
}

// PreparedShare is a message stored for a Mini App's user to send with
// shareMessage: its id and when it can no longer be sent.
type PreparedShare struct {
	ID      string
	Expires time.Time
}

// PrepareShare stores card (with user's invite when referrals are on) as a
// prepared inline message user may send to any chat from the Mini App
// (savePreparedInlineMessage; the Mini App passes the id to shareMessage).
func (b *Bot) PrepareShare(ctx context.Context, user flows.User, c flows.Card) (PreparedShare, error) {
	env := b.Engine.InlineEnv(user, b.opts.Now())
	return b.prepare(ctx, user, b.cardResult(ctx, env, c, b.invite(ctx, user.ID)))
}

// ErrNoInvite is PrepareInvite's error while referrals are off.
var ErrNoInvite = errors.New("referrals are off: no invite to share")

// PrepareInvite stores the inline mode's invite card, with user's invite,
// as a prepared inline message user may send to any chat from the Mini
// App's referral page (shareMessage).
func (b *Bot) PrepareInvite(ctx context.Context, user flows.User) (PreparedShare, error) {
	invite := b.invite(ctx, user.ID)
	if invite == "" {
		return PreparedShare{}, ErrNoInvite
	}
	return b.prepare(ctx, user, b.inviteCard(b.Engine.InlineEnv(user, b.opts.Now()), invite))
}

// prepare saves result as a prepared inline message of user's, for any
// chat.
func (b *Bot) prepare(ctx context.Context, user flows.User, result any) (PreparedShare, error) {
	params := struct {
		UserID            int64 `json:"user_id"`
		Result            any   `json:"result"`
		AllowUserChats    bool  `json:"allow_user_chats"`
		AllowGroupChats   bool  `json:"allow_group_chats"`
		AllowChannelChats bool  `json:"allow_channel_chats"`
	}{user.ID, result, true, true, true}
	var res struct {
		ID  string `json:"id"`
		Exp int64  `json:"expiration_date"`
	}
	err := b.API.Do(ctx, "savePreparedInlineMessage", 0, func(ctx context.Context) error {
		return b.API.callJSON(ctx, "savePreparedInlineMessage", params, &res)
	})
	if err != nil {
		return PreparedShare{}, fmt.Errorf("save prepared inline message: %w", err)
	}
	return PreparedShare{ID: res.ID, Expires: time.Unix(res.Exp, 0)}, nil
}
