package locales

import "strings"

// Lang is a supported interface language, named by its ISO 639-1 code.
type Lang string

// The languages the shop speaks.
const (
	// En is English, the fallback for missing messages.
	En Lang = "en"
	// Ru is Russian.
	Ru Lang = "ru"
	// Uk is Ukrainian.
	Uk Lang = "uk"
)

// Supported returns every language with a catalog, in menu order
// (English, Russian, Ukrainian). The slice is new on every call.
func Supported() []Lang {
	return []Lang{En, Ru, Uk}
}

// Parse returns the language named by s ("en", "ru" or "uk"; case and
// surrounding spaces ignored), and false when s names no supported language.
// It is strict on purpose: it reads configuration (LANGUAGES,
// DEFAULT_LANGUAGE); Match is the lenient one for Telegram's language codes.
func Parse(s string) (Lang, bool) {
	l := Lang(strings.ToLower(strings.TrimSpace(s)))
	switch l {
	case En, Ru, Uk:
		return l, true
	}
	return "", false
}

// Match picks the best enabled language for a Telegram user's
// language_code (an IETF tag such as "ru", "uk-UA" or "en-GB"; only the
// primary subtag counts, case-insensitively).
//
// The rules, in order:
//   - en, ru and uk map to themselves; "ua" (a frequent mistake for
//     Ukrainian) maps to uk;
//   - be, kk, ky and tg (Belarusian, Kazakh, Kyrgyz, Tajik: users who
//     commonly read Russian) map to ru, but only when ru is enabled;
//   - anything else, or a match that is not enabled, gets fallback when it
//     is enabled, otherwise the first supported language in enabled.
//
// Ukrainian never falls back to Russian (or the other way round): an
// unavailable language gets the shop's fallback. An empty enabled list means
// every supported language is enabled. Unsupported entries in enabled are
// ignored; if nothing usable is enabled, Match returns fallback when it is
// supported and En otherwise. The result is always a supported language.
func Match(languageCode string, enabled []Lang, fallback Lang) Lang {
	if len(enabled) == 0 {
		enabled = Supported()
	}
	isEnabled := func(l Lang) bool {
		for _, e := range enabled {
			if e == l && isSupported(l) {
				return true
			}
		}
		return false
	}

	code := strings.ToLower(strings.TrimSpace(languageCode))
	if i := strings.IndexAny(code, "-_"); i >= 0 {
		code = code[:i]
	}
	var want Lang
	switch code {
	case "en":
		want = En
	case "ru", "be", "kk", "ky", "tg":
		want = Ru
	case "uk", "ua":
		want = Uk
	}
	if want != "" && isEnabled(want) {
		return want
	}
	if isEnabled(fallback) {
		return fallback
	}
	for _, e := range enabled {
		if isSupported(e) {
			return e
		}
	}
	if isSupported(fallback) {
		return fallback
	}
	return En
}

// LanguageName returns the language's own name for the /language menu
// ("English", "Русский", "Українська"), or the code itself for an
// unsupported language.
func LanguageName(lang Lang) string {
	switch lang {
	case En:
		return "English"
	case Ru:
		return "Русский"
	case Uk:
		return "Українська"
	}
	return string(lang)
}

func isSupported(l Lang) bool {
	return l == En || l == Ru || l == Uk
}
