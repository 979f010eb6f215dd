package flows

import (
	"errors"
	"fmt"
	"html"
	"strings"

	"shopbot/locales"
)

// Telegram's limits on one message, checked when a reply is built so that a
// screen that would be refused never reaches the Bot API.
const (
	MaxTextLen = 4096 // characters (UTF-16 units) of text after HTML parsing
	MaxButtons = 100  // buttons in one inline keyboard
)

// ErrTooBig is returned (wrapped) for a reply over Telegram's limits.
var ErrTooBig = errors.New("message over Telegram's limits")

// VisibleLen is the length of a Telegram HTML text as Telegram counts it:
// tags removed, entities decoded, in UTF-16 units.
func VisibleLen(text string) int {
	var b strings.Builder
	in := false
	for _, r := range text {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return locales.UTF16Len(html.UnescapeString(b.String()))
}

// checkLimits reports a text or keyboard Telegram would refuse.
func checkLimits(what, text string, rows [][]Button) error {
	if n := VisibleLen(text); n > MaxTextLen {
		return fmt.Errorf("%s: %w: %d characters, at most %d", what, ErrTooBig, n, MaxTextLen)
	}
	n := 0
	for _, row := range rows {
		n += len(row)
	}
	if n > MaxButtons {
		return fmt.Errorf("%s: %w: %d buttons, at most %d", what, ErrTooBig, n, MaxButtons)
	}
	return nil
}
