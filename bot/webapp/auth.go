package webapp

import (
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
)

// InitDataHeader carries the page's initData (Telegram.WebApp.initData) on
// every API request.
const InitDataHeader = "X-Telegram-Init-Data"

// LangHeader carries the language the buyer chose on the page ("en", "ru",
// "uk"); without it the page speaks the language of the buyer's Telegram.
const LangHeader = "X-Shop-Lang"

// maxBody bounds a request's JSON body.
const maxBody = 16 << 10

// request is one authenticated API request: the verified buyer and the env
// the flows see them in.
type request struct {
	r    *http.Request
	w    http.ResponseWriter
	env  *flows.Env
	data *initdata.Data
}

// apiError is an API answer other than 200: its status, a stable code for
// the page and a message for the buyer (plain text, in their language).
type apiError struct {
	status  int
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"` // the refused field, for bad_field
	retry   time.Duration
}

// The API's fixed errors; messages are filled in the buyer's language.
var (
	errNotFound = &apiError{status: http.StatusNotFound, Code: "not_found"}
	errAuth     = &apiError{status: http.StatusUnauthorized, Code: "auth"}
)

// fail answers with an error of status and code, its message the buyer's
// text of locale key (none when key is "").
func fail(status int, code string, env *flows.Env, key string, kv ...any) *apiError {
	e := &apiError{status: status, Code: code}
	if key != "" && env != nil {
		e.Message = plain(env.T(key, kv...))
	}
	return e
}

// badRequest is a 400 saying what is wrong with the request (for the
// page's developer as much as for the buyer).
func badRequest(env *flows.Env, detail string) *apiError {
	e := fail(http.StatusBadRequest, "bad_request", env, "webapp.error")
	e.Message += " (" + detail + ")"
	return e
}

// langOf is the language of a request: the page's choice when the shop
// has it, else the buyer's Telegram language, else the shop's default.
func (a *App) langOf(r *http.Request, telegram string) locales.Lang {
	e := a.d.Engine
	if l, ok := locales.Parse(r.Header.Get(LangHeader)); ok {
		return locales.Match(string(l), e.Langs, e.DefaultLang)
	}
	return locales.Match(telegram, e.Langs, e.DefaultLang)
}

// authed wraps an API handler: the initData verified (401 otherwise), the
// buyer's request counted (429 over the limit), the answer written as
// JSON. Nothing the page sends names the buyer but the verified user.
func (a *App) authed(h func(*request) (any, *apiError)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		data, err := a.verify.Verify(r.Header.Get(InitDataHeader))
		if err != nil {
			env := &flows.Env{Lang: a.langOf(r, "")}
			e := *errAuth
			e.Message = plain(env.T("webapp.auth_failed"))
			if errors.Is(err, initdata.ErrExpired) {
				e.Code = "auth_expired"
			}
			writeJSON(w, e.status, map[string]any{"error": e})
			return
		}
		u := data.User
		env := &flows.Env{
			Lang: a.langOf(r, u.LanguageCode), Now: a.d.Now(),
			User: flows.User{ID: u.ID, LanguageCode: u.LanguageCode, Username: u.Username, FirstName: u.FirstName},
		}
		if a.d.Limiter != nil {
			ok, wait, err := a.d.Limiter.Allow(r.Context(), "web:u:"+strconv.FormatInt(u.ID, 10))
			if err != nil {
				a.log.Warn("mini app rate limit", "user", u.ID, "err", err)
				writeError(w, fail(http.StatusServiceUnavailable, "unavailable", env, "webapp.error"))
				return
			}
			if !ok {
				writeError(w, rateLimited(env, wait))
				return
			}
		}
		res, apiErr := h(&request{r: r, w: w, env: env, data: data})
		if apiErr != nil {
			if apiErr.Message == "" {
				apiErr = withMessage(apiErr, env)
			}
			writeError(w, apiErr)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// withMessage fills a fixed error's message in env's language.
func withMessage(e *apiError, env *flows.Env) *apiError {
	c := *e
	switch c.Code {
	case "not_found":
		c.Message = plain(env.T("webapp.not_found"))
	default:
		c.Message = plain(env.T("webapp.error"))
	}
	return &c
}

// rateLimited is the 429 of a buyer over a limit: the chat's words, and
// Retry-After.
func rateLimited(env *flows.Env, wait time.Duration) *apiError {
	n := max(int64((wait+time.Second-1)/time.Second), 1)
	e := fail(http.StatusTooManyRequests, "rate_limited", env, "")
	e.Message = plain(env.N("err.rate_limited", n))
	e.retry = time.Duration(n) * time.Second
	return e
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(e.retry/time.Second)))
	}
	writeJSON(w, e.status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads the request's JSON body into v: at most maxBody bytes, one
// object, no fields v does not have.
func (q *request) decode(v any) *apiError {
	if ct := q.r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return badRequest(q.env, "the body must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(q.w, q.r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			e := badRequest(q.env, "the body is over "+strconv.Itoa(maxBody)+" bytes")
			e.status = http.StatusRequestEntityTooLarge
			return e
		}
		return badRequest(q.env, "the body is not the JSON object expected: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest(q.env, "the body holds more than one JSON value")
	}
	return nil
}
