package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"shopbot/bot/botapitest/types"
)

// UTF16Len counts s in UTF-16 code units, the unit Telegram uses for text
// limits and entity offsets.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += l
		} else {
			n++
		}
	}
	return n
}

// htmlTags maps the tags Telegram's HTML parse mode supports to the entity
// type they produce.
var htmlTags = map[string]string{
	"b": "bold", "strong": "bold",
	"i": "italic", "em": "italic",
	"u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough",
	"span": "spoiler", "tg-spoiler": "spoiler",
	"a":          "text_link",
	"code":       "code",
	"pre":        "pre",
	"blockquote": "blockquote",
	"tg-emoji":   "custom_emoji",
}

type openTag struct {
	name   string
	offset int // UTF-16 offset in the plain text where the tag opened
	seq    int // order of opening, to sort nested entities outer first
	entity types.MessageEntity
}

type seqEntity struct {
	types.MessageEntity
	seq int
}

// ParseHTML parses text in Telegram's HTML parse mode. It returns the plain
// text and the entities Telegram would produce, or an error worded like
// Telegram's "can't parse entities" answers. It is stricter than Telegram in
// one way: a bare '>' or an '&' that starts no entity is an error, as the
// Bot API documentation demands escaping them.
func ParseHTML(s string) (string, []types.MessageEntity, error) {
	var (
		plain    strings.Builder
		off      int
		stack    []openTag
		entities []seqEntity
		opened   int
	)
	for i := 0; i < len(s); {
		switch ch := s[i]; ch {
		case '<':
			if i+1 >= len(s) || !(s[i+1] == '/' || isASCIILetter(s[i+1])) {
				return "", nil, fmt.Errorf("unescaped '<' at byte offset %d (write &lt;)", i)
			}
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", nil, fmt.Errorf("can't find end of the tag starting at byte offset %d", i)
			}
			tag := s[i+1 : i+end]
			if closing, ok := strings.CutPrefix(tag, "/"); ok {
				name := strings.ToLower(strings.TrimSpace(closing))
				if len(stack) == 0 {
					return "", nil, fmt.Errorf("unexpected end tag </%s> at byte offset %d", name, i)
				}
				top := stack[len(stack)-1]
				if name != top.name {
					return "", nil, fmt.Errorf("unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top.name, name)
				}
				stack = stack[:len(stack)-1]
				e := top.entity
				e.Offset, e.Length = top.offset, off-top.offset
				if e.Length > 0 && e.Type != "" {
					entities = append(entities, seqEntity{e, top.seq})
				}
			} else {
				ot, err := parseStartTag(tag, i, stack)
				if err != nil {
					return "", nil, err
				}
				ot.offset, ot.seq = off, opened
				opened++
				stack = append(stack, ot)
			}
			i += end + 1
		case '>':
			return "", nil, fmt.Errorf("character '>' at byte offset %d must be escaped as &gt;", i)
		case '&':
			r, n, err := parseHTMLEntity(s[i:])
			if err != nil {
				return "", nil, fmt.Errorf("%v at byte offset %d", err, i)
			}
			plain.WriteRune(r)
			off += utf16.RuneLen(r)
			i += n
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			plain.WriteString(s[i : i+n])
			if l := utf16.RuneLen(r); l > 0 {
				off += l
			} else {
				off++
			}
			i += n
		}
	}
	if len(stack) > 0 {
		return "", nil, fmt.Errorf("can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	sort.Slice(entities, func(a, b int) bool {
		ea, eb := entities[a], entities[b]
		if ea.Offset != eb.Offset {
			return ea.Offset < eb.Offset
		}
		if ea.Length != eb.Length {
			return ea.Length > eb.Length
		}
		return ea.seq < eb.seq
	})
	var out []types.MessageEntity
	for _, e := range entities {
		out = append(out, e.MessageEntity)
	}
	return plain.String(), out, nil
}

func parseStartTag(tag string, at int, stack []openTag) (openTag, error) {
	name, rest, _ := strings.Cut(tag, " ")
	if i := strings.IndexAny(name, "\t\n\r"); i >= 0 {
		name, rest = name[:i], name[i:]+" "+rest
	}
	name = strings.ToLower(name)
	typ, ok := htmlTags[name]
	if !ok {
		return openTag{}, fmt.Errorf("unsupported start tag \"%s\" at byte offset %d", name, at)
	}
	attrs, err := parseAttrs(rest)
	if err != nil {
		return openTag{}, fmt.Errorf("%v in tag \"%s\" at byte offset %d", err, name, at)
	}
	e := types.MessageEntity{Type: typ}
	switch name {
	case "span":
		if attrs["class"] != "tg-spoiler" {
			return openTag{}, fmt.Errorf("tag \"span\" must have class \"tg-spoiler\" at byte offset %d", at)
		}
	case "a":
		href, ok := attrs["href"]
		if !ok || href == "" {
			return openTag{}, fmt.Errorf("tag \"a\" at byte offset %d needs a non-empty href", at)
		}
		e.URL = href
	case "tg-emoji":
		id := attrs["emoji-id"]
		if id == "" {
			return openTag{}, fmt.Errorf("tag \"tg-emoji\" at byte offset %d needs an emoji-id", at)
		}
		e.CustomEmojiID = id
	case "blockquote":
		if _, ok := attrs["expandable"]; ok {
			e.Type = "expandable_blockquote"
		}
	case "code":
		if len(stack) > 0 && stack[len(stack)-1].name == "pre" {
			// <pre><code class="language-go"> sets the pre block's language.
			if lang, ok := strings.CutPrefix(attrs["class"], "language-"); ok {
				stack[len(stack)-1].entity.Language = lang
			}
			e.Type = "" // merged into the enclosing pre entity
		}
	}
	return openTag{name: name, entity: e}, nil
}

// parseAttrs parses name="value", name='value', name=value and bare names.
func parseAttrs(s string) (map[string]string, error) {
	attrs := map[string]string{}
	s = strings.TrimSpace(s)
	for s != "" {
		i := strings.IndexAny(s, "= \t\r\n")
		if i < 0 {
			attrs[strings.ToLower(s)] = ""
			break
		}
		name := strings.ToLower(s[:i])
		s = strings.TrimLeft(s[i:], " \t\r\n")
		if !strings.HasPrefix(s, "=") {
			attrs[name] = ""
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\r\n")
		var val string
		if s != "" && (s[0] == '"' || s[0] == '\'') {
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return nil, fmt.Errorf("unclosed value of attribute %q", name)
			}
			val, s = s[1:end+1], s[end+2:]
		} else {
			end := strings.IndexAny(s, " \t\r\n")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		dec, err := unescapeHTML(val)
		if err != nil {
			return nil, err
		}
		attrs[name] = dec
		s = strings.TrimLeft(s, " \t\r\n")
	}
	return attrs, nil
}

func unescapeHTML(s string) (string, error) {
	if !strings.Contains(s, "&") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '&' {
			b.WriteByte(s[i])
			i++
			continue
		}
		r, n, err := parseHTMLEntity(s[i:])
		if err != nil {
			return "", err
		}
		b.WriteRune(r)
		i += n
	}
	return b.String(), nil
}

// parseHTMLEntity decodes the entity at the start of s: the four named
// entities Telegram supports or a numeric one.
func parseHTMLEntity(s string) (rune, int, error) {
	end := strings.IndexByte(s, ';')
	if end < 0 || end > 12 {
		return 0, 0, fmt.Errorf("unescaped '&' (write &amp;)")
	}
	name := s[1:end]
	switch name {
	case "lt":
		return '<', end + 1, nil
	case "gt":
		return '>', end + 1, nil
	case "amp":
		return '&', end + 1, nil
	case "quot":
		return '"', end + 1, nil
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(strings.ToLower(num), "x"); ok {
			num, base = hex, 16
		}
		n, err := strconv.ParseUint(num, base, 32)
		if err == nil && utf8.ValidRune(rune(n)) {
			return rune(n), end + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("unsupported HTML entity \"&%s;\" (Telegram knows &lt; &gt; &amp; &quot; and numeric ones)", name)
}

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
