package locales

import (
	"strings"
	"unicode/utf16"
)

// Clip shortens s to at most n UTF-16 code units (Telegram's way of counting
// text), cutting at a character boundary and ending with an ellipsis. It is
// the one helper that keeps upstream names and buyer texts within Telegram's
// limits; clip before escaping HTML, so no entity is cut in half.
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if UTF16Len(s) <= n {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if used+w > n-1 {
			break
		}
		b.WriteRune(r)
		used += w
	}
	return strings.TrimSpace(b.String()) + "…"
}

// UTF16Len is the length of s in UTF-16 code units, as Telegram counts it.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}
