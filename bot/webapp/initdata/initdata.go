// Package initdata authenticates a Telegram Mini App's requests: it checks
// the initData string Telegram hands the page (Telegram.WebApp.initData)
// against the bot's token, and reads the user from it only once the check
// holds.
//
// The check is Telegram's ("Validating data received via the Mini App" in
// the Bot API's Mini App documentation): the initData is a URL query
// string; its data-check-string is every field but hash, decoded, as
// "key=value" lines sorted by key and joined by "\n"; hash must be the hex
// HMAC-SHA256 of that string under the key HMAC-SHA256(key "WebAppData",
// message: the bot token). The signature field (Telegram's Ed25519
// signature, for third parties who do not hold the token) is a field like
// any other here: it stays in the data-check-string, as Telegram computes
// the hash over it, and is not checked on its own.
//
// On top of Telegram's rule the check refuses what would let two readers
// of one string disagree: a field given twice, a malformed pair, a hash
// that is not 64 hex digits. The hash is compared in constant time. A
// string whose auth_date is older than the Verifier's MaxAge (24 hours by
// default), or more than a minute in the future, is refused: a copy of an
// initData (a leaked log, a shared screenshot of a URL) stops working a day
// after Telegram issued it. A day, not minutes, because the page stays open
// while a buyer browses, pays and watches an order through its delivery,
// and Telegram issues a new initData only when the app is opened again;
// everything the string allows is the buyer's own (their catalog, quotes,
// invoices they still must pay in Telegram, their own orders).
package initdata

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxAge is how long after its auth_date an initData is accepted
// when the Verifier does not say otherwise.
const DefaultMaxAge = 24 * time.Hour

// MaxLen bounds the initData string read at all, in bytes (Telegram's are
// well under 2 KB).
const MaxLen = 8 << 10

// futureSkew is how far ahead of the server's clock an auth_date may be
// (Telegram's clock and ours differ by a little).
const futureSkew = time.Minute

// Why an initData is refused. Every refusal wraps ErrInvalid.
var (
	ErrInvalid   = errors.New("initData refused")
	ErrMalformed = fmt.Errorf("%w: malformed", ErrInvalid)
	ErrNoHash    = fmt.Errorf("%w: no hash", ErrInvalid)
	ErrDuplicate = fmt.Errorf("%w: a field given twice", ErrInvalid)
	ErrSignature = fmt.Errorf("%w: the hash does not match (another bot's, or changed)", ErrInvalid)
	ErrExpired   = fmt.Errorf("%w: auth_date too old", ErrInvalid)
	ErrFuture    = fmt.Errorf("%w: auth_date in the future", ErrInvalid)
	ErrNoUser    = fmt.Errorf("%w: no user", ErrInvalid)
)

// User is the Telegram user who opened the Mini App, as the verified
// initData describes them.
type User struct {
	ID           int64  `json:"id"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
	IsPremium    bool   `json:"is_premium,omitempty"`
}

// Data is a verified initData: who opened the app and when Telegram issued
// the string.
type Data struct {
	User     User
	AuthDate time.Time
	// StartParam is the start_param of a link that opened the app
	// (t.me/<bot>/<app>?startapp=...), or "".
	StartParam string
	QueryID    string
}

// Verifier checks initData strings for one bot.
type Verifier struct {
	secret []byte
	// MaxAge is how long after its auth_date a string is accepted.
	MaxAge time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewVerifier returns a verifier for the bot whose token is token, with
// DefaultMaxAge.
func NewVerifier(token string) *Verifier {
	return &Verifier{secret: secretKey(token), MaxAge: DefaultMaxAge}
}

// secretKey is Telegram's key of the initData hash: HMAC-SHA256 of the
// token under the key "WebAppData".
func secretKey(token string) []byte {
	m := hmac.New(sha256.New, []byte("WebAppData"))
	m.Write([]byte(token))
	return m.Sum(nil)
}

// field is one decoded key=value pair.
type field struct{ key, value string }

// parse splits raw into its decoded fields, refusing malformed pairs and a
// key given twice.
func parse(raw string) ([]field, error) {
	if raw == "" || len(raw) > MaxLen {
		return nil, ErrMalformed
	}
	var out []field
	seen := map[string]bool{}
	for _, pair := range strings.Split(raw, "&") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, ErrMalformed
		}
		key, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || key == "" {
			return nil, ErrMalformed
		}
		if seen[key] {
			return nil, ErrDuplicate
		}
		seen[key] = true
		out = append(out, field{key, value})
	}
	return out, nil
}

// checkString is the data-check-string of fields: every one but hash, as
// key=value lines sorted by key.
func checkString(fields []field) string {
	lines := make([]string, 0, len(fields))
	for _, f := range fields {
		if f.key != "hash" {
			lines = append(lines, f.key+"="+f.value)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// hashOf is the hex-decoded-to-bytes hash Telegram would give fields.
func (v *Verifier) hashOf(fields []field) []byte {
	m := hmac.New(sha256.New, v.secret)
	m.Write([]byte(checkString(fields)))
	return m.Sum(nil)
}

// Verify checks raw and returns what it says. Nothing of it is read before
// the hash matches.
func (v *Verifier) Verify(raw string) (*Data, error) {
	fields, err := parse(raw)
	if err != nil {
		return nil, err
	}
	get := func(key string) string {
		for _, f := range fields {
			if f.key == key {
				return f.value
			}
		}
		return ""
	}
	hash := get("hash")
	if hash == "" {
		return nil, ErrNoHash
	}
	got, err := hex.DecodeString(hash)
	if err != nil || len(got) != sha256.Size {
		return nil, ErrSignature
	}
	if !hmac.Equal(got, v.hashOf(fields)) {
		return nil, ErrSignature
	}
	// Verified: from here on the fields are Telegram's.
	secs, err := strconv.ParseInt(get("auth_date"), 10, 64)
	if err != nil || secs <= 0 {
		return nil, ErrMalformed
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	at, t := time.Unix(secs, 0), now()
	maxAge := v.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	switch {
	case at.After(t.Add(futureSkew)):
		return nil, ErrFuture
	case t.Sub(at) > maxAge:
		return nil, ErrExpired
	}
	d := &Data{AuthDate: at, StartParam: get("start_param"), QueryID: get("query_id")}
	raw = get("user")
	if raw == "" {
		return nil, ErrNoUser
	}
	if err := json.Unmarshal([]byte(raw), &d.User); err != nil || d.User.ID <= 0 {
		return nil, ErrNoUser
	}
	return d, nil
}

// Sign returns an initData string for fields as Telegram would sign it
// for the bot whose token is token: fields URL-encoded (sorted by key),
// then hash. The tests and the demo open the Mini App with it.
func Sign(token string, fields map[string]string) string {
	vals := url.Values{}
	var fs []field
	for k, v := range fields {
		vals.Set(k, v)
		fs = append(fs, field{k, v})
	}
	v := &Verifier{secret: secretKey(token)}
	return vals.Encode() + "&hash=" + hex.EncodeToString(v.hashOf(fs))
}

// SignUser returns the initData of user opening the app at authDate, signed
// for token.
func SignUser(token string, user User, authDate time.Time) string {
	u, _ := json.Marshal(user) // a struct of strings, numbers and bools: cannot fail
	return Sign(token, map[string]string{
		"user": string(u), "auth_date": strconv.FormatInt(authDate.Unix(), 10),
		"query_id": "AAE" + strconv.FormatInt(user.ID, 36) + strconv.FormatInt(authDate.Unix(), 36),
	})
}
