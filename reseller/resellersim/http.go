package resellersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// PathPrefix is the path prefix under which a Sim serves the API.
const PathPrefix = "/api/v1"

const (
	maxBodyBytes  = 6 << 20 // JSON bodies and chat uploads
	maxImageBytes = 5 << 20
	timeLayout    = time.RFC3339
)

// apiError is an error answered with the spec's error body.
type apiError struct {
	status int
	typ    string
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.typ, e.msg) }

func invalid(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request", msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, typ: "not_found", msg: fmt.Sprintf(format, args...)}
}

// errorType is the error.type that goes with an HTTP status.
func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusTooManyRequests:
		return "rate_limited"
	}
	return "server_error"
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{errorDetail{"server_error", "encoding the response: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, errorBody{errorDetail{typ, msg}})
}

// request is one API call as seen by a handler.
type request struct {
	r     *http.Request
	path  []string // segments after /api/v1
	body  []byte
	now   time.Time
	query map[string][]string
}

// handler serves one endpoint with the Sim's lock held.
type handler func(s *Sim, q *request) (any, error)

// route is a resolved endpoint.
type route struct {
	h         handler
	forbidden bool // answers 403 when the account is blocked
	create    bool // creates an order
}

// ServeHTTP serves the API under PathPrefix.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "reading the request body: "+err.Error())
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rel, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok || (rel != "" && rel[0] != '/') {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	rt, found := match(r.Method, segs)

	s.mu.Lock()
	hook := s.faults.onRequest
	var step CreateStep
	var scripted bool
	if rt.create {
		s.faults.creates++
		step, scripted = s.faults.takeCreateStep()
	}
	delay := s.faults.takeDelay(rel)
	var failStatus int
	if !scripted { // a scripted step is the whole fault of its create
		failStatus = s.faults.takeFail(rel)
	}
	s.mu.Unlock()

	if hook != nil {
		hook(r, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if failStatus != 0 {
		if failStatus == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, failStatus, errorType(failStatus), "injected failure")
		return
	}
	if scripted && !step.create {
		s.answerStep(w, r, step, "injected failure before the order was created")
		return
	}
	if len(segs) == 2 && segs[0] == "chat-files" && r.Method == http.MethodGet {
		s.serveFile(w, segs[1])
		return
	}
	if name, ok := strings.CutPrefix(rel, ImagesPath); ok && r.Method == http.MethodGet {
		s.serveImage(w, r, name)
		return
	}
	if len(body) > maxBodyBytes {
		writeError(w, http.StatusBadRequest, "invalid_request", "request body too large")
		return
	}
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "unauthorized", "API key missing or invalid")
		return
	}

	s.mu.Lock()
	now := s.clock()
	if lim := s.faults.rateCheck(now, s.rateLimit, s.rateWindow, w.Header()); lim != nil {
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, "rate_limited", lim.msg)
		return
	}
	if !found {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if rt.forbidden && s.status == StatusBlocked {
		s.mu.Unlock()
		writeError(w, http.StatusForbidden, "forbidden", "account suspended")
		return
	}
	s.advanceLocked(now)
	q := &request{r: r, path: segs, body: body, now: now, query: r.URL.Query()}
	res, herr := rt.h(s, q)
	var cut bool
	var failAfter int
	if herr == nil && rt.create && !scripted {
		cut, failAfter = s.faults.takeAfterCreate()
	}
	created, onCreated := s.createdLocked(herr == nil && rt.create)
	s.mu.Unlock()
	if created != nil && onCreated != nil {
		onCreated(*created)
	}
	if herr == nil && scripted && step.answer != answerNormal {
		s.answerStep(w, r, step, "injected failure after the order was created")
		return
	}

	if herr != nil {
		var ae *apiError
		if !errors.As(herr, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, typ: "server_error", msg: herr.Error()}
		}
		writeError(w, ae.status, ae.typ, ae.msg)
		return
	}
	if cut {
		cutConnection(w)
		return
	}
	if failAfter != 0 {
		writeError(w, failAfter, errorType(failAfter), "injected failure after the order was created")
		return
	}
	if res, ok := res.(rendered); ok {
		writeJSON(w, http.StatusOK, res.render(r))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// createdLocked returns a copy of the order a create just stored and the
// creation hook, when ok and there is a hook.
func (s *Sim) createdLocked(ok bool) (*OrderSnapshot, func(OrderSnapshot)) {
	if !ok || s.faults.onCreated == nil || len(s.orders) == 0 {
		return nil, nil
	}
	o := s.orders[len(s.orders)-1].clone()
	return &o, s.faults.onCreated
}

// answerStep gives the answer of a scripted create step other than the
// normal one.
func (s *Sim) answerStep(w http.ResponseWriter, r *http.Request, st CreateStep, msg string) {
	switch st.answer {
	case answerStatus:
		if st.status == http.StatusTooManyRequests {
			ae := forcedRateLimit(s.clock(), s.rateLimit, st.retryAfter, w.Header())
			writeError(w, ae.status, ae.typ, ae.msg)
			return
		}
		writeError(w, st.status, errorType(st.status), msg)
	case answerCut:
		cutConnection(w)
	case answerHang:
		<-r.Context().Done() // the client gave up: no answer
	}
}

// rendered is a result that needs the request to render (absolute URLs).
type rendered interface {
	render(r *http.Request) any
}

// cutConnection closes the client connection without an answer.
func cutConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (s *Sim) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(auth, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && key == s.apiKey
}

// match resolves an endpoint from the method and path segments.
func match(method string, p []string) (route, bool) {
	get, post := method == http.MethodGet, method == http.MethodPost
	n := len(p)
	at := func(i int, v string) bool { return i < n && p[i] == v }
	switch {
	case get && n == 1 && at(0, "me"):
		return route{h: (*Sim).getMe, forbidden: true}, true
	case get && n == 1 && at(0, "transactions"):
		return route{h: (*Sim).listTransactions, forbidden: true}, true
	case get && n == 2 && at(0, "transactions"):
		return route{h: (*Sim).getTransaction, forbidden: true}, true
	case get && n == 1 && at(0, "orders"):
		return route{h: (*Sim).listOrders}, true
	case get && n == 2 && at(0, "orders"):
		return route{h: (*Sim).getOrder}, true
	case get && n == 3 && at(0, "orders") && at(2, "chat"):
		return route{h: (*Sim).getChat}, true
	case post && n == 3 && at(0, "orders") && at(2, "chat"):
		return route{h: (*Sim).postChat}, true

	case post && n == 2 && at(0, "store-topup") && at(1, "check-login"):
		return route{h: (*Sim).checkLogin}, true
	case post && n == 2 && at(0, "store-topup") && at(1, "order"):
		return route{h: (*Sim).orderStoreTopup, forbidden: true, create: true}, true
	case get && n == 2 && at(0, "store-topup") && at(1, "rates"):
		return route{h: (*Sim).getRates}, true

	case get && n == 2 && at(0, "messenger") && at(1, "stars"):
		return route{h: (*Sim).getStars}, true
	case post && n == 3 && at(0, "messenger") && at(1, "stars") && at(2, "buy"):
		return route{h: (*Sim).orderStars, forbidden: true, create: true}, true
	case get && n == 2 && at(0, "messenger") && at(1, "premium"):
		return route{h: (*Sim).getPremium}, true
	case post && n == 3 && at(0, "messenger") && at(1, "premium") && at(2, "buy"):
		return route{h: (*Sim).orderPremium, forbidden: true, create: true}, true

	case get && n == 1 && at(0, "manual-services"):
		return route{h: (*Sim).listManualServices}, true
	case get && n == 3 && at(0, "manual-services") && at(2, "offers"):
		return route{h: (*Sim).getManualOffers}, true
	case post && n == 2 && at(0, "manual-services") && at(1, "order"):
		return route{h: (*Sim).orderManual, forbidden: true, create: true}, true

	case get && n == 2 && at(0, "store-gifts") && at(1, "games"):
		return route{h: (*Sim).listStoreGames}, true
	case get && n == 3 && at(0, "store-gifts") && at(1, "games"):
		return route{h: (*Sim).getStoreGame}, true
	case post && n == 2 && at(0, "store-gifts") && at(1, "order"):
		return route{h: (*Sim).orderStoreGift, forbidden: true, create: true}, true

	case get && n == 2 && at(0, "gift-cards") && at(1, "categories"):
		return route{h: (*Sim).listGiftCategories}, true
	case get && n == 4 && at(0, "gift-cards") && at(1, "categories") && at(3, "cards"):
		return route{h: (*Sim).getGiftCards}, true
	case get && n == 2 && at(0, "gift-cards") && at(1, "brands"):
		return route{h: (*Sim).listGiftBrands}, true
	case post && n == 2 && at(0, "gift-cards") && at(1, "order"):
		return route{h: (*Sim).orderGiftCard, forbidden: true, create: true}, true

	case get && n == 1 && at(0, "game-keys"):
		return route{h: (*Sim).listGames}, true
	case get && n == 3 && at(0, "game-keys") && at(2, "keys"):
		return route{h: (*Sim).getGameKeys}, true
	case get && n == 3 && at(0, "game-keys") && at(2, "region-restriction"):
		return route{h: (*Sim).getRegionRestriction}, true
	case post && n == 2 && at(0, "game-keys") && at(1, "order"):
		return route{h: (*Sim).orderGameKey, forbidden: true, create: true}, true

	case get && n == 2 && at(0, "top-ups") && at(1, "categories"):
		return route{h: (*Sim).listTopUpCategories}, true
	case get && n == 4 && at(0, "top-ups") && at(1, "categories") && at(3, "offers"):
		return route{h: (*Sim).getTopUpOffers}, true
	case get && n == 2 && at(0, "top-ups") && at(1, "brands"):
		return route{h: (*Sim).listTopUpBrands}, true
	case post && n == 2 && at(0, "top-ups") && at(1, "order"):
		return route{h: (*Sim).orderTopUp, forbidden: true, create: true}, true
	}
	return route{}, false
}

// pathNumber parses a path segment that must be an integer of at least 1;
// anything else is a resource that does not exist.
func pathNumber(seg, what string) (int, error) {
	n, err := strconv.Atoi(seg)
	if err != nil || n < 1 || strings.HasPrefix(seg, "+") {
		return 0, notFound("%s %q not found", what, seg)
	}
	return n, nil
}

// queryString returns a query parameter, "" when absent.
func (q *request) queryString(name string) string {
	if v := q.query[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// queryInt parses an optional integer query parameter within [lo, hi].
func (q *request) queryInt(name string, def, lo, hi int) (int, error) {
	v, ok := q.query[name]
	if !ok {
		return def, nil
	}
	if len(v) == 0 || v[0] == "" {
		return 0, invalid("%s must be an integer from %d to %d", name, lo, hi)
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < lo || n > hi {
		return 0, invalid("%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// queryEnum parses an optional enumerated query parameter.
func (q *request) queryEnum(name string, allowed ...string) (string, error) {
	v, ok := q.query[name]
	if !ok {
		return "", nil
	}
	val := ""
	if len(v) > 0 {
		val = v[0]
	}
	for _, a := range allowed {
		if val == a {
			return val, nil
		}
	}
	return "", invalid("%s must be one of %s", name, strings.Join(allowed, ", "))
}

// decodeJSON decodes the request body into dst.
func (q *request) decodeJSON(dst any) error {
	if len(bytes.TrimSpace(q.body)) == 0 {
		return invalid("a JSON body is required")
	}
	if err := json.Unmarshal(q.body, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid("%s has the wrong type", te.Field)
		}
		return invalid("malformed JSON body")
	}
	return nil
}

// usd formats a USD amount with 4 decimal places.
func usd(d decimal.Decimal) string { return d.StringFixed(4) }

func ts(t time.Time) string { return t.UTC().Format(timeLayout) }

// nullString is a JSON string that is null when empty.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// catalogList is a catalog list object with a total.
type catalogList struct {
	Object string `json:"object"`
	Data   any    `json:"data"`
	Total  int    `json:"total"`
}

// applyLimit returns at most limit items of items.
func applyLimit[T any](items []T, limit int) []T {
	if len(items) > limit {
		return items[:limit]
	}
	if items == nil {
		return []T{}
	}
	return items
}
