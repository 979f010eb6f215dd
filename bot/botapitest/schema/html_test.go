package schema

import (
	"reflect"
	"strings"
	"testing"

	"shopbot/bot/botapitest/types"
)

func TestParseHTML(t *testing.T) {
	cases := []struct {
		in       string
		plain    string
		entities []types.MessageEntity
		err      string
	}{
		{in: "plain", plain: "plain"},
		{in: "<b>bold</b> <i>it</i>", plain: "bold it", entities: []types.MessageEntity{{Type: "bold", Offset: 0, Length: 4}, {Type: "italic", Offset: 5, Length: 2}}},
		{in: "😀<u>x</u>", plain: "😀x", entities: []types.MessageEntity{{Type: "underline", Offset: 2, Length: 1}}},
		{in: `<a href="https://x.example/?a=1&amp;b=2">go</a>`, plain: "go", entities: []types.MessageEntity{{Type: "text_link", Length: 2, URL: "https://x.example/?a=1&b=2"}}},
		{in: `<pre><code class="language-go">x</code></pre>`, plain: "x", entities: []types.MessageEntity{{Type: "pre", Length: 1, Language: "go"}}},
		{in: `<B>x</B>`, plain: "x", entities: []types.MessageEntity{{Type: "bold", Length: 1}}},
		{in: `<b><i>x</i></b>`, plain: "x", entities: []types.MessageEntity{{Type: "bold", Length: 1}, {Type: "italic", Length: 1}}},
		{in: "&lt;&gt;&amp;&quot;&#39;&#x41;", plain: `<>&"'A`},
		{in: "<blockquote expandable>q</blockquote>", plain: "q", entities: []types.MessageEntity{{Type: "expandable_blockquote", Length: 1}}},
		{in: "<b>x", err: `can't find end tag corresponding to start tag "b"`},
		{in: "x</b>", err: "unexpected end tag </b>"},
		{in: "<b>x</i>", err: "unmatched end tag"},
		{in: "<div>x</div>", err: `unsupported start tag "div"`},
		{in: "<span>x</span>", err: `tag "span" must have class "tg-spoiler"`},
		{in: "<a>x</a>", err: "needs a non-empty href"},
		{in: "<tg-emoji>x</tg-emoji>", err: "needs an emoji-id"},
		{in: "a > b", err: "character '>' at byte offset 2 must be escaped"},
		{in: "a & b", err: "unescaped '&'"},
		{in: "&nbsp;", err: `unsupported HTML entity "&nbsp;"`},
		{in: "<b", err: "can't find end of the tag"},
		{in: "x <", err: "unescaped '<'"},
	}
	for _, tc := range cases {
		plain, ents, err := ParseHTML(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseHTML(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || plain != tc.plain || !reflect.DeepEqual(ents, tc.entities) {
			t.Errorf("ParseHTML(%q) = %q, %+v, %v; want %q, %+v", tc.in, plain, ents, err, tc.plain, tc.entities)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	for in, want := range map[string]int{"": 0, "abc": 3, "привет": 6, "😀": 2, "👍🏽": 4} {
		if got := UTF16Len(in); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", in, got, want)
		}
	}
}
