package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// PathPrefix is the path prefix under which a Sim serves the API.
const PathPrefix = "/api/v1"

// ImagesPath is where, under PathPrefix, a Sim serves its own images.
const ImagesPath = "/images/"

// TimeLayout is the layout of every timestamp the API writes.
const TimeLayout = time.RFC3339

// APIError is an error answered with the spec's error body.
type APIError struct {
	Status int
	Type   string
	Msg    string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Msg) }

// Invalid is a 400 invalid_request error.
func Invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request", Msg: fmt.Sprintf(format, args...)}
}

// Required returns the value of a required string field of a request
// body, or the invalid_request error naming it.
func Required(v *string, name string) (string, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return "", Invalid("%s is required", name)
	}
	return *v, nil
}

// RequiredInt returns the value of a required integer field of a request
// body, or the invalid_request error naming it.
func RequiredInt(v *int, name string) (int, error) {
	if v == nil {
		return 0, Invalid("%s is required", name)
	}
	return *v, nil
}

// NotFound is a 404 not_found error.
func NotFound(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: "not_found", Msg: fmt.Sprintf(format, args...)}
}

// ErrorType is the error.type that goes with an HTTP status.
func ErrorType(status int) string {
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

// WriteJSON answers v as JSON with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{errorDetail{"server_error", "encoding the response: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// WriteError answers the spec's error body.
func WriteError(w http.ResponseWriter, status int, typ, msg string) {
	WriteJSON(w, status, errorBody{errorDetail{typ, msg}})
}

// Request is one API call as seen by a handler.
type Request struct {
	R     *http.Request
	Path  []string // segments after /api/v1
	Body  []byte
	Now   time.Time // the upstream's clock when the call arrived
	Query map[string][]string
}

// PathNumber parses a path segment that must be an integer of at least 1;
// anything else is a resource that does not exist.
func PathNumber(seg, what string) (int, error) {
	n, err := strconv.Atoi(seg)
	if err != nil || n < 1 || strings.HasPrefix(seg, "+") {
		return 0, NotFound("%s %q not found", what, seg)
	}
	return n, nil
}

// String returns a query parameter, "" when absent.
func (q *Request) String(name string) string {
	if v := q.Query[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Int parses an optional integer query parameter within [lo, hi].
func (q *Request) Int(name string, def, lo, hi int) (int, error) {
	v, ok := q.Query[name]
	if !ok {
		return def, nil
	}
	if len(v) == 0 || v[0] == "" {
		return 0, Invalid("%s must be an integer from %d to %d", name, lo, hi)
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < lo || n > hi {
		return 0, Invalid("%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// Enum parses an optional enumerated query parameter.
func (q *Request) Enum(name string, allowed ...string) (string, error) {
	v, ok := q.Query[name]
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
	return "", Invalid("%s must be one of %s", name, strings.Join(allowed, ", "))
}

// DecodeJSON decodes the request body into dst.
func (q *Request) DecodeJSON(dst any) error {
	if len(bytes.TrimSpace(q.Body)) == 0 {
		return Invalid("a JSON body is required")
	}
	if err := json.Unmarshal(q.Body, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Invalid("%s has the wrong type", te.Field)
		}
		return Invalid("malformed JSON body")
	}
	return nil
}

// ImageURL is the URL the API gives for the image named name when the Sim
// is served at base (for example an httptest server's URL).
func ImageURL(base, name string) string {
	return strings.TrimRight(base, "/") + PathPrefix + ImagesPath + name
}

// Image renders a catalog image for the response: null when there is none,
// an absolute URL as it is, a name as the Sim's own URL on the request's
// host.
func (q *Request) Image(name string) *string {
	if name == "" || strings.Contains(name, "://") {
		return NullString(name)
	}
	scheme := "http"
	if q.R.TLS != nil {
		scheme = "https"
	}
	return Ptr(ImageURL(scheme+"://"+q.R.Host, name))
}

// USD formats a USD amount with 4 decimal places.
func USD(d decimal.Decimal) string { return d.StringFixed(4) }

// TS formats a timestamp in UTC.
func TS(t time.Time) string { return t.UTC().Format(TimeLayout) }

// NullString is a JSON string that is null when empty.
func NullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// List is a catalog list object with a total.
type List struct {
	Object string `json:"object"`
	Data   any    `json:"data"`
	Total  int    `json:"total"`
}

// ApplyLimit returns at most limit items of items (an empty list, not
// null, when there are none).
func ApplyLimit[T any](items []T, limit int) []T {
	if len(items) > limit {
		return items[:limit]
	}
	if items == nil {
		return []T{}
	}
	return items
}
