package types

import "encoding/json"

// The types below mirror the subset of Bot API objects the fake server
// produces. Their JSON matches the Bot API (optional fields are omitted when
// empty); the server checks what it sends against the schema as well.

// User is a Telegram user or bot (Bot API User).
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
	IsPremium    bool   `json:"is_premium,omitempty"`
}

// Chat is a chat (Bot API Chat). Positive ids are private chats with the
// buyer of the same id; negative ids are groups.
type Chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
}

// MessageEntity is a special entity in a text (Bot API MessageEntity).
// Offsets and lengths are in UTF-16 code units.
type MessageEntity struct {
	Type          string `json:"type"`
	Offset        int    `json:"offset"`
	Length        int    `json:"length"`
	URL           string `json:"url,omitempty"`
	Language      string `json:"language,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}

// Document is a general file (Bot API Document).
type Document struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int64  `json:"file_size,omitempty"`
}

// Video is a video file (Bot API Video).
type Video struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	Duration     int    `json:"duration"`
}

// PhotoSize is one size of a photo (Bot API PhotoSize).
type PhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int64  `json:"file_size,omitempty"`
}

// Invoice is the invoice part of an invoice message (Bot API Invoice).
type Invoice struct {
	Title          string `json:"title"`
	Description    string `json:"description"`
	StartParameter string `json:"start_parameter"`
	Currency       string `json:"currency"`
	TotalAmount    int64  `json:"total_amount"`
}

// SuccessfulPayment is the service part of a successful payment message
// (Bot API SuccessfulPayment).
type SuccessfulPayment struct {
	Currency                string `json:"currency"`
	TotalAmount             int64  `json:"total_amount"`
	InvoicePayload          string `json:"invoice_payload"`
	TelegramPaymentChargeID string `json:"telegram_payment_charge_id"`
	ProviderPaymentChargeID string `json:"provider_payment_charge_id"`
}

// RefundedPayment is the service part of a refund message (Bot API
// RefundedPayment).
type RefundedPayment struct {
	Currency                string `json:"currency"`
	TotalAmount             int64  `json:"total_amount"`
	InvoicePayload          string `json:"invoice_payload"`
	TelegramPaymentChargeID string `json:"telegram_payment_charge_id"`
}

// CopyTextButton is the copy_text action of an inline button.
type CopyTextButton struct {
	Text string `json:"text"`
}

// InlineKeyboardButton is one inline keyboard button. Rarely used object
// actions are kept as raw JSON.
type InlineKeyboardButton struct {
	Text                         string          `json:"text"`
	IconCustomEmojiID            string          `json:"icon_custom_emoji_id,omitempty"`
	Style                        string          `json:"style,omitempty"`
	URL                          string          `json:"url,omitempty"`
	CallbackData                 string          `json:"callback_data,omitempty"`
	WebApp                       json.RawMessage `json:"web_app,omitempty"`
	LoginURL                     json.RawMessage `json:"login_url,omitempty"`
	SwitchInlineQuery            *string         `json:"switch_inline_query,omitempty"`
	SwitchInlineQueryCurrentChat *string         `json:"switch_inline_query_current_chat,omitempty"`
	SwitchInlineQueryChosenChat  json.RawMessage `json:"switch_inline_query_chosen_chat,omitempty"`
	CopyText                     *CopyTextButton `json:"copy_text,omitempty"`
	CallbackGame                 json.RawMessage `json:"callback_game,omitempty"`
	Pay                          bool            `json:"pay,omitempty"`
}

// InlineKeyboardMarkup is an inline keyboard attached to a message.
type InlineKeyboardMarkup struct {
	InlineKeyboard [][]InlineKeyboardButton `json:"inline_keyboard"`
}

// Buttons returns the keyboard's buttons row by row, or nil for a nil markup.
func (m *InlineKeyboardMarkup) Buttons() []InlineKeyboardButton {
	if m == nil {
		return nil
	}
	var out []InlineKeyboardButton
	for _, row := range m.InlineKeyboard {
		out = append(out, row...)
	}
	return out
}

// Message is a message in a chat (Bot API Message, the fields this server
// produces). Bot messages carry what the bot last set (after edits); the
// fields tagged json:"-" are bookkeeping for tests and not part of the API.
type Message struct {
	MessageID         int                   `json:"message_id"`
	From              *User                 `json:"from,omitempty"`
	Date              int64                 `json:"date"`
	Chat              Chat                  `json:"chat"`
	EditDate          int64                 `json:"edit_date,omitempty"`
	Text              string                `json:"text,omitempty"`
	Entities          []MessageEntity       `json:"entities,omitempty"`
	Document          *Document             `json:"document,omitempty"`
	Photo             []PhotoSize           `json:"photo,omitempty"`
	Video             *Video                `json:"video,omitempty"`
	Caption           string                `json:"caption,omitempty"`
	CaptionEntities   []MessageEntity       `json:"caption_entities,omitempty"`
	Invoice           *Invoice              `json:"invoice,omitempty"`
	SuccessfulPayment *SuccessfulPayment    `json:"successful_payment,omitempty"`
	RefundedPayment   *RefundedPayment      `json:"refunded_payment,omitempty"`
	ReplyMarkup       *InlineKeyboardMarkup `json:"reply_markup,omitempty"`
	// ReplyToMessage is the message a user's message answers (a swipe reply).
	ReplyToMessage *Message `json:"reply_to_message,omitempty"`

	// Method is the Bot API method that created a bot message, e.g. "sendMessage".
	Method string `json:"-"`
	// RawText is the text or caption exactly as the bot sent it (before
	// parse_mode parsing).
	RawText string `json:"-"`
	// ParseMode is the parse_mode the bot used for the text or caption.
	ParseMode string `json:"-"`
	// InvoicePayload is the payload of an invoice the bot sent.
	InvoicePayload string `json:"-"`
	// FileData is the content of an uploaded document or photo.
	FileData []byte `json:"-"`
	// PhotoName is the file name a photo was uploaded under (a photo sent
	// again by file_id keeps it); "" when unknown.
	PhotoName string `json:"-"`
	// ReplyKeyboard is a non-inline reply_markup (reply keyboard, remove or
	// force reply) as sent; Telegram does not echo it in the Message.
	ReplyKeyboard json.RawMessage `json:"-"`
}

// CallbackQuery is a press of an inline button (Bot API CallbackQuery).
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance"`
	Data         string   `json:"data,omitempty"`
}

// PreCheckoutQuery asks the bot to confirm a checkout (Bot API PreCheckoutQuery).
type PreCheckoutQuery struct {
	ID             string `json:"id"`
	From           User   `json:"from"`
	Currency       string `json:"currency"`
	TotalAmount    int64  `json:"total_amount"`
	InvoicePayload string `json:"invoice_payload"`
}

// ChatMember is a member's status in a chat (the Bot API ChatMember
// subtypes member and kicked).
type ChatMember struct {
	Status    string `json:"status"`
	User      User   `json:"user"`
	UntilDate int64  `json:"until_date"`
}

// ChatMemberUpdated reports a change of a member's status (Bot API
// ChatMemberUpdated); the server sends it as my_chat_member when a buyer
// blocks or unblocks the bot.
type ChatMemberUpdated struct {
	Chat          Chat       `json:"chat"`
	From          User       `json:"from"`
	Date          int64      `json:"date"`
	OldChatMember ChatMember `json:"old_chat_member"`
	NewChatMember ChatMember `json:"new_chat_member"`
}

// Update is an incoming update (Bot API Update, the kinds the server
// produces). Use PushUpdateJSON for any other kind.
type Update struct {
	UpdateID           int64               `json:"update_id"`
	Message            *Message            `json:"message,omitempty"`
	EditedMessage      *Message            `json:"edited_message,omitempty"`
	CallbackQuery      *CallbackQuery      `json:"callback_query,omitempty"`
	PreCheckoutQuery   *PreCheckoutQuery   `json:"pre_checkout_query,omitempty"`
	MyChatMember       *ChatMemberUpdated  `json:"my_chat_member,omitempty"`
	InlineQuery        *InlineQuery        `json:"inline_query,omitempty"`
	ChosenInlineResult *ChosenInlineResult `json:"chosen_inline_result,omitempty"`
}

// InlineQuery is a query typed after the bot's username (Bot API
// InlineQuery).
type InlineQuery struct {
	ID       string `json:"id"`
	From     User   `json:"from"`
	Query    string `json:"query"`
	Offset   string `json:"offset"`
	ChatType string `json:"chat_type,omitempty"`
}

// ChosenInlineResult is a result of an inline query that the user sent
// (Bot API ChosenInlineResult).
type ChosenInlineResult struct {
	ResultID        string `json:"result_id"`
	From            User   `json:"from"`
	InlineMessageID string `json:"inline_message_id,omitempty"`
	Query           string `json:"query"`
}

// PreparedInlineMessage is a message stored for a Mini App's user to send
// (Bot API PreparedInlineMessage).
type PreparedInlineMessage struct {
	ID             string `json:"id"`
	ExpirationDate int64  `json:"expiration_date"`
}

// TransactionPartner is the other side of a Star transaction (the Bot API
// TransactionPartnerUser subtype).
type TransactionPartner struct {
	Type            string         `json:"type"`
	TransactionType string         `json:"transaction_type,omitempty"`
	User            *User          `json:"user,omitempty"`
	Affiliate       *AffiliateInfo `json:"affiliate,omitempty"`
	InvoicePayload  string         `json:"invoice_payload,omitempty"`
	// TransactionPartnerAffiliateProgram: the bot that sponsors the
	// program and the bot's commission rate.
	SponsorUser        *User `json:"sponsor_user,omitempty"`
	CommissionPerMille int   `json:"commission_per_mille,omitempty"`
}

// AffiliateInfo is the affiliate that received a commission via a
// transaction (Bot API AffiliateInfo).
type AffiliateInfo struct {
	AffiliateUser      *User `json:"affiliate_user,omitempty"`
	CommissionPerMille int   `json:"commission_per_mille"`
	Amount             int64 `json:"amount"`
	NanostarAmount     int64 `json:"nanostar_amount,omitempty"`
}

// StarTransaction is a Telegram Star transaction of the bot (Bot API
// StarTransaction). A refund has the id of the payment it refunds and a
// Receiver instead of a Source.
type StarTransaction struct {
	ID             string              `json:"id"`
	Amount         int64               `json:"amount"`
	NanostarAmount int64               `json:"nanostar_amount,omitempty"`
	Date           int64               `json:"date"`
	Source         *TransactionPartner `json:"source,omitempty"`
	Receiver       *TransactionPartner `json:"receiver,omitempty"`
}

// StarAmount is an amount of Telegram Stars (Bot API StarAmount).
type StarAmount struct {
	Amount         int64 `json:"amount"`
	NanostarAmount int64 `json:"nanostar_amount,omitempty"`
}

// BotCommand is a command in the bot's menu (Bot API BotCommand).
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// WebhookInfo is the webhook state (Bot API WebhookInfo).
type WebhookInfo struct {
	URL                  string   `json:"url"`
	HasCustomCertificate bool     `json:"has_custom_certificate"`
	PendingUpdateCount   int      `json:"pending_update_count"`
	IPAddress            string   `json:"ip_address,omitempty"`
	MaxConnections       int      `json:"max_connections,omitempty"`
	AllowedUpdates       []string `json:"allowed_updates,omitempty"`
	// SecretToken is the secret_token the bot set; Telegram never returns
	// it, so it is not part of the JSON.
	SecretToken string `json:"-"`
}
