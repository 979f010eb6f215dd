package rawjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// textFields hold a message's text, in order of preference.
var textFields = []string{"text", "body", "message", "content", "msg", "caption"}

// Text returns the message text: the message itself when it is a JSON
// string, else the first of text, body, message, content, msg or caption
// (looking one level into an object value such as {"message":{"text":..}}).
func Text(raw json.RawMessage) string {
	if s, ok := ScalarText(raw); ok {
		return s
	}
	f := Fields(raw)
	if s, ok := FirstText(f, textFields...); ok {
		return s
	}
	for _, name := range textFields {
		if v, ok := f[name]; ok {
			if s, ok := FirstText(Fields(v), textFields...); ok {
				return s
			}
		}
	}
	return ""
}

// timeFields hold a message's time, in order of preference.
var timeFields = []string{"created_at", "at", "time", "date", "timestamp", "sent_at", "created", "datetime", "ts"}

// Time returns when the message was sent and whether a time was found. It
// reads created_at, at, time, date, timestamp, sent_at, created, datetime or
// ts, as RFC 3339 or common date-time strings, or as Unix time in seconds,
// milliseconds, microseconds or nanoseconds (number or numeric string).
func Time(raw json.RawMessage) (time.Time, bool) {
	f := Fields(raw)
	for _, name := range timeFields {
		if v, ok := f[name]; ok {
			if t, ok := ParseTime(v); ok {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// ID returns the message's id, message_id, number or uuid as text, or "".
func ID(raw json.RawMessage) string {
	s, _ := FirstText(Fields(raw), "id", "message_id", "number", "uuid")
	return s
}

// authorFields name who wrote a message.
var authorFields = []string{"author", "from", "sender", "user", "username", "name", "role",
	"author_type", "sender_type", "from_type", "user_type"}

// Author returns who wrote the message (author, from, sender, user,
// username, name or role, looking into an object value for its name,
// username, role or type), or "".
func Author(raw json.RawMessage) string {
	f := Fields(raw)
	for _, name := range authorFields {
		v, ok := f[name]
		if !ok {
			continue
		}
		if s, ok := ScalarText(v); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
		if s, ok := FirstText(Fields(v), "name", "username", "nickname", "role", "type", "id"); ok {
			return s
		}
	}
	return ""
}

// Image returns an attached image's URL or name (image, image_url,
// attachment, photo, file, file_url, url), or "".
func Image(raw json.RawMessage) string {
	f := Fields(raw)
	s, _ := FirstText(f, "image", "image_url", "attachment", "photo", "file", "file_url", "url")
	if s != "" {
		return s
	}
	for _, name := range []string{"image", "attachment", "photo", "file"} {
		if s, ok := FirstText(Fields(f[name]), "url", "href", "name"); ok {
			return s
		}
	}
	return ""
}

var (
	operatorFlags = []string{"is_operator", "from_operator", "operator", "is_admin", "admin",
		"is_support", "from_support", "support", "is_staff", "is_seller", "from_seller", "is_supplier"}
	selfFlags = []string{"is_mine", "mine", "from_me", "is_own", "own", "outgoing", "is_outgoing",
		"is_reseller", "from_reseller", "is_client", "from_client", "is_buyer", "from_buyer", "is_partner"}
	roleFields = []string{"role", "author_type", "sender_type", "from_type", "user_type", "author",
		"from", "sender", "direction", "side", "type"}
	operatorRoles = map[string]bool{"operator": true, "admin": true, "administrator": true, "support": true,
		"staff": true, "manager": true, "seller": true, "supplier": true, "moderator": true, "system": true,
		"incoming": true, "in": true}
	selfRoles = map[string]bool{"reseller": true, "client": true, "buyer": true, "customer": true,
		"user": true, "me": true, "self": true, "partner": true, "outgoing": true, "out": true}
)

// FromOperator reports whether the message was written by the upstream
// operator (support, seller) rather than by us, and whether that could be
// told at all. It looks at boolean flags such as is_operator, is_admin,
// from_me or is_mine, then at role-like fields (role, author_type, sender,
// from, direction ...) holding words such as operator, admin, support,
// reseller, client or user, also inside an author object.
func FromOperator(raw json.RawMessage) (fromOperator, known bool) {
	f := Fields(raw)
	for _, name := range operatorFlags {
		if b, ok := boolField(f, name); ok {
			return b, true
		}
	}
	for _, name := range selfFlags {
		if b, ok := boolField(f, name); ok {
			return !b, true
		}
	}
	for _, name := range roleFields {
		v, ok := f[name]
		if !ok {
			continue
		}
		s, ok := ScalarText(v)
		if !ok {
			s, _ = FirstText(Fields(v), "role", "type", "kind")
		}
		s = strings.ToLower(strings.TrimSpace(s))
		switch {
		case operatorRoles[s]:
			return true, true
		case selfRoles[s]:
			return false, true
		}
	}
	return false, false
}

// boolField reads a JSON boolean (or 0/1, "true"/"false") field.
func boolField(f map[string]json.RawMessage, name string) (bool, bool) {
	v, ok := f[name]
	if !ok {
		return false, false
	}
	s, ok := ScalarText(v)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return true, true
	case "false", "0", "no":
		return false, true
	}
	return false, false
}

// timeLayouts are the string forms ParseTime accepts besides numbers.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02", time.RFC1123Z, time.RFC1123}

// ParseTime reads a time given as a string or as Unix time.
func ParseTime(v json.RawMessage) (time.Time, bool) {
	s, ok := ScalarText(v)
	if !ok {
		return time.Time{}, false
	}
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	if t, ok := unixTime(s); ok {
		return t, true
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// unixTime reads a non-negative Unix timestamp; its unit is guessed from
// its size (seconds below 1e11, milliseconds below 1e14, microseconds below
// 1e17, else nanoseconds).
func unixTime(s string) (time.Time, bool) {
	intPart, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, false
	}
	var nanos int64
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		f, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil || f < 0 {
			return time.Time{}, false
		}
		nanos = f
	}
	switch {
	case n < 1e11:
		return time.Unix(n, nanos).UTC(), true
	case n < 1e14:
		return time.UnixMilli(n).UTC(), true
	case n < 1e17:
		return time.UnixMicro(n).UTC(), true
	default:
		return time.Unix(0, n).UTC(), true
	}
}
