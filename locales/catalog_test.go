package locales

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// TestEmbeddedCatalogsParse proves the lazy loader behind T and N never
// panics: the embedded files parse.
func TestEmbeddedCatalogsParse(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatalf("Check() = %v", err)
	}
	if _, err := loadCatalog(embedded); err != nil {
		t.Fatalf("loadCatalog(embedded) = %v", err)
	}
}

// initialKeys are the keys the foundation screens rely on.
var initialKeys = []string{
	"menu.title", "menu.help_hint",
	"line.topup", "line.stars", "line.premium", "line.services",
	"line.gifts", "line.giftcards", "line.keys", "line.games", "line.soon",
	"btn.back", "btn.cancel", "btn.menu", "btn.next", "btn.prev", "btn.confirm",
	"btn.edit", "btn.language", "btn.orders", "btn.help", "btn.retry",
	"help.text", "cancel.done", "cancel.nothing", "lang.choose", "lang.set",
	"err.outdated", "err.internal", "err.unknown_command", "err.rate_limited",
	"err.text_expected", "page.indicator", "paysupport.text",
	"count.codes", "count.stars", "count.months", "count.items",
	"count.seconds", "count.minutes",
}

func TestInitialKeys(t *testing.T) {
	have := Keys(En)
	for _, k := range initialKeys {
		if _, ok := slices.BinarySearch(have, k); !ok {
			t.Errorf("en: key %q is missing", k)
		}
	}
	if Keys("de") != nil {
		t.Error(`Keys("de") should be nil`)
	}
}

var placeholderRE = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// placeholders returns the sorted set of {names} used anywhere in e.
func placeholders(e entry) []string {
	set := map[string]bool{}
	texts := []string{e.text}
	if e.forms != nil {
		texts = slices.Collect(maps.Values(e.forms))
	}
	for _, s := range texts {
		for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
			set[m[1]] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// TestEveryKeyInEveryLocale names every key missing in a language (or
// present only in ru/uk), every plural key whose forms do not match its
// language's categories, and every key whose {placeholders} differ from
// English.
func TestEveryKeyInEveryLocale(t *testing.T) {
	c := defaultCatalog()
	en := c.msgs[En]
	for _, lang := range Supported() {
		msgs := c.msgs[lang]
		for _, key := range slices.Sorted(maps.Keys(en)) {
			e, ok := msgs[key]
			if !ok {
				t.Errorf("%s: key %q is missing", lang, key)
				continue
			}
			enPlural, plural := en[key].forms != nil, e.forms != nil
			if enPlural != plural {
				t.Errorf("%s: key %q is plural in en: %v, here: %v", lang, key, enPlural, plural)
			}
			if got, want := placeholders(e), placeholders(en[key]); !slices.Equal(got, want) {
				t.Errorf("%s: key %q has placeholders %v, en has %v", lang, key, got, want)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(msgs)) {
			if _, ok := en[key]; !ok {
				t.Errorf("%s: key %q is not in en", lang, key)
			}
			e := msgs[key]
			if e.forms == nil {
				continue
			}
			want := pluralForms(lang)
			for _, form := range want {
				if _, ok := e.forms[form]; !ok {
					t.Errorf("%s: plural key %q lacks form %q", lang, key, form)
				}
			}
			for form := range e.forms {
				if !slices.Contains(want, form) {
					t.Errorf("%s: plural key %q has form %q, which %s does not use", lang, key, form, lang)
				}
			}
			// In ru and uk "one" also covers 21, 31, ...: the count must
			// be in every form.
			if lang == Ru || lang == Uk {
				for form, s := range e.forms {
					if !strings.Contains(s, "{n}") {
						t.Errorf("%s: plural key %q form %q does not show {n}", lang, key, form)
					}
				}
			}
		}
	}
}

// texts returns every message text of lang, named "key" or "key[form]".
func texts(lang Lang) map[string]string {
	out := map[string]string{}
	for key, e := range defaultCatalog().msgs[lang] {
		if e.forms == nil {
			out[key] = e.text
			continue
		}
		for form, s := range e.forms {
			out[key+"["+form+"]"] = s
		}
	}
	return out
}

// TestTextsAreTelegramHTML checks that every text is well-formed Telegram
// HTML (allowed tags, balanced, & and < only in entities and tags), not
// blank, not padded and within Telegram's 4096-character message limit.
func TestTextsAreTelegramHTML(t *testing.T) {
	for _, lang := range Supported() {
		for name, s := range texts(lang) {
			if strings.TrimSpace(s) == "" || strings.TrimSpace(s) != s {
				t.Errorf("%s: %s is blank or has surrounding spaces: %q", lang, name, s)
			}
			if n := utf8.RuneCountInString(s); n > 4096 {
				t.Errorf("%s: %s is %d characters, over 4096", lang, name, n)
			}
			if err := checkTelegramHTML(s); err != nil {
				t.Errorf("%s: %s: %v", lang, name, err)
			}
		}
	}
}

// TestPlainTexts checks texts that are sent without parse mode or as button
// labels: callback query answers (at most 200 characters) and buttons (one
// line, no markup).
func TestPlainTexts(t *testing.T) {
	for _, lang := range Supported() {
		for _, s := range []string{T(lang, "err.outdated"), N(lang, "err.rate_limited", 9999)} {
			if n := utf8.RuneCountInString(s); n > 200 {
				t.Errorf("%s: callback answer %q is %d characters, over 200", lang, s, n)
			}
			if strings.ContainsAny(s, "<>&") {
				t.Errorf("%s: callback answer %q has markup", lang, s)
			}
		}
		for _, key := range Keys(lang) {
			if !strings.HasPrefix(key, "btn.") && !strings.HasPrefix(key, "line.") || key == "line.soon" {
				continue
			}
			s := T(lang, key)
			if strings.ContainsAny(s, "<>&\n") {
				t.Errorf("%s: button %q = %q has markup or a line break", lang, key, s)
			}
		}
	}
}

var telegramTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "code": true, "pre": true, "a": true,
	"tg-spoiler": true, "span": true, "tg-emoji": true, "blockquote": true,
}

var entityRE = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);`)

// checkTelegramHTML reports the first problem Telegram's HTML parse mode
// would reject in s.
func checkTelegramHTML(s string) error {
	var open []string
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			if !entityRE.MatchString(s[i:]) {
				return fmt.Errorf("bare & at byte %d", i)
			}
		case '>':
			return fmt.Errorf("bare > at byte %d", i)
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return fmt.Errorf("unclosed tag at byte %d", i)
			}
			tag := s[i+1 : i+end]
			i += end
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(open) == 0 || open[len(open)-1] != name {
					return fmt.Errorf("</%s> closes nothing open (open: %v)", name, open)
				}
				open = open[:len(open)-1]
				continue
			}
			name, _, _ := strings.Cut(tag, " ")
			if !telegramTags[name] {
				return fmt.Errorf("tag <%s> is not supported by Telegram", name)
			}
			open = append(open, name)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("unclosed tags %v", open)
	}
	return nil
}

func TestCheckTelegramHTML(t *testing.T) {
	for s, ok := range map[string]bool{
		"<b>x</b> &amp; <i>y</i>": true,
		"<b><i>x</i></b>":         true,
		"&#8364; &#x20AC;":        true,
		"a & b":                   false,
		"a < b":                   false,
		"a > b":                   false,
		"<b>x":                    false,
		"<b>x</i>":                false,
		"<div>x</div>":            false,
	} {
		if err := checkTelegramHTML(s); (err == nil) != ok {
			t.Errorf("checkTelegramHTML(%q) = %v, want ok %v", s, err, ok)
		}
	}
}

// testCatalog builds a small catalog where some keys are missing in ru/uk.
func testCatalog(t *testing.T) *catalog {
	t.Helper()
	c, err := loadCatalog(fstest.MapFS{
		"en.json": {Data: []byte(`{
			"a.hello": "Hello, {name}!",
			"a.only_en": "Only English: {v}",
			"a.count": {"one": "{n} thing", "other": "{n} things"},
			"a.value": "[{v}]",
			"a.two": "{a} and {b}",
			"a.braces": "{ not } {} {a-b} {open",
			"a.form_gap": {"one": "one thing", "other": "{n} things"}
		}`)},
		"ru.json": {Data: []byte(`{
			"a.hello": "Привет, {name}!",
			"a.count": {"one": "{n} штука", "few": "{n} штуки", "many": "{n} штук", "other": "{n} штуки"},
			"a.value": "[{v}]",
			"a.form_gap": {"other": "{n} штук(и)"}
		}`)},
		"uk.json": {Data: []byte(`{}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTFallback(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		name string
		lang Lang
		key  string
		args []any
		want string
	}{
		{"own language", Ru, "a.hello", []any{"name", "Оля"}, "Привет, Оля!"},
		{"english", En, "a.hello", []any{"name", "Ann"}, "Hello, Ann!"},
		{"missing in ru uses en, formatted as en", Ru, "a.only_en", []any{"v", 12345}, "Only English: 12,345"},
		{"missing in uk uses en", Uk, "a.hello", []any{"name", "Ann"}, "Hello, Ann!"},
		{"unsupported language uses en", "de", "a.hello", []any{"name", "Ann"}, "Hello, Ann!"},
		{"empty language uses en", "", "a.hello", []any{"name", "Ann"}, "Hello, Ann!"},
		{"missing everywhere returns the key", Ru, "no.such", []any{"v", 1}, "no.such"},
		{"missing in en returns the key", En, "no.such", nil, "no.such"},
		{"plural key in T uses other", Ru, "a.count", []any{"n", 3}, "3 штуки"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.t(tt.lang, tt.key, tt.args); got != tt.want {
				t.Errorf("t(%s, %q, %v) = %q, want %q", tt.lang, tt.key, tt.args, got, tt.want)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	c := testCatalog(t)
	d := decimal.RequireFromString("-1234567.5")
	var nilDec *decimal.Decimal
	tests := []struct {
		name string
		lang Lang
		key  string
		args []any
		want string
	}{
		{"int grouped en", En, "a.value", []any{"v", 1234567}, "[1,234,567]"},
		{"int grouped ru", Ru, "a.value", []any{"v", 1234567}, "[1" + nb + "234" + nb + "567]"},
		{"int64", Ru, "a.value", []any{"v", int64(-12345)}, "[-12" + nb + "345]"},
		{"int32", En, "a.value", []any{"v", int32(5000)}, "[5,000]"},
		{"uint64 max", En, "a.value", []any{"v", uint64(math.MaxUint64)}, "[18,446,744,073,709,551,615]"},
		{"uint8", En, "a.value", []any{"v", uint8(200)}, "[200]"},
		{"decimal plain en", En, "a.value", []any{"v", d}, "[-1,234,567.5]"},
		{"decimal plain ru", Ru, "a.value", []any{"v", d}, "[-1" + nb + "234" + nb + "567,5]"},
		{"decimal drops trailing zeros", Ru, "a.value", []any{"v", decimal.RequireFromString("0.0100")}, "[0,01]"},
		{"decimal integer", En, "a.value", []any{"v", decimal.RequireFromString("1500.00")}, "[1,500]"},
		{"decimal pointer", En, "a.value", []any{"v", &d}, "[-1,234,567.5]"},
		{"nil decimal pointer", En, "a.value", []any{"v", nilDec}, "[]"},
		{"nil", En, "a.value", []any{"v", nil}, "[]"},
		{"string as is, not escaped", En, "a.value", []any{"v", "<b>&"}, "[<b>&]"},
		{"other via fmt", En, "a.value", []any{"v", true}, "[true]"},
		{"float via fmt, no grouping", En, "a.value", []any{"v", 1234.5}, "[1234.5]"},
		{"Lang via fmt", En, "a.value", []any{"v", Uk}, "[uk]"},
		{"two values", En, "a.two", []any{"b", "B", "a", "A"}, "A and B"},
		{"missing value stays", En, "a.two", []any{"a", "A"}, "A and {b}"},
		{"no args", En, "a.two", nil, "{a} and {b}"},
		{"odd trailing name ignored", En, "a.two", []any{"a", "A", "b"}, "A and {b}"},
		{"first pair wins", En, "a.value", []any{"v", 1, "v", 2}, "[1]"},
		{"non-string name via fmt", En, "a.value", []any{Lang("v"), "x"}, "[x]"},
		{"value not expanded again", En, "a.two", []any{"a", "{b}", "b", "B"}, "{b} and B"},
		{"non-placeholders untouched", En, "a.braces", []any{"a", 1, "open", 2}, "{ not } {} {a-b} {open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.t(tt.lang, tt.key, tt.args); got != tt.want {
				t.Errorf("t(%s, %q, %v) = %q, want %q", tt.lang, tt.key, tt.args, got, tt.want)
			}
		})
	}
}

func TestNFallback(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		name string
		lang Lang
		key  string
		n    int64
		args []any
		want string
	}{
		{"ru one", Ru, "a.count", 21, nil, "21 штука"},
		{"ru few", Ru, "a.count", 3, nil, "3 штуки"},
		{"ru many", Ru, "a.count", 11, nil, "11 штук"},
		{"ru grouped count", Ru, "a.count", 10000, nil, "10" + nb + "000 штук"},
		{"uk missing uses en rules", Uk, "a.count", 21, nil, "21 things"},
		{"en one", En, "a.count", 1, nil, "1 thing"},
		{"en negative one", En, "a.count", -1, nil, "-1 thing"},
		{"en other", En, "a.count", 1000, nil, "1,000 things"},
		{"missing form falls back to other", Ru, "a.form_gap", 1, nil, "1 штук(и)"},
		{"form without {n}", En, "a.form_gap", 1, nil, "one thing"},
		{"caller n wins", En, "a.count", 5, []any{"n", "five"}, "five things"},
		{"odd args do not shift n", En, "a.count", 5, []any{"x"}, "5 things"},
		{"plain key in N", Ru, "a.hello", 5, []any{"name", "Оля"}, "Привет, Оля!"},
		{"missing key", Ru, "no.such", 5, nil, "no.such"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.n(tt.lang, tt.key, tt.n, tt.args); got != tt.want {
				t.Errorf("n(%s, %q, %d, %v) = %q, want %q", tt.lang, tt.key, tt.n, tt.args, got, tt.want)
			}
		})
	}
}

func TestNDoesNotModifyArgs(t *testing.T) {
	c := testCatalog(t)
	args := make([]any, 2, 8)
	args[0], args[1] = "x", 1
	c.n(En, "a.count", 2, args)
	if full := args[:4]; full[2] != nil || full[3] != nil {
		t.Errorf("n wrote into the caller's backing array: %v", full)
	}
}

func TestPublicT(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{T(Ru, "lang.set", "language", LanguageName(Ru)), "✅ Язык изменён: Русский."},
		{T(Uk, "lang.set", "language", LanguageName(Uk)), "✅ Мову змінено: Українська."},
		{T(En, "lang.set", "language", LanguageName(En)), "✅ Language set to English."},
		{T(En, "page.indicator", "page", 2, "pages", 10), "2/10"},
		{T(Ru, "line.soon", "line", T(Ru, "line.keys")), "<b>🔑 Ключи для игр</b>\n\nЭтот раздел скоро откроется. Загляните чуть позже!"},
		{T(Uk, "no.such.key"), "no.such.key"},
		{T("xx", "btn.back"), "⬅️ Back"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestEscape(t *testing.T) {
	tests := map[string]string{
		"":                       "",
		"plain":                  "plain",
		`<b>"Tom" & 'Jerry'</b>`: "&lt;b&gt;&quot;Tom&quot; &amp; 'Jerry'&lt;/b&gt;",
		"&amp;":                  "&amp;amp;",
		"Привет <3":              "Привет &lt;3",
	}
	for in, want := range tests {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		if err := checkTelegramHTML(Escape(in)); err != nil {
			t.Errorf("Escape(%q) is not safe HTML: %v", in, err)
		}
	}
}

func TestParseCatalogErrors(t *testing.T) {
	tests := map[string]string{
		"not an object":     `[]`,
		"number value":      `{"a.b": 1}`,
		"array value":       `{"a.b": ["x"]}`,
		"number form":       `{"a.b": {"one": 1}}`,
		"nested form":       `{"a.b": {"one": {"x": "y"}}}`,
		"unknown form":      `{"a.b": {"single": "x"}}`,
		"empty plural":      `{"a.b": {}}`,
		"duplicate key":     `{"a.b": "x", "a.b": "y"}`,
		"duplicate form":    `{"a.b": {"one": "x", "one": "y"}}`,
		"undotted key":      `{"menu": "x"}`,
		"upper-case key":    `{"Menu.title": "x"}`,
		"empty segment":     `{"menu..title": "x"}`,
		"trailing data":     `{} {}`,
		"truncated":         `{"a.b": "x"`,
		"invalid json":      `{"a.b": x}`,
		"empty input":       ``,
		"null value":        `{"a.b": null}`,
		"unterminated form": `{"a.b": {"one": "x"`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := parseCatalog([]byte(in)); err == nil {
				t.Errorf("parseCatalog(%s) = nil error", in)
			}
		})
	}
	if _, err := parseCatalog([]byte(`{"a.b": "x", "a.c_1": {"one": "y", "other": "z"}}`)); err != nil {
		t.Errorf("valid catalog: %v", err)
	}
}

func TestLoadCatalogMissingFile(t *testing.T) {
	_, err := loadCatalog(fstest.MapFS{"en.json": {Data: []byte(`{}`)}, "ru.json": {Data: []byte(`{}`)}})
	if err == nil || !strings.Contains(err.Error(), "uk.json") {
		t.Errorf("loadCatalog without uk.json = %v, want an error naming uk.json", err)
	}
	_, err = loadCatalog(fstest.MapFS{
		"en.json": {Data: []byte(`{}`)}, "ru.json": {Data: []byte(`{"x": "y"}`)}, "uk.json": {Data: []byte(`{}`)},
	})
	if err == nil || !strings.Contains(err.Error(), "ru.json") {
		t.Errorf("loadCatalog with a bad ru.json = %v, want an error naming ru.json", err)
	}
}

func TestLoadCatalogParts(t *testing.T) {
	fsys := fstest.MapFS{
		"en.json": {Data: []byte(`{"a.b": "x"}`)}, "en.admin.json": {Data: []byte(`{"adm.c": "y"}`)},
		"ru.json": {Data: []byte(`{"a.b": "x"}`)}, "uk.json": {Data: []byte(`{"a.b": "x"}`)},
	}
	c, err := loadCatalog(fsys)
	if err != nil {
		t.Fatalf("loadCatalog with a part: %v", err)
	}
	if got := c.t(En, "adm.c", nil); got != "y" {
		t.Errorf("key from en.admin.json = %q, want y", got)
	}
	fsys["en.chat.json"] = &fstest.MapFile{Data: []byte(`{"a.b": "again"}`)}
	if _, err := loadCatalog(fsys); err == nil || !strings.Contains(err.Error(), "en.chat.json") {
		t.Errorf("loadCatalog with a key defined twice = %v, want an error naming en.chat.json", err)
	}
}

// TestConcurrentUse runs the first load and lookups from many goroutines;
// with -race it proves the catalog is safe to share.
func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			lang := Supported()[i%3]
			_ = T(lang, "line.soon", "line", T(lang, "line.stars"))
			_ = N(lang, "count.codes", int64(i))
			_ = Keys(lang)
			_ = Money(lang, decimal.NewFromInt(int64(i)))
		})
	}
	wg.Wait()
}

func BenchmarkT(b *testing.B) {
	for b.Loop() {
		_ = T(Ru, "line.soon", "line", "Gift cards")
	}
}

func BenchmarkN(b *testing.B) {
	for b.Loop() {
		_ = N(Uk, "count.stars", 1250)
	}
}

func BenchmarkMoney(b *testing.B) {
	d := decimal.RequireFromString("1234.5")
	for b.Loop() {
		_ = Money(Ru, d)
	}
}

func TestIdentifiersAreNotGrouped(t *testing.T) {
	c, err := parseCatalog([]byte(`{"t.x": "#{id} #{number} #{order} {user} {chat_id} {n}"}`))
	if err != nil {
		t.Fatal(err)
	}
	cat := &catalog{msgs: map[Lang]map[string]entry{En: c}}
	got := cat.t(En, "t.x", []any{"id", int64(1001), "number", 123456, "order", int64(20001), "user", int64(123456789), "chat_id", int64(5001), "n", 12345})
	if want := "#1001 #123456 #20001 123456789 5001 12,345"; got != want {
		t.Errorf("identifiers = %q, want %q", got, want)
	}
}

// A delivered order has one name: the buyer's /orders says the word the
// admin's /order says.
func TestDeliveredIsOneWordForBuyerAndAdmin(t *testing.T) {
	for _, l := range Supported() {
		if b, a := T(l, "order.status.delivered"), T(l, "ao.status.delivered"); b != a {
			t.Errorf("%s: the buyer reads %q, the admin %q", l, b, a)
		}
	}
}
