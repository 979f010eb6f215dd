package botapitest

import "shopbot/bot/botapitest/types"

// botUser is the result of getMe: a User with the bot-only flags.
type botUser struct {
	types.User
	CanJoinGroups           bool `json:"can_join_groups"`
	CanReadAllGroupMessages bool `json:"can_read_all_group_messages"`
	SupportsInlineQueries   bool `json:"supports_inline_queries"`
}
