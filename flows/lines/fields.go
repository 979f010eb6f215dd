package lines

import (
	"context"
	"net/mail"
	"net/url"
	"shopbot/flows"
	"shopbot/flows/shop"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"shopbot/locales"
)

// maxFieldLen caps one buyer field answer, in characters.
const maxFieldLen = 256

// Field kinds: how a buyer's answer is checked before any quote. The upstream
// declares a top-up field's type; where it declares none, or only "text",
// the kind is read from the field's key or label. Anything else is free
// text (tolerant of types we do not know). fieldKind and checkField are the
// one place these rules live: every screen that asks a field checks it
// through them.
const (
	kindText   = ""
	kindNumber = "number" // digits only
	kindSelect = "select" // one of the upstream's options
	kindEmail  = "email"  // a plain address with a dot in the domain
	kindURL    = "url"    // an http(s) link to a real host
	kindPhone  = "phone"  // an international phone number
	kindID     = "id"     // a username or a named id (Riot ID): no spaces
)

// The shop's own fields, which no upstream declares: the questions the
// Stars, Premium, store top-up and store gift lines ask in the chat as
// steps of their own, asked by a form (the Mini App, appform.go) as
// fields. Their checks are those steps' checks.
const (
	kindUsername = "shop.username" // a Telegram @username (usernameAnswer)
	kindLogin    = "shop.login"    // a store login's shape (loginReason); the upstream's word at the quote
	kindAmount   = "shop.amount"   // an amount with at most 2 decimals (parseAmount)
	kindInvite   = "shop.invite"   // a store friend-invite link (inviteReason)
)

// maxNumberLen caps a number field (ids, not amounts), in digits.
const maxNumberLen = 32

// maxOptionButtons is how many options of a select field are offered as
// buttons; past that the buyer types one.
const maxOptionButtons = 24

// field is one buyer input an order needs: the upstream key, its label, how
// the answer is checked and, for a select, the allowed values.
type field struct {
	Key, Label string
	Kind       string
	Options    []string
}

// newField builds a field from what the upstream declares: its type (maybe
// empty or unknown), key, label and options.
func newField(key, label, typ string, options []string) field {
	return field{Key: key, Label: label, Kind: fieldKind(typ, key, label, options), Options: options}
}

// fieldKind decides how a field's answer is checked. A declared type wins;
// text and unknown types are read from the key and label.
func fieldKind(typ, key, label string, options []string) string {
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case kindUsername, kindLogin, kindAmount, kindInvite:
		return typ
	case "number", "numeric", "integer", "int", "digits":
		return kindNumber
	case "select", "dropdown", "enum", "radio", "list", "choice":
		if len(options) > 0 {
			return kindSelect
		}
	case "email", "e-mail":
		return kindEmail
	case "url", "link", "uri":
		return kindURL
	case "tel", "phone":
		return kindPhone
	}
	if len(options) > 0 {
		return kindSelect
	}
	name := " " + strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(strings.ToLower(key+" "+label)) + " "
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(name, w) {
				return true
			}
		}
		return false
	}
	switch {
	case secretField(key):
		return kindText // passwords may contain anything printable
	case has("email", "e mail"):
		return kindEmail
	case has(" url ", " link ", " uri "):
		return kindURL
	case has("phone"):
		return kindPhone
	case has(" uid ", "player id", "playerid", "user id", "userid", "zone id", "zoneid", "server id", "account id"):
		// A game's player, user, zone or server id is a number in
		// practice (PUBG, Free Fire, Genshin, Mobile Legends): a typo
		// such as a letter is caught before the buyer pays.
		return kindNumber
	case has("username", "user name", "nickname"):
		return kindID
	}
	return kindText
}

// stepFields asks the offer's fields one at a time.
const stepFields = "fields"

// actKeep keeps the earlier answer to a field; actOption picks one option
// of a select field (arg: its index).
const (
	actKeep   flows.Action = "k"
	actOption flows.Action = "fo"
)

// Session variables of the fields step: the fields asked, as lists of one
// entry per field, and the field asked (shop.KeyFieldIndex). Each answer
// is kept under answerKey.
const (
	keyFieldKeys    flows.Key = "fk" // the fields' keys
	keyFieldLabels  flows.Key = "fl" // their labels
	keyFieldKinds   flows.Key = "ft" // their kinds; unset when all are plain text
	keyFieldOptions flows.Key = "fo" // a select field's options (sepOption between them); unset when none has any
	// answerPrefix starts the key of a field's answer: "f.<field key>".
	answerPrefix = "f."
)

// answerKey is the session variable of the answer to the field keyed key.
func answerKey(key string) flows.Key { return flows.Key(answerPrefix + key) }

// sepOption separates a select field's options in keyFieldOptions.
const sepOption = "\x1e"

// askFields starts asking fields; earlier answers to the same keys are kept.
func askFields(s *flows.Session, fields []field) {
	var keys, labels, kinds, options []string
	for _, f := range fields {
		keys = append(keys, f.Key)
		labels = append(labels, f.Label)
		kinds = append(kinds, f.Kind)
		options = append(options, strings.Join(f.Options, sepOption))
	}
	s.SetList(keyFieldKeys, keys)
	s.SetList(keyFieldLabels, labels)
	s.SetList(keyFieldKinds, noneIfEmpty(kinds))
	s.SetList(keyFieldOptions, noneIfEmpty(options))
	s.Set(shop.KeyFieldIndex, "")
	s.Goto(stepFields)
}

// noneIfEmpty is values (one per field), or none when all are empty
// (sessions of plain text fields stay as they were).
func noneIfEmpty(values []string) []string {
	if strings.Join(values, "") == "" {
		return nil
	}
	return values
}

func sessionFields(s *flows.Session) []field {
	keys, labels := s.List(keyFieldKeys), s.List(keyFieldLabels)
	if len(keys) == 0 {
		return nil
	}
	kinds, options := s.List(keyFieldKinds), s.List(keyFieldOptions)
	out := make([]field, len(keys))
	for i := range keys {
		out[i] = field{Key: keys[i], Label: keys[i]}
		if i < len(labels) && labels[i] != "" {
			out[i].Label = labels[i]
		}
		if i < len(kinds) {
			out[i].Kind = kinds[i]
		}
		if i < len(options) && options[i] != "" {
			out[i].Options = strings.Split(options[i], sepOption)
		}
	}
	return out
}

// fieldValues returns the answers to every field, keyed as the order needs.
func fieldValues(s *flows.Session) map[string]string {
	m := map[string]string{}
	for _, f := range sessionFields(s) {
		m[f.Key] = s.Get(answerKey(f.Key))
	}
	return m
}

// secretField reports whether a field's answer must not be echoed back.
func secretField(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "pass") || strings.Contains(k, "secret") || strings.Contains(k, "code")
}

// fieldsFor shows the answers on the confirmation screen (secrets masked).
func fieldsFor(s *flows.Session) string {
	return describeFields(sessionFields(s), func(key string) string { return s.Get(answerKey(key)) })
}

// describeFields shows the answers (value gives each field's) as the
// order's summary and invoice name them: "Label: value; ...", secrets
// masked.
func describeFields(fields []field, value func(key string) string) string {
	var parts []string
	for _, f := range fields {
		v := value(f.Key)
		if secretField(f.Key) {
			v = "••••••"
		}
		parts = append(parts, f.Label+": "+v)
	}
	return strings.Join(parts, "; ")
}

// cleanField trims an answer and says why it cannot be used, or "": it must
// be one line of visible text within maxFieldLen characters.
func cleanField(env *flows.Env, text string) (string, string) {
	v := strings.TrimSpace(text)
	switch {
	case v == "":
		return "", env.T("fields.empty")
	case utf8.RuneCountInString(v) > maxFieldLen:
		return "", env.T("fields.too_long", "max", maxFieldLen)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "", env.T("fields.one_line")
	case hasInvisible(v):
		return "", env.T("fields.invisible")
	}
	return v, ""
}

// hasInvisible reports whether s holds a character that cannot be seen or
// that reorders text: zero-width and joiner characters, bidi controls, the
// byte-order mark and every other format (Cf) character.
func hasInvisible(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return unicode.Is(unicode.Cf, r) || (r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) ||
			(r >= 0x2060 && r <= 0x2064) || r == 0xFEFF
	}) >= 0
}

// checkField checks an answer against its field's kind. It returns the value
// to keep (a select's option as the upstream spells it) or why the answer
// cannot be used.
func checkField(env *flows.Env, f field, text string) (string, string) {
	v, reason := cleanField(env, text)
	if reason != "" {
		return "", reason
	}
	label := locales.Escape(f.Label)
	switch f.Kind {
	case kindUsername:
		return usernameAnswer(env, v)
	case kindLogin:
		if reason := loginReason(env, v); reason != "" {
			return "", reason
		}
	case kindAmount:
		a, ok := parseAmount(v)
		if !ok {
			return "", env.T("topup.bad_amount")
		}
		return a.StringFixed(2), ""
	case kindInvite:
		if reason := inviteReason(env, v); reason != "" {
			return "", reason
		}
	case kindNumber:
		if len(v) > maxNumberLen || strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return "", env.T("fields.bad_number", "label", label, "max", maxNumberLen)
		}
	case kindSelect:
		for _, o := range f.Options {
			if strings.EqualFold(strings.Join(strings.Fields(o), " "), strings.Join(strings.Fields(v), " ")) {
				return o, ""
			}
		}
		return "", env.T("fields.bad_option", "label", label, "options", locales.Escape(locales.Clip(strings.Join(f.Options, ", "), 300)))
	case kindEmail:
		if !validEmail(v) {
			return "", env.T("fields.bad_email", "label", label)
		}
	case kindURL:
		if !validURL(v) {
			return "", env.T("fields.bad_url", "label", label)
		}
	case kindPhone:
		if !validPhone(v) {
			return "", env.T("fields.bad_phone", "label", label)
		}
	case kindID:
		if strings.IndexFunc(v, unicode.IsSpace) >= 0 || utf8.RuneCountInString(v) > 64 {
			return "", env.T("fields.bad_id", "label", label)
		}
	}
	return v, ""
}

// validEmail accepts a plain address (no display name, no angle brackets)
// whose domain has a dot and no empty label.
func validEmail(v string) bool {
	a, err := mail.ParseAddress(v)
	if err != nil || a.Name != "" || a.Address != v {
		return false
	}
	_, domain, ok := strings.Cut(a.Address, "@")
	if !ok || !strings.Contains(domain, ".") || strings.HasPrefix(domain, "[") {
		return false
	}
	for _, l := range strings.Split(domain, ".") {
		if l == "" {
			return false
		}
	}
	return true
}

// validURL accepts an absolute http(s) link to a named host with a dot.
func validURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || strings.ContainsAny(v, " \t") {
		return false
	}
	h := u.Hostname()
	return strings.Contains(h, ".") && !strings.HasPrefix(h, ".") && !strings.HasSuffix(h, ".")
}

// validPhone accepts 7 to 15 digits, an optional leading +, and spaces,
// dashes, dots or brackets between them.
func validPhone(v string) bool {
	digits := 0
	for i, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0:
		case strings.ContainsRune(" -().", r):
		default:
			return false
		}
	}
	return digits >= 7 && digits <= 15
}

// fieldsScreen asks the current field.
func fieldsScreen(env *flows.Env, s *flows.Session, title string) *flows.Screen {
	fields := sessionFields(s)
	i := s.Int(shop.KeyFieldIndex)
	if len(fields) == 0 {
		return &flows.Screen{Text: title, Rows: [][]flows.Button{shop.NavRow(env)}}
	}
	i = min(max(i, 0), len(fields)-1)
	f := fields[i]
	text := title + "\n\n" + env.T("fields.ask", "label", locales.Escape(f.Label), "i", i+1, "n", len(fields))
	sc := &flows.Screen{}
	if v := s.Get(answerKey(f.Key)); v != "" {
		shown := "<code>" + locales.Escape(v) + "</code>"
		if secretField(f.Key) {
			shown = "••••••"
		}
		text += "\n" + env.T("fields.current", "value", shown)
		sc.Rows = append(sc.Rows, []flows.Button{{Text: env.T("btn.keep"), Action: actKeep}})
	}
	if f.Kind == kindSelect {
		var row []flows.Button
		for j, o := range f.Options[:min(len(f.Options), maxOptionButtons)] {
			row = append(row, flows.Button{Text: locales.Clip(o, shop.MaxButtonText), Action: actOption, Arg: strconv.Itoa(j)})
			if len(row) == 2 {
				sc.Rows = append(sc.Rows, row)
				row = nil
			}
		}
		if len(row) > 0 {
			sc.Rows = append(sc.Rows, row)
		}
		text += "\n" + env.T("fields.choose")
	}
	sc.Text = text
	sc.Rows = append(sc.Rows, shop.NavRow(env))
	return sc
}

// firstInvalid checks every answer again before a quote (an answer kept
// from an earlier visit, or a field whose kind changed). On the first bad
// one it goes back to that field and returns why.
func firstInvalid(env *flows.Env, s *flows.Session) *shop.BadInput {
	for i, f := range sessionFields(s) {
		v, reason := checkField(env, f, s.Get(answerKey(f.Key)))
		if reason == "" {
			s.Set(answerKey(f.Key), v)
			continue
		}
		s.Set(answerKey(f.Key), "")
		s.SetInt(shop.KeyFieldIndex, int64(i))
		for s.Step != stepFields && s.GoBack() {
		}
		s.Step = stepFields
		return &shop.BadInput{Text: reason}
	}
	return nil
}

// fieldsHandle takes an answer, Keep or Back on the fields step; after the
// last field it quotes. It reports false when ev is not for this step.
func fieldsHandle(ctx context.Context, sh *shop.Shop, env *flows.Env, f shop.Pricer, s *flows.Session, ev flows.Event) (*flows.Reply, bool, error) {
	if s.Step != stepFields {
		return nil, false, nil
	}
	fields := sessionFields(s)
	i := s.Int(shop.KeyFieldIndex)
	if i >= len(fields) {
		return nil, false, nil
	}
	switch {
	case ev.Kind == flows.EvButton && ev.Button.Action == shop.ActBack && i > 0:
		s.SetInt(shop.KeyFieldIndex, int64(i-1))
		r, err := sh.ShowStep(ctx, env, f, s)
		return r, true, err
	case ev.Kind == flows.EvButton && ev.Button.Action == actKeep && s.Get(answerKey(fields[i].Key)) != "":
	case ev.Kind == flows.EvButton && ev.Button.Action == actOption:
		j, err := strconv.Atoi(ev.Button.Arg)
		if err != nil || j < 0 || j >= len(fields[i].Options) {
			r, err := sh.ShowStep(ctx, env, f, s)
			return r, true, err
		}
		s.Set(answerKey(fields[i].Key), fields[i].Options[j])
	case ev.Kind != flows.EvButton:
		v, reason := checkField(env, fields[i], ev.Text)
		if reason != "" {
			r, err := sh.Again(ctx, env, f, s, reason)
			return r, true, err
		}
		s.Set(answerKey(fields[i].Key), v)
	default:
		return nil, false, nil
	}
	if i+1 < len(fields) {
		s.SetInt(shop.KeyFieldIndex, int64(i+1))
		r, err := sh.ShowStep(ctx, env, f, s)
		return r, true, err
	}
	r, err := sh.Quote(ctx, env, f, s)
	return r, true, err
}
