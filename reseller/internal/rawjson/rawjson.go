package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
)

// List reads a JSON array as one raw JSON value per item. It also accepts a
// single non-array value (as one item) and null (as nil).
func List(data []byte) ([]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	switch {
	case IsNull(data):
		return nil, nil
	case len(data) > 0 && data[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, err
		}
		return items, nil
	default:
		if !json.Valid(data) {
			return nil, &json.SyntaxError{}
		}
		return []json.RawMessage{append(json.RawMessage(nil), data...)}, nil
	}
}

// IsNull reports whether data is the JSON literal null.
func IsNull(data []byte) bool {
	return bytes.Equal(bytes.TrimSpace(data), []byte("null"))
}

// keyFields are object fields that hold the usable part of a delivered key
// or code, in order of preference.
var keyFields = []string{"key", "code", "value", "serial", "serial_number", "activation_key",
	"activation_code", "license", "license_key", "cd_key", "text"}

// secretFields are companions of a key that the buyer also needs.
var secretFields = []string{"pin", "password", "secret"}

// ItemText turns a delivered item into buyer-readable text ("" for null).
func ItemText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsNull(raw) {
		return ""
	}
	if s, ok := ScalarText(raw); ok {
		return strings.TrimSpace(s)
	}
	if raw[0] == '{' {
		m := Fields(raw)
		if k, ok := FirstText(m, keyFields...); ok {
			for _, name := range secretFields {
				if v, ok := FirstText(m, name); ok {
					k += " (" + name + ": " + v + ")"
				}
			}
			return k
		}
	}
	return Compact(raw)
}

// ScalarText returns a JSON string's value, or the literal of a number or
// boolean.
func ScalarText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f':
		if !json.Valid(raw) {
			return "", false
		}
		return string(raw), true
	}
	return "", false
}

// Fields decodes a JSON object with lowercased keys (of several keys
// differing only in case, the all-lowercase one wins). It returns nil for
// non-objects.
func Fields(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		lk := strings.ToLower(k)
		if _, dup := out[lk]; !dup || k == lk {
			out[lk] = v
		}
	}
	return out
}

// FirstText returns the first non-empty scalar among the named fields.
func FirstText(m map[string]json.RawMessage, names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := m[n]; ok {
			if s, ok := ScalarText(v); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s), true
			}
		}
	}
	return "", false
}

// Compact returns raw without insignificant space.
func Compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
