package console

import (
	"strings"

	"shopbot/locales"
)

// The page's texts come from the shop's locales, like the chat's and the
// Mini App's: the "console.*" keys (but the endpoints' descriptions,
// which the gate's table shows) and the staff's order statuses
// ("ao.status.*"). Texts are Telegram HTML in the catalogs; the page gets
// them as plain text with their {placeholders}, which it fills and shows
// as text, never as markup.

// pageTexts are the texts the page shows in lang, by key.
func pageTexts(lang locales.Lang) map[string]string {
	out := map[string]string{}
	for _, k := range locales.Keys(locales.En) {
		if strings.HasPrefix(k, "console.") && !strings.HasPrefix(k, "console.ep.") || strings.HasPrefix(k, "ao.status.") {
			out[k] = locales.Plain(locales.T(lang, k))
		}
	}
	return out
}
