// Package flows holds the conversation state machines: pure logic from a
// chat's session and an incoming event to a new session and the reply to
// show, testable without Telegram or Redis.
//
// The engine (engine.go) routes an event: the global commands (one path
// for /start), the main menu, the language, and the flow the chat is in.
// The product lines are built on it in two packages of their own:
// flows/shop (what the lines share: prices, lists, quotes, the
// confirmation step, promo codes, the rate limit) and flows/lines (one file
// per line, named after its line id, and lines.Register).
//
// The staff gate (gate.go) decides who may do what of the admin side: one
// table gives each role (owner, support agent, accountant) its perms, and
// every staff command, button, flow and flow action is registered with the
// perm it needs (Engine.AdminCommand, AdminButton, AdminFlow), which the
// engine checks before a handler runs; Engine.AdminEntries lists them.
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
