package botapitest

import "shopbot/bot/botapitest/types"

// The Bot API objects the server produces live in package types; these
// aliases keep their botapitest names.
type (
	User                 = types.User
	Chat                 = types.Chat
	MessageEntity        = types.MessageEntity
	Document             = types.Document
	PhotoSize            = types.PhotoSize
	Invoice              = types.Invoice
	SuccessfulPayment    = types.SuccessfulPayment
	RefundedPayment      = types.RefundedPayment
	CopyTextButton       = types.CopyTextButton
	InlineKeyboardButton = types.InlineKeyboardButton
	InlineKeyboardMarkup = types.InlineKeyboardMarkup
	Message              = types.Message
	CallbackQuery        = types.CallbackQuery
	PreCheckoutQuery     = types.PreCheckoutQuery
	ChatMember           = types.ChatMember
	ChatMemberUpdated    = types.ChatMemberUpdated
	Update               = types.Update
	TransactionPartner   = types.TransactionPartner
	StarTransaction      = types.StarTransaction
	StarAmount           = types.StarAmount
	BotCommand           = types.BotCommand
	WebhookInfo          = types.WebhookInfo
)

// botUser is the result of getMe: a User with the bot-only flags.
type botUser struct {
	User
	CanJoinGroups           bool `json:"can_join_groups"`
	CanReadAllGroupMessages bool `json:"can_read_all_group_messages"`
	SupportsInlineQueries   bool `json:"supports_inline_queries"`
}
