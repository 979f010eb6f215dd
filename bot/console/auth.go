package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shopbot/bot/webapp/initdata"
	"shopbot/flows"
	"shopbot/locales"
	"shopbot/state"
)

// InitDataHeader carries the page's initData on every API request (the
// Mini App's header).
const InitDataHeader = "X-Telegram-Init-Data"

// maxBody bounds a request's JSON body.
const maxBody = 16 << 10

// request is one API request the gate let through: the verified user with
// their roles, the env of their language, and the actor they act as.
type request struct {
	r     *http.Request
	w     http.ResponseWriter
	user  flows.User
	env   *flows.Env
	actor state.Actor
}

// LangHeader carries the language the admin chose on the page ("en",
// "ru", "uk"; the Mini App's header): it wins over their Telegram
// language.
const LangHeader = "X-Shop-Lang"

// apiError is an API answer other than 200. Its message is a catalog
// text (key, args), said in the request's language when written, or a
// text already said in it (the chat's refusals).
type apiError struct {
	status  int
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	// Order is the ref of an order the answer names (a charge for review
	// that has an order by now), for the page to open.
	Order string `json:"order,omitempty"`
	key   string
	args  []any
}

var (
	errNotFound  = &apiError{status: http.StatusNotFound, Code: "not_found", key: "console.err.not_found"}
	errAuth      = &apiError{status: http.StatusUnauthorized, Code: "auth", key: "console.err.auth"}
	errForbidden = &apiError{status: http.StatusForbidden, Code: "forbidden", key: "console.err.forbidden"}
	errLinkUsed  = &apiError{status: http.StatusGone, Code: "link_used", key: "console.err.link_used"}
)

// bad is a 400 saying what is wrong, a catalog text.
func bad(key string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: "bad_request", key: key, args: args}
}

// refused is a 400 with a refusal already in the admin's language (what
// the chat's code answers a bad argument with).
func refused(text string) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: "bad_request", Message: locales.Plain(text)}
}

func conflict(code, key string, args ...any) *apiError {
	return &apiError{status: http.StatusConflict, Code: code, key: key, args: args}
}

func internal() *apiError {
	return &apiError{status: http.StatusInternalServerError, Code: "error", key: "console.err.internal"}
}

// said is e with its message in lang.
func (e *apiError) said(lang locales.Lang) *apiError {
	out := *e
	if e.key != "" {
		args := make([]any, len(e.args))
		for i, a := range e.args {
			if s, ok := a.(string); ok && i%2 == 1 {
				a = locales.Escape(s) // a value is text, never markup
			}
			args[i] = a
		}
		out.Message = locales.Plain(locales.T(lang, e.key, args...))
	}
	return &out
}

// langOf is the language of a request: the page's choice when the shop
// has it, else the admin's Telegram language, else the shop's default.
func (c *Console) langOf(r *http.Request, telegram string) locales.Lang {
	e := c.d.Engine
	if l, ok := locales.Parse(r.Header.Get(LangHeader)); ok {
		return locales.Match(string(l), e.Langs, e.DefaultLang)
	}
	return locales.Match(telegram, e.Langs, e.DefaultLang)
}

// userOf is the console's user of a verified Telegram user: their roles
// are the configured staff's, the gate's input (as the chat's adapter
// gives each update's sender theirs).
func (c *Console) userOf(u initdata.User) flows.User {
	return flows.User{ID: u.ID, LanguageCode: u.LanguageCode, Username: u.Username, FirstName: u.FirstName, Roles: c.d.Staff.Roles(u.ID)}
}

// gated wraps an endpoint: the user verified (initData, or a signed link
// for a download), then the staff gate asked (flows.Engine.ConsoleAllows)
// before the handler runs; a user the gate refuses gets 403 and nothing
// runs.
func (c *Console) gated(e endpoint) http.Handler {
	name := e.name()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		var u flows.User
		if e.link {
			id, ok := c.checkLink(r.PathValue("token"))
			if !ok {
				writeError(w, errAuth.said(c.langOf(r, "")))
				return
			}
			u = c.userOf(initdata.User{ID: id})
		} else {
			data, err := c.verify.Verify(r.Header.Get(InitDataHeader))
			if err != nil {
				writeError(w, errAuth.said(c.langOf(r, "")))
				return
			}
			u = c.userOf(data.User)
		}
		lang := c.langOf(r, u.LanguageCode)
		if !c.d.Engine.ConsoleAllows(name, u) {
			c.log.Info("console: refused by the staff gate", "user", u.ID, "endpoint", name)
			writeError(w, errForbidden.said(lang))
			return
		}
		env := &flows.Env{User: u, Now: c.d.Now(), Lang: lang}
		q := &request{r: r, w: w, user: u, env: env, actor: state.Actor{ID: u.ID, Role: u.RoleName(), Via: state.ViaConsole}}
		res, apiErr := e.h(q)
		if apiErr != nil {
			writeError(w, apiErr.said(lang))
			return
		}
		if res == nil { // the handler wrote the answer itself
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads the request's JSON body into v: one object, at most
// maxBody bytes, no unknown fields.
func (q *request) decode(v any) *apiError {
	if ct := q.r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return bad("console.err.body_type")
	}
	dec := json.NewDecoder(http.MaxBytesReader(q.w, q.r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad("console.err.body", "error", err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("console.err.body", "error", "more than one JSON value")
	}
	return nil
}

// linkKey is the key of the download links: HMAC-SHA256 of the bot token
// under a label of its own, so a link's signature is no initData's.
func (c *Console) linkKey() []byte {
	m := hmac.New(sha256.New, []byte("ShopConsoleLinks"))
	m.Write([]byte(c.d.Token))
	return m.Sum(nil)
}

// link signs a short-lived, single-use download of the export arg for
// user: the token names the user, the expiry, a random nonce (no two
// links are alike) and the export; the download checks the signature,
// the time and the user's roles again, and uses the link up (useLink).
func (c *Console) link(user int64, arg string) string {
	nonce := make([]byte, 9)
	_, _ = rand.Read(nonce) // crypto/rand never fails
	payload := strconv.FormatInt(user, 10) + "|" + strconv.FormatInt(c.d.Now().Add(c.opts.LinkTTL).Unix(), 10) + "|" +
		base64.RawURLEncoding.EncodeToString(nonce) + "|" + arg
	m := hmac.New(sha256.New, c.linkKey())
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkLink returns the user a download link was signed for, if its
// signature holds and it has not expired.
func (c *Console) checkLink(token string) (int64, bool) {
	l, ok := c.readLink(token)
	return l.user, ok
}

// signedLink is what a download link carries.
type signedLink struct {
	user    int64
	expires time.Time
	arg     string
	sig     string // the signature: the link's id once used
}

// readLink checks a download link's signature and expiry and returns what
// it carries.
func (c *Console) readLink(token string) (signedLink, bool) {
	p64, s64, found := strings.Cut(token, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	sig, err2 := base64.RawURLEncoding.DecodeString(s64)
	if !found || err1 != nil || err2 != nil {
		return signedLink{}, false
	}
	m := hmac.New(sha256.New, c.linkKey())
	m.Write(payload)
	if !hmac.Equal(sig, m.Sum(nil)) {
		return signedLink{}, false
	}
	parts := strings.SplitN(string(payload), "|", 4)
	if len(parts) != 4 {
		return signedLink{}, false
	}
	user, err1 := strconv.ParseInt(parts[0], 10, 64)
	exp, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || !c.d.Now().Before(time.Unix(exp, 0)) {
		return signedLink{}, false
	}
	return signedLink{user: user, expires: time.Unix(exp, 0), arg: parts[3], sig: s64}, true
}

// useLink uses a download link up, shared by every replica (Deps.Links):
// it reports false when the link was used before.
func (c *Console) useLink(q *request, l signedLink) (bool, error) {
	if c.d.Links == nil {
		return true, nil
	}
	return c.d.Links.Use(q.r.Context(), l.sig, q.env.Now, l.expires)
}
