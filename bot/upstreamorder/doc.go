// Package upstreamorder is each product line's upstream side: what a paid quote of
// the line becomes at the reseller. One file per line, named as its flow
// in flows/lines (topup.go, stars.go, premium.go, services.go, gifts.go,
// giftcards.go, keys.go, games.go), holds the line's upstream order type,
// how its quote becomes the create request (the params and buyer fields
// stored on the order), which params the upstream's order object echoes
// and under what key, the create call on the reseller client, and the
// current upstream price of its quote (the pre-checkout's re-price).
//
// upstreamorder.go holds what they share: Request, stored on an order before its
// POST, with its placement slot name (Kind), its identity (Signature),
// whether any unclaimed upstream order of its kind serves it (Fungible) and
// how an upstream order compares with it (Match); and Build, Create and
// Reprice, which pick the line. Slot names and signatures are kept in Redis
// by running shops: they never change for the same request.
package upstreamorder
