package locales

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/shopspring/decimal"
)

//go:embed *.json
var embedded embed.FS

// loadDefault parses the embedded catalogs once; the result is never
// modified afterwards, so it is safe for concurrent use.
var loadDefault = sync.OnceValues(func() (*catalog, error) {
	return loadCatalog(embedded)
})

// defaultCatalog returns the embedded catalogs and panics if they do not
// parse (a test proves they do; Check reports the error without panicking).
func defaultCatalog() *catalog {
	c, err := loadDefault()
	if err != nil {
		panic("locales: " + err.Error())
	}
	return c
}

// Check parses the embedded catalogs and returns the error that T and N
// would otherwise panic with. The program may call it once at start.
func Check() error {
	_, err := loadDefault()
	return err
}

// T returns the message key in lang with its placeholders filled in.
//
// args are name/value pairs ("line", "Gift cards", "page", 2); every
// "{name}" in the text is replaced by its value, formatted for the language
// of the text: int and uint types with digit grouping (Number), a
// decimal.Decimal as a plain locale number with the fraction digits it
// needs, trailing zeros dropped ("1 234,5"; use Decimal or Money for a fixed
// number of places), a string as is, nil as nothing, anything else with
// fmt.Sprint. Placeholders without a value stay as written; a trailing name
// without a value is ignored. Values are not HTML-escaped: pass user input
// through Escape first when the message is sent as Telegram HTML.
//
// A key missing in lang (or an unsupported lang) falls back to English, and
// a key missing in English returns the key itself; T never panics on
// lookups. Called with a plural key, T uses its "other" form.
func T(lang Lang, key string, args ...any) string {
	return defaultCatalog().t(lang, key, args)
}

// N returns the plural message key in lang for the count n: the CLDR form
// of n (en: one, other; ru and uk: one, few, many) is chosen, and "{n}" is
// the count formatted with Number. Other placeholders work as in T (a value
// named "n" in args overrides the count's text), and so does the fallback
// to English (then with English plural rules) and to the key itself. A form
// missing from the catalog falls back to "other"; a plain string key is used
// as is for every n.
func N(lang Lang, key string, n int64, args ...any) string {
	return defaultCatalog().n(lang, key, n, args)
}

// Keys returns the sorted keys defined in lang's own catalog (without the
// English fallback), or nil for an unsupported language.
func Keys(lang Lang) []string {
	m := defaultCatalog().msgs[lang]
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// Escape makes s safe to embed in a Telegram HTML message (parse_mode
// HTML): it replaces &, <, > and " with their entities.
func Escape(s string) string {
	return htmlEscaper.Replace(s)
}

// entry is one message: a plain text, or plural forms by CLDR category.
type entry struct {
	text  string
	forms map[string]string // nil for a plain message
}

// pick returns the text for the plural category form ("other" when the
// form is missing); a plain message ignores form.
func (e entry) pick(form string) (string, bool) {
	if e.forms == nil {
		return e.text, true
	}
	if s, ok := e.forms[form]; ok {
		return s, true
	}
	s, ok := e.forms[formOther]
	return s, ok
}

// catalog holds every language's messages; it is read-only after load.
type catalog struct {
	msgs map[Lang]map[string]entry
}

func (c *catalog) t(lang Lang, key string, args []any) string {
	text, textLang, ok := c.find(lang, key, nil)
	if !ok {
		return key
	}
	return fill(textLang, text, args)
}

func (c *catalog) n(lang Lang, key string, n int64, args []any) string {
	text, textLang, ok := c.find(lang, key, &n)
	if !ok {
		return key
	}
	if len(args)%2 == 1 {
		args = args[:len(args)-1]
	}
	// The caller's pairs come first, so a caller's "n" wins.
	args = append(args[:len(args):len(args)], "n", n)
	return fill(textLang, text, args)
}

// find looks key up in lang, then in English. For a count it picks the
// plural form by the rules of the language the text was found in. It
// returns that language with the text.
func (c *catalog) find(lang Lang, key string, count *int64) (string, Lang, bool) {
	for _, l := range [...]Lang{lang, En} {
		e, ok := c.msgs[l][key]
		if !ok {
			continue
		}
		form := formOther
		if count != nil {
			form = pluralForm(l, *count)
		}
		if s, ok := e.pick(form); ok {
			return s, l, true
		}
	}
	return "", "", false
}

// fill replaces the {name} placeholders in text with values from the
// name/value pairs in args, formatted for lang. Text produced by a value is
// not scanned again.
func fill(lang Lang, text string, args []any) string {
	if len(args) < 2 || !strings.Contains(text, "{") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 16)
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i+1:], '}')
		if j < 0 {
			break
		}
		name := text[i+1 : i+1+j]
		if !isPlaceholderName(name) {
			b.WriteString(text[:i+1])
			text = text[i+1:]
			continue
		}
		b.WriteString(text[:i])
		if v, ok := argValue(args, name); ok {
			b.WriteString(formatArg(lang, name, v))
		} else {
			b.WriteString(text[i : i+2+j])
		}
		text = text[i+2+j:]
	}
	b.WriteString(text)
	return b.String()
}

// argValue returns the value paired with name, the first pair winning.
func argValue(args []any, name string) (any, bool) {
	for i := 0; i+1 < len(args); i += 2 {
		k, ok := args[i].(string)
		if !ok {
			k = fmt.Sprint(args[i])
		}
		if k == name {
			return args[i+1], true
		}
	}
	return nil, false
}

// identifierNames are placeholders that name something by number (an
// order, an upstream order, a user): their integers are written as plain
// digits, never grouped like quantities ("#1001", not "#1,001").
var identifierNames = map[string]bool{"id": true, "number": true, "order": true, "user": true}

// formatArg formats the value of placeholder name.
func formatArg(lang Lang, name string, v any) string {
	if identifierNames[name] || strings.HasSuffix(name, "_id") {
		switch v := v.(type) {
		case int:
			return strconv.Itoa(v)
		case int64:
			return strconv.FormatInt(v, 10)
		case int32:
			return strconv.FormatInt(int64(v), 10)
		case uint64:
			return strconv.FormatUint(v, 10)
		}
	}
	return formatValue(lang, v)
}

func formatValue(lang Lang, v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int:
		return Number(lang, int64(v))
	case int8:
		return Number(lang, int64(v))
	case int16:
		return Number(lang, int64(v))
	case int32:
		return Number(lang, int64(v))
	case int64:
		return Number(lang, v)
	case uint:
		return localizeNumeral(lang, strconv.FormatUint(uint64(v), 10))
	case uint8:
		return localizeNumeral(lang, strconv.FormatUint(uint64(v), 10))
	case uint16:
		return localizeNumeral(lang, strconv.FormatUint(uint64(v), 10))
	case uint32:
		return localizeNumeral(lang, strconv.FormatUint(uint64(v), 10))
	case uint64:
		return localizeNumeral(lang, strconv.FormatUint(v, 10))
	case decimal.Decimal:
		return localizeNumeral(lang, v.String())
	case *decimal.Decimal:
		if v == nil {
			return ""
		}
		return localizeNumeral(lang, v.String())
	}
	return fmt.Sprint(v)
}

// isPlaceholderName reports whether s can name a placeholder: ASCII
// letters, digits and underscores, at least one.
func isPlaceholderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isKeyName reports whether s is a dotted key such as "menu.title":
// at least two non-empty segments of lowercase ASCII letters, digits and
// underscores.
func isKeyName(s string) bool {
	segs := strings.Split(s, ".")
	if len(segs) < 2 {
		return false
	}
	for _, seg := range segs {
		if seg == "" {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// loadCatalog reads and parses <lang>.json for every supported language,
// plus any <lang>.<part>.json beside it (one part per area of the shop, for
// example en.admin.json), merged into one catalog. A key defined twice,
// in one file or across parts, is an error.
func loadCatalog(fsys fs.FS) (*catalog, error) {
	c := &catalog{msgs: make(map[Lang]map[string]entry)}
	for _, l := range Supported() {
		name := string(l) + ".json"
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read catalog: %w", err)
		}
		m, err := parseCatalog(data)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		parts, err := fs.Glob(fsys, string(l)+".*.json")
		if err != nil {
			return nil, fmt.Errorf("list catalog parts: %w", err)
		}
		for _, part := range parts {
			data, err := fs.ReadFile(fsys, part)
			if err != nil {
				return nil, fmt.Errorf("read catalog: %w", err)
			}
			pm, err := parseCatalog(data)
			if err != nil {
				return nil, fmt.Errorf("parse %s: %w", part, err)
			}
			for k, v := range pm {
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("parse %s: key %q is already defined", part, k)
				}
				m[k] = v
			}
		}
		c.msgs[l] = m
	}
	return c, nil
}

// parseCatalog parses one catalog: a JSON object of dotted keys to strings
// or to plural objects of CLDR category -> string. Duplicate keys or forms,
// unknown forms and any other shape are errors.
func parseCatalog(data []byte) (map[string]entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	msgs := make(map[string]entry)
	for dec.More() {
		key, err := readString(dec)
		if err != nil {
			return nil, err
		}
		if !isKeyName(key) {
			return nil, fmt.Errorf("key %q: want dotted lowercase segments like \"menu.title\"", key)
		}
		if _, dup := msgs[key]; dup {
			return nil, fmt.Errorf("key %q: defined twice", key)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		switch v := tok.(type) {
		case string:
			msgs[key] = entry{text: v}
		case json.Delim:
			if v != '{' {
				return nil, fmt.Errorf("key %q: want a string or a plural object", key)
			}
			forms, err := parseForms(dec)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", key, err)
			}
			msgs[key] = entry{forms: forms}
		default:
			return nil, fmt.Errorf("key %q: want a string or a plural object", key)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the catalog object")
	}
	return msgs, nil
}

// parseForms parses the rest of a plural object after its '{'.
func parseForms(dec *json.Decoder) (map[string]string, error) {
	forms := make(map[string]string)
	for dec.More() {
		form, err := readString(dec)
		if err != nil {
			return nil, err
		}
		if !cldrForms[form] {
			return nil, fmt.Errorf("unknown plural form %q", form)
		}
		if _, dup := forms[form]; dup {
			return nil, fmt.Errorf("plural form %q defined twice", form)
		}
		text, err := readString(dec)
		if err != nil {
			return nil, fmt.Errorf("plural form %q: %w", form, err)
		}
		forms[form] = text
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if len(forms) == 0 {
		return nil, errors.New("empty plural object")
	}
	return forms, nil
}

func readString(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want a string, got %v", tok)
	}
	return s, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}
