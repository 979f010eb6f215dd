// Package lines holds the eight product lines, one file each named after
// its line id: topup.go, stars.go, premium.go, services.go, gifts.go,
// giftcards.go, keys.go and games.go (in-game top-ups). Register adds them
// all to an engine over one shop (package flows/shop).
//
// The step shapes several lines share are here too: offers.go (items sold
// by the unit with a quantity, offers that need the buyer's fields),
// fields.go (the buyer's field answers and their checks) and recipient.go
// (a Telegram username).
//
// Like flows, the package is pure: it imports the engine, the shop's shared
// steps and the texts only. Its tests drive whole conversations through the
// engine over in-memory fakes (fakes_test.go) and compare transcripts with
// golden files under testdata/.
package lines
