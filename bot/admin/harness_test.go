package admin_test

import "shopbot/bot/bottest"

// The buyer's and the admin's chats of the tests, which run the whole shop
// (bottest).
const (
	chat  = bottest.Chat
	admin = bottest.Admin
)
