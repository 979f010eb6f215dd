// Package locales holds the buyer-facing message catalogs (en, ru, uk),
// embedded in the binary, with plural rules and per-locale number formatting.
//
// # Catalogs
//
// en.json, ru.json and uk.json are flat JSON objects from a dotted key
// ("menu.title", "err.outdated") to either a string or, for a plural key,
// an object of CLDR plural forms: {"one", "other"} in English and
// {"one", "few", "many", "other"} in Russian and Ukrainian ("other" is the
// fraction form, kept so the catalogs stay CLDR-complete). Texts may use
// Telegram HTML (<b>, <i>, <code>) and {name} placeholders. Texts sent as
// callback answers or button labels carry no markup.
//
// Every key lives in all three files with the same placeholders;
// TestEveryKeyInEveryLocale names any key that is missing, extra, short of
// plural forms or out of step with English, and TestTextsAreTelegramHTML
// checks the markup. To add a message, add the key to all three files.
//
// The catalogs are parsed once, lazily, on first use and never modified
// afterwards; everything here is safe for concurrent use. Check reports a
// parse error without the panic T and N would raise.
//
// # Formatting
//
// English groups digits with "," and uses "." for decimals; Russian and
// Ukrainian group with a no-break space (U+00A0, the CLDR group separator for
// both) and use ",". The same U+00A0 joins an amount to its unit in every
// language ("1,250 ⭐", "1 234,50 $"), so Telegram never wraps it apart.
// Money is decimal.Decimal, rounded half away from zero, never float.
// Dates of a time in time.Local are shown in UTC; a time carrying another
// location is shown in it.
package locales
