package flows

import (
	"context"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"shopbot/locales"
)

// maxFieldLen caps one buyer field answer, in characters.
const maxFieldLen = 256

// field is one buyer input an order needs: the upstream key and its label.
type field struct{ Key, Label string }

// stepFields asks the offer's fields one at a time.
const stepFields = "fields"

// actKeep keeps the earlier answer to a field.
const actKeep = "k"

// askFields starts asking fields; earlier answers to the same keys are kept.
func askFields(s *Session, fields []field) {
	var keys, labels []string
	for _, f := range fields {
		keys = append(keys, f.Key)
		labels = append(labels, f.Label)
	}
	s.Set("fk", strings.Join(keys, "\x1f"))
	s.Set("fl", strings.Join(labels, "\x1f"))
	s.Set("fi", "")
	s.Goto(stepFields)
}

func sessionFields(s *Session) []field {
	if s.Get("fk") == "" {
		return nil
	}
	keys, labels := strings.Split(s.Get("fk"), "\x1f"), strings.Split(s.Get("fl"), "\x1f")
	out := make([]field, len(keys))
	for i := range keys {
		out[i] = field{Key: keys[i], Label: keys[i]}
		if i < len(labels) && labels[i] != "" {
			out[i].Label = labels[i]
		}
	}
	return out
}

// fieldValues returns the answers to every field, keyed as the order needs.
func fieldValues(s *Session) map[string]string {
	m := map[string]string{}
	for _, f := range sessionFields(s) {
		m[f.Key] = s.Get("f." + f.Key)
	}
	return m
}

// secretField reports whether a field's answer must not be echoed back.
func secretField(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "pass") || strings.Contains(k, "secret") || strings.Contains(k, "code")
}

// fieldsFor shows the answers on the confirmation screen (secrets masked).
func fieldsFor(s *Session) string {
	var parts []string
	for _, f := range sessionFields(s) {
		v := s.Get("f." + f.Key)
		if secretField(f.Key) {
			v = "••••••"
		}
		parts = append(parts, f.Label+": "+v)
	}
	return strings.Join(parts, "; ")
}

// cleanField trims an answer and says why it cannot be used, or "".
func cleanField(env *Env, text string) (string, string) {
	v := strings.TrimSpace(text)
	switch {
	case v == "":
		return "", env.T("fields.empty")
	case utf8.RuneCountInString(v) > maxFieldLen:
		return "", env.T("fields.too_long", "max", maxFieldLen)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "", env.T("fields.one_line")
	}
	return v, ""
}

// fieldsScreen asks the current field.
func fieldsScreen(env *Env, s *Session, title string) *Screen {
	fields := sessionFields(s)
	i, _ := strconv.Atoi(s.Get("fi"))
	if len(fields) == 0 {
		return &Screen{Text: title, Rows: [][]Button{navRow(env)}}
	}
	i = min(max(i, 0), len(fields)-1)
	f := fields[i]
	text := title + "\n\n" + env.T("fields.ask", "label", locales.Escape(f.Label), "i", i+1, "n", len(fields))
	sc := &Screen{}
	if v := s.Get("f." + f.Key); v != "" {
		shown := "<code>" + locales.Escape(v) + "</code>"
		if secretField(f.Key) {
			shown = "••••••"
		}
		text += "\n" + env.T("fields.current", "value", shown)
		sc.Rows = append(sc.Rows, []Button{{Text: env.T("btn.keep"), Action: actKeep}})
	}
	sc.Text = text
	sc.Rows = append(sc.Rows, navRow(env))
	return sc
}

// fieldsHandle takes an answer, Keep or Back on the fields step; after the
// last field it quotes. It reports false when ev is not for this step.
func (sh *Shop) fieldsHandle(ctx context.Context, env *Env, f pricer, s *Session, ev Event) (*Reply, bool, error) {
	if s.Step != stepFields {
		return nil, false, nil
	}
	fields := sessionFields(s)
	i, _ := strconv.Atoi(s.Get("fi"))
	if i >= len(fields) {
		return nil, false, nil
	}
	switch {
	case ev.Kind == EvButton && ev.Button.Action == actBack && i > 0:
		s.Set("fi", strconv.Itoa(i-1))
		r, err := sh.show(ctx, env, f, s)
		return r, true, err
	case ev.Kind == EvButton && ev.Button.Action == actKeep && s.Get("f."+fields[i].Key) != "":
	case ev.Kind != EvButton:
		v, reason := cleanField(env, ev.Text)
		if reason != "" {
			r, err := sh.again(ctx, env, f, s, reason)
			return r, true, err
		}
		s.Set("f."+fields[i].Key, v)
	default:
		return nil, false, nil
	}
	if i+1 < len(fields) {
		s.Set("fi", strconv.Itoa(i+1))
		r, err := sh.show(ctx, env, f, s)
		return r, true, err
	}
	r, err := sh.quote(ctx, env, f, s)
	return r, true, err
}
