package initdata_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"shopbot/bot/webapp/initdata"
)

const token = "123456:TEST-token-of-the-tests"

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func verifier() *initdata.Verifier {
	v := initdata.NewVerifier(token)
	v.Now = func() time.Time { return now }
	return v
}

var buyer = initdata.User{ID: 5001, FirstName: "Ann", Username: "ann", LanguageCode: "uk"}

// telegramHash computes the hash as Telegram's documentation spells it,
// independently of the package: the data-check-string of every field but
// hash, sorted, under HMAC-SHA256(key "WebAppData", the token).
func telegramHash(fields map[string]string) string {
	var lines []string
	for k, v := range fields {
		lines = append(lines, k+"="+v)
	}
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	key := hmac.New(sha256.New, []byte("WebAppData"))
	key.Write([]byte(token))
	m := hmac.New(sha256.New, key.Sum(nil))
	m.Write([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(m.Sum(nil))
}

// build encodes fields in the given order, then hash.
func build(fields [][2]string, hash string) string {
	var parts []string
	for _, f := range fields {
		parts = append(parts, url.QueryEscape(f[0])+"="+url.QueryEscape(f[1]))
	}
	return strings.Join(append(parts, "hash="+hash), "&")
}

func TestValidInitData(t *testing.T) {
	fields := map[string]string{
		"user":          `{"id":5001,"first_name":"Ann","username":"ann","language_code":"uk"}`,
		"auth_date":     strconv.FormatInt(now.Add(-time.Hour).Unix(), 10),
		"query_id":      "AAHdF6IQAAAAAN0XohDhrOrc",
		"chat_instance": "-8134722200314281151",
		"chat_type":     "private",
		"start_param":   "gc-apple-us",
		// Telegram's Ed25519 signature for third parties: part of the
		// data-check-string like any other field.
		"signature": "TYJxVcisqbWjtodPepiJ6ghziUL94-KNpG8Pau-X7oNNLNBM72APCpi_RKiUlBvcqo5L-LAxIc3dnTzcZX_PDg",
	}
	// Telegram's order of fields is not the sorted one: the check sorts.
	order := []string{"user", "chat_instance", "chat_type", "auth_date", "signature", "query_id", "start_param"}
	var ordered [][2]string
	for _, k := range order {
		ordered = append(ordered, [2]string{k, fields[k]})
	}
	raw := build(ordered, telegramHash(fields))
	d, err := verifier().Verify(raw)
	if err != nil {
		t.Fatal(err)
	}
	if d.User != buyer || d.StartParam != "gc-apple-us" || !d.AuthDate.Equal(now.Add(-time.Hour)) || d.QueryID != fields["query_id"] {
		t.Fatalf("data = %+v", d)
	}
	// Sign makes what Verify takes, and what Telegram's rule accepts.
	signed := initdata.SignUser(token, buyer, now)
	if d, err := verifier().Verify(signed); err != nil || d.User != buyer {
		t.Fatalf("SignUser: %+v, %v", d, err)
	}
	q, _ := url.ParseQuery(signed)
	plain := map[string]string{}
	for k, v := range q {
		if k != "hash" {
			plain[k] = v[0]
		}
	}
	if q.Get("hash") != telegramHash(plain) {
		t.Fatal("Sign's hash is not Telegram's")
	}
}

func TestRefusedInitData(t *testing.T) {
	good := initdata.SignUser(token, buyer, now.Add(-time.Minute))
	q, _ := url.ParseQuery(good)
	hash := q.Get("hash")
	user := q.Get("user")
	authDate := q.Get("auth_date")
	queryID := q.Get("query_id")
	swapped := strings.Replace(user, `"id":5001`, `"id":5002`, 1)
	tests := []struct {
		name string
		raw  string
		want error
	}{
		{"empty", "", initdata.ErrMalformed},
		{"tampered field", build([][2]string{{"auth_date", authDate}, {"query_id", queryID + "x"}, {"user", user}}, hash), initdata.ErrSignature},
		{"a user id swapped in the user field", build([][2]string{{"auth_date", authDate}, {"query_id", queryID}, {"user", swapped}}, hash), initdata.ErrSignature},
		{"a user added as a field of its own", good + "&user_id=5002", initdata.ErrSignature},
		{"a second user field", good + "&user=" + url.QueryEscape(swapped), initdata.ErrDuplicate},
		{"no hash", strings.Replace(good, "&hash="+hash, "", 1), initdata.ErrNoHash},
		{"empty hash", strings.Replace(good, "&hash="+hash, "&hash=", 1), initdata.ErrNoHash},
		{"two hashes", good + "&hash=" + hash, initdata.ErrDuplicate},
		{"short hash", strings.Replace(good, hash, hash[:40], 1), initdata.ErrSignature},
		{"hash not hex", strings.Replace(good, hash, hash[:62]+"zz", 1), initdata.ErrSignature},
		{"wrong token", initdata.SignUser("654321:ANOTHER-bot", buyer, now), initdata.ErrSignature},
		{"expired auth_date", initdata.SignUser(token, buyer, now.Add(-initdata.DefaultMaxAge-time.Second)), initdata.ErrExpired},
		{"auth_date in the future", initdata.SignUser(token, buyer, now.Add(2*time.Minute)), initdata.ErrFuture},
		{"no auth_date", initdata.Sign(token, map[string]string{"user": user}), initdata.ErrMalformed},
		{"no user", initdata.Sign(token, map[string]string{"auth_date": authDate}), initdata.ErrNoUser},
		{"user without an id", initdata.Sign(token, map[string]string{"auth_date": authDate, "user": `{"first_name":"X"}`}), initdata.ErrNoUser},
		{"user not JSON", initdata.Sign(token, map[string]string{"auth_date": authDate, "user": `5001`}), initdata.ErrNoUser},
		{"pair without =", good + "&junk", initdata.ErrMalformed},
		{"bad escape", good + "&a=%zz", initdata.ErrMalformed},
		{"too long", good + "&pad=" + strings.Repeat("a", initdata.MaxLen), initdata.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := verifier().Verify(tt.raw)
			if !errors.Is(err, tt.want) || !errors.Is(err, initdata.ErrInvalid) || d != nil {
				t.Fatalf("Verify = %+v, %v; want %v", d, err, tt.want)
			}
		})
	}
}

func TestMaxAge(t *testing.T) {
	v := verifier()
	v.MaxAge = time.Hour
	if _, err := v.Verify(initdata.SignUser(token, buyer, now.Add(-59*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(initdata.SignUser(token, buyer, now.Add(-61*time.Minute))); !errors.Is(err, initdata.ErrExpired) {
		t.Fatalf("an hour and a minute old: %v", err)
	}
}

func BenchmarkVerify(b *testing.B) {
	v := verifier()
	raw := initdata.SignUser(token, buyer, now)
	for b.Loop() {
		if _, err := v.Verify(raw); err != nil {
			b.Fatal(err)
		}
	}
}
