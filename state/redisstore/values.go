package redisstore

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// The small conversions the stores share: between Go values and the
// strings Redis and the Lua scripts speak.

// NewToken is a random token: a lease's or a lock's owner.
func NewToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Flag is a boolean as a script argument: "1" or "0".
func Flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Str reads a script's reply element as a string ("" for nil or another
// type).
func Str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	case int64:
		return strconv.FormatInt(s, 10)
	}
	return ""
}

// Itoa is n in decimal: ids in keys and hash fields.
func Itoa(n int64) string { return strconv.FormatInt(n, 10) }
