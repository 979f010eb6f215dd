// Package locales holds the buyer-facing message catalogs (en, ru, uk),
// embedded in the binary, with plural rules and per-locale number formatting.
package locales
