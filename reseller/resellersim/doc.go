// Package resellersim is an in-memory simulator of the upstream reseller store
// service (its API is summarized in docs/upstream.md), served over HTTP, used by
// tests and by the demo.
//
// A Sim is an http.Handler serving every endpoint under /api/v1:
//
//	sim := resellersim.New(resellersim.Config{Now: clock.Now, Seed: 1})
//	srv := httptest.NewServer(sim)
//	base := srv.URL + "/api/v1" // with "Authorization: Bearer test-key"
//
// It implements the wire format on its own (it does not import package
// reseller): the account and its balance transactions, the catalogs of all
// eight product lines (simcatalog.Default, with the Demo* ids for tests), order
// creation that charges the balance at once, the order lifecycle driven by
// the injectable clock (created, processing, then completed, failed or
// refund, see Behavior), the manual-service order chat with a scripted
// operator, per-key rate limiting, and test hooks that inject failures:
// FailNext, CutAfterCreate (the ambiguous create), FailCreateAfterExecute,
// DelayNext, RateLimitNext and others; ScriptCreates gives the next
// order-creating requests one outcome each, in order (429 creating nothing,
// created then 502, cut, or no answer, each with and without creating the
// order); Config.ClockOffset / SetClockOffset put the upstream's clock
// behind or ahead; PlaceOtherClientOrder plants an order placed by another
// client of the same account.
//
// The order object echoes only the request fields the spec's Order table
// lists for the line (see the doc comment of (*order).json in orders.go):
// game-key orders echo none of game_id, key_id, quantity, and carry the
// delivered keys only when fetched by number; in-game top-up orders echo
// none of category_id, offer_id or the buyer fields; manual-service orders
// echo service_id and product_id but not the buyer fields. OrderSnapshot
// keeps every request field for tests.
//
// Choices where the spec shows no shape: game keys are delivered in "keys" as
// objects {"key", "name"}; in-game top-up orders carry no codes; chat
// messages are {"object": "chat_message", "id", "author" ("operator" or
// "client"), "text", "image" (URL or null), "created_at"}; a "select" top-up
// field lists its values in "options"; catalog list entries carry an
// "object" too; server_error is answered with the injected status (5xx).
//
// Its parts: package simcatalog (the catalog, the default one, its read-only
// endpoints and the checks of what an order buys), package chat (the
// manual-service chat's wire format), package faults (the fault plan and
// the scripted create steps) and internal/wire (the error body and formats
// they share). Tests name the catalog's types and ids, the chat's messages
// and the create steps from those packages (simcatalog.DemoGiftCard,
// chat.Message, faults.CreatedThenFail).
package resellersim
