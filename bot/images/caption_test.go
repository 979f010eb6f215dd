package images

import (
	"strings"
	"testing"
)

// CaptionLen counts what Telegram counts: the text after HTML parsing, in
// UTF-16 code units.
func TestCaptionLen(t *testing.T) {
	for _, c := range []struct {
		html string
		want int
	}{
		{"", 0},
		{"plain", 5},
		{"<b>bold</b> and <i>it</i>", 11},
		{`<a href="https://t.me/x?a=1&amp;b=2">link</a>`, 4},
		{"Tom &amp; Jerry &lt;3", 14},
		{"⭐ 5", 3},
		{"😀", 2},
		{"a < b", 5}, // an unescaped < without > counts as text
		{"AT&T", 4},
		{strings.Repeat("<b>x</b>", 1025), 1025},
	} {
		if got := CaptionLen(c.html); got != c.want {
			t.Errorf("CaptionLen(%.40q) = %d, want %d", c.html, got, c.want)
		}
	}
}
