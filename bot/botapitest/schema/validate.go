package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Violation is one way a request breaks the Bot API schema or one of the
// documented value rules the server enforces.
type Violation struct {
	// Method is the Bot API method, e.g. "sendMessage".
	Method string
	// Field is the path of the offending value, e.g.
	// "reply_markup.inline_keyboard[0][1].callback_data"; empty when the
	// problem concerns the whole request.
	Field string
	// Problem says what is wrong, e.g. "missing required field".
	Problem string
}

// Error formats the violation as "method: field: problem".
func (v *Violation) Error() string {
	if v.Field == "" {
		return v.Method + ": " + v.Problem
	}
	return v.Method + ": " + v.Field + ": " + v.Problem
}

// Kind says how a top-level parameter arrived.
type Kind int

const (
	// Text is a string: a form or query value, a multipart text part or a
	// JSON string in an application/json body.
	Text Kind = iota
	// JSON is a non-string JSON value from an application/json body.
	JSON
	// Upload is an uploaded multipart file part.
	Upload
)

// Param is one top-level request parameter as it arrived.
type Param struct {
	Kind Kind
	// Text is the string, or the raw JSON text for JSON; empty for Upload.
	Text string
}

// problem is one finding of the checker before it is tied to a method.
type problem struct {
	path string
	msg  string
	// mismatch marks a plain "wrong type" at path, which a union may merge
	// into one message naming all alternatives.
	mismatch bool
}

// checker validates one request against the schema.
type checker struct {
	s *Schema
	// uploads are the names of the request's uploaded file parts.
	uploads map[string]bool
	// attached records the file parts referenced with attach://<name>.
	attached map[string]bool
}

func joinPath(base, field string) string {
	if base == "" {
		return field
	}
	return base + "." + field
}

func indexPath(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }

// describe renders a decoded JSON value for an error message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:37] + "..."
		}
		return "string " + strconv.Quote(x)
	case json.Number:
		return "number " + x.String()
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func describeWire(wv Param) string {
	switch wv.Kind {
	case Upload:
		return "an uploaded file"
	case JSON:
		v, err := decodeJSON([]byte(wv.Text))
		if err != nil {
			return "invalid JSON"
		}
		return "JSON " + describe(v)
	}
	t := wv.Text
	if len(t) > 40 {
		t = t[:37] + "..."
	}
	return strconv.Quote(t)
}

// decodeJSON decodes one JSON value keeping numbers exact.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func exprList(exprs []string) string { return strings.Join(exprs, " or ") }

// checkRequest validates the top-level parameters of a method call. It
// returns the parameters decoded for Call.Params and every problem found.
func (c *checker) checkRequest(m *Method, params map[string]Param) (map[string]any, []problem) {
	var probs []problem
	decoded := make(map[string]any, len(params))

	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		wv := params[name]
		f := m.byName[name]
		if f == nil {
			if wv.Kind == Upload {
				continue // checked below: it may be an attach:// target
			}
			probs = append(probs, problem{path: name, msg: "unknown field"})
			decoded[name] = decodeUnknown(wv)
			continue
		}
		v, ps := c.topUnion(name, wv, f.Types)
		probs = append(probs, ps...)
		if wv.Kind != Upload {
			decoded[name] = v
		}
	}
	for _, f := range m.Fields {
		if _, ok := params[f.Name]; !ok && f.Required {
			probs = append(probs, problem{path: f.Name, msg: "missing required field"})
		}
	}
	for _, name := range names {
		wv := params[name]
		if wv.Kind != Upload || m.byName[name] != nil || c.attached[name] {
			continue
		}
		probs = append(probs, problem{path: name, msg: "unknown field (an uploaded file that no attach://" + name + " refers to)"})
	}
	return decoded, probs
}

func decodeUnknown(wv Param) any {
	if wv.Kind == JSON {
		return decodePlain(wv.Text)
	}
	return wv.Text
}

// topUnion checks a top-level value against the alternatives of its field
// and returns it decoded as the first matching alternative.
func (c *checker) topUnion(path string, wv Param, exprs []string) (any, []problem) {
	var (
		best      []problem
		bestScore = -1
		mismatch  = true
	)
	for _, expr := range exprs {
		v, ps, score := c.topAlt(path, wv, expr)
		if len(ps) == 0 {
			return v, nil
		}
		if !(len(ps) == 1 && ps[0].mismatch && ps[0].path == path) {
			mismatch = false
		}
		if score > bestScore {
			best, bestScore = ps, score
		}
	}
	if mismatch || len(exprs) == 1 && len(best) == 1 && best[0].mismatch {
		return decodeUnknown(wv), []problem{{path: path, msg: fmt.Sprintf("wrong type: expected %s, got %s", exprList(exprs), describeWire(wv)), mismatch: true}}
	}
	return decodeUnknown(wv), best
}

// topAlt checks a top-level value against one type expression. score ranks
// failed alternatives so that the most plausible one is reported.
func (c *checker) topAlt(path string, wv Param, expr string) (any, []problem, int) {
	bad := []problem{{path: path, mismatch: true}}
	if wv.Kind == Upload {
		if expr == "InputFile" {
			return nil, nil, 0
		}
		return nil, bad, 0
	}
	switch expr {
	case "Integer":
		if n, err := strconv.ParseInt(wv.Text, 10, 64); err == nil {
			return n, nil, 0
		}
		return nil, bad, 0
	case "Float":
		if f, err := strconv.ParseFloat(wv.Text, 64); err == nil {
			return f, nil, 0
		}
		return nil, bad, 0
	case "Boolean":
		switch wv.Text {
		case "true":
			return true, nil, 0
		case "false":
			return false, nil, 0
		}
		return nil, bad, 0
	case "String", "InputFile":
		if wv.Kind != Text {
			return nil, bad, 0
		}
		if !utf8.ValidString(wv.Text) {
			return nil, []problem{{path: path, msg: "strings must be encoded in UTF-8"}}, 1
		}
		if strings.HasPrefix(wv.Text, "attach://") {
			c.noteAttach(wv.Text)
			if ps := c.attachProblems(path, wv.Text); ps != nil {
				return nil, ps, 1
			}
		}
		return wv.Text, nil, 0
	}
	// An object or array: JSON text in a form field, or JSON in a JSON body.
	v, err := decodeJSON([]byte(wv.Text))
	if err != nil {
		if wv.Kind == Text {
			return nil, []problem{{path: path, msg: fmt.Sprintf("wrong type: expected JSON-serialized %s, got %s (not JSON: %v)", expr, describeWire(wv), err)}}, 0
		}
		return nil, bad, 0
	}
	ps := c.value(path, v, expr)
	if len(ps) == 0 {
		return decodePlain(wv.Text), nil, 0
	}
	return nil, ps, matchScore(c.s, v, expr, ps)
}

// matchScore ranks how well a value fits an object alternative that it
// failed: keys the type knows count most, then how deep the first problem is.
func matchScore(s *Schema, v any, expr string, ps []problem) int {
	score := 0
	if m, ok := v.(map[string]any); ok {
		if t := s.types[expr]; t != nil {
			for k := range m {
				if t.byName[k] != nil {
					score += 1000
				}
			}
		}
	}
	if _, ok := v.([]any); ok && strings.HasPrefix(expr, "Array of ") {
		score += 1000
	}
	if len(ps) > 0 {
		score += strings.Count(ps[0].path, ".") + strings.Count(ps[0].path, "[")
	}
	return score
}

func (c *checker) noteAttach(s string) {
	if name, ok := strings.CutPrefix(s, "attach://"); ok {
		if c.attached == nil {
			c.attached = make(map[string]bool)
		}
		c.attached[name] = true
	}
}

func (c *checker) attachProblems(path, s string) []problem {
	name := strings.TrimPrefix(s, "attach://")
	if !c.uploads[name] {
		return []problem{{path: path, msg: fmt.Sprintf("%q refers to no uploaded file part named %q", s, name)}}
	}
	return nil
}

// value checks a decoded JSON value against one type expression.
func (c *checker) value(path string, v any, expr string) []problem {
	if v == nil {
		return []problem{{path: path, msg: "null is not allowed (omit the field instead)"}}
	}
	bad := []problem{{path: path, msg: fmt.Sprintf("wrong type: expected %s, got %s", expr, describe(v)), mismatch: true}}
	switch expr {
	case "Integer":
		if n, ok := v.(json.Number); ok {
			if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
				return nil
			}
		}
		return bad
	case "Float":
		if n, ok := v.(json.Number); ok {
			if _, err := n.Float64(); err == nil {
				return nil
			}
		}
		return bad
	case "Boolean":
		if _, ok := v.(bool); ok {
			return nil
		}
		return bad
	case "String", "InputFile":
		s, ok := v.(string)
		if !ok {
			return bad
		}
		if !utf8.ValidString(s) {
			return []problem{{path: path, msg: "strings must be encoded in UTF-8"}}
		}
		if strings.HasPrefix(s, "attach://") {
			c.noteAttach(s)
			return c.attachProblems(path, s)
		}
		return nil
	}
	if elem, ok := strings.CutPrefix(expr, "Array of "); ok {
		arr, ok := v.([]any)
		if !ok {
			return bad
		}
		var ps []problem
		for i, e := range arr {
			ps = append(ps, c.value(indexPath(path, i), e, elem)...)
		}
		return ps
	}
	t := c.s.types[expr]
	if t == nil {
		return []problem{{path: path, msg: fmt.Sprintf("schema names unknown type %s", expr)}}
	}
	if len(t.Subtypes) > 0 {
		return c.abstract(path, v, t)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return bad
	}
	return c.object(path, m, t)
}

// union checks a value against alternatives; it passes if any passes.
func (c *checker) union(path string, v any, exprs []string) []problem {
	if len(exprs) == 1 {
		return c.value(path, v, exprs[0])
	}
	var (
		best      []problem
		bestScore = -1
		mismatch  = true
	)
	for _, expr := range exprs {
		ps := c.value(path, v, expr)
		if len(ps) == 0 {
			return nil
		}
		if !(len(ps) == 1 && ps[0].mismatch && ps[0].path == path) {
			mismatch = false
		}
		if score := matchScore(c.s, v, expr, ps); score > bestScore {
			best, bestScore = ps, score
		}
	}
	if mismatch {
		return []problem{{path: path, msg: fmt.Sprintf("wrong type: expected %s, got %s", exprList(exprs), describe(v)), mismatch: true}}
	}
	return best
}

// abstract checks a value against a type with subtypes, choosing the
// subtype by its discriminator field ("type", "status" or "source") when the
// subtypes have one.
func (c *checker) abstract(path string, v any, t *typeDef) []problem {
	m, isObj := v.(map[string]any)
	if isObj {
		discField := ""
		var want []string
		for _, s := range t.Subtypes {
			if st := c.s.types[s]; st != nil && st.discField != "" {
				discField = st.discField
				want = append(want, strconv.Quote(st.discValue))
			}
		}
		if raw, ok := m[discField]; ok && discField != "" {
			got, ok := raw.(string)
			if !ok {
				return []problem{{path: joinPath(path, discField), msg: fmt.Sprintf("wrong type: expected String, got %s", describe(raw)), mismatch: true}}
			}
			var candidates []string
			for _, s := range t.Subtypes {
				if st := c.s.types[s]; st != nil && st.discField == discField && st.discValue == got {
					candidates = append(candidates, s)
				}
			}
			if len(candidates) == 0 {
				return []problem{{path: joinPath(path, discField), msg: fmt.Sprintf("unknown %s %q for %s, want one of %s", discField, got, t.Name, strings.Join(want, ", "))}}
			}
			return c.union(path, v, candidates)
		}
	}
	return c.union(path, v, t.Subtypes)
}

// object checks a JSON object against an object type: unknown fields,
// missing required fields, each field's type, then the value rules.
func (c *checker) object(path string, m map[string]any, t *typeDef) []problem {
	var ps []problem
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if t.byName[k] == nil {
			ps = append(ps, problem{path: joinPath(path, k), msg: "unknown field (" + t.Name + " has no such field)"})
		}
	}
	for _, f := range t.Fields {
		v, ok := m[f.Name]
		if !ok {
			if f.Required {
				ps = append(ps, problem{path: joinPath(path, f.Name), msg: "missing required field (" + t.Name + ")"})
			}
			continue
		}
		ps = append(ps, c.union(joinPath(path, f.Name), v, f.Types)...)
	}
	if len(ps) == 0 {
		ps = objectRules(path, t.Name, m)
	}
	return ps
}
