// Package shop holds what the product lines share, written once over the
// conversation engine (package flows): the shop's prices (Pricing: markup,
// Stars), the paginated lists and their buttons (shop.go, browse.go: deep
// links, search, brands and categories), the upstream balance that pauses
// what it cannot cover, the rate limit on costly actions, quoting and the
// confirmation step that hands a live quote to checkout as Reply.Pay, and
// promo codes on it (promo.go).
//
// The lines themselves are in flows/lines, which registers them with
// lines.Register(engine, shop). Like flows, the package is pure: it imports
// the engine and the texts only.
package shop
