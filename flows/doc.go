// Package flows holds the conversation state machines: pure logic from a
// chat's session and an incoming event to a new session and the reply to
// show, testable without Telegram or Redis.
//
// The engine (engine.go) routes an event: the global commands (one path
// for /start), the main menu, the language, and the flow the chat is in.
// Each product line is one file named after its line id, holding its flow:
// topup.go, stars.go, premium.go, services.go, gifts.go, giftcards.go,
// keys.go and games.go (in-game top-ups). What the lines share is written
// once: shop.go (prices, quotes, the confirmation step, the rate limit),
// browse.go (deep links, search, lists), offers.go (items sold by the unit
// with a quantity, offers that need the buyer's fields), fields.go (the
// buyer's field answers and their checks) and recipient.go (a Telegram
// username).
//
// The package imports no storage, no upstream client and no Telegram
// library. It reaches the world through the small interfaces of ports.go,
// in its own plain types: Catalog, QuoteStore, Limiter and Funds (bot/catalog
// implements them over the upstream client and Redis; tests fake them in
// memory). What the host must do besides showing a reply is an effect on
// the reply: Started (record a /start, hand over waiting deliveries) and
// Pay (start paying a confirmed quote; the host shows checkout's answer
// through Engine.Then).
package flows
