package reseller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// testKey is the API key of the test client; no error string may contain it.
const testKey = "sk_live_TESTKEY_0123456789abcdef"

// observation is one call of the client's observer.
type observation struct {
	endpoint string
	status   int
}

// testEnv is an httptest.Server mounted under /api/v1, go-github style:
// tests register handlers on mux with route patterns relative to the base.
type testEnv struct {
	t        *testing.T
	mux      *http.ServeMux
	server   *httptest.Server
	client   *Client
	requests atomic.Int64

	mu       sync.Mutex
	sleeps   []time.Duration
	observed []observation
	onSleep  func(ctx context.Context, d time.Duration) error
}

// setup starts a server and a client pointing at it. The client's sleeps
// are recorded and return at once, its jitter is the identity, and every
// request is checked for the common headers.
func setup(t *testing.T, opts ...Option) *testEnv {
	t.Helper()
	env := &testEnv{t: t, mux: http.NewServeMux()}
	api := http.NewServeMux()
	api.Handle("/api/v1/", http.StripPrefix("/api/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env.requests.Add(1)
		testHeaders(t, r)
		env.mux.ServeHTTP(w, r)
	})))
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL)
		http.Error(w, "not here", http.StatusNotFound)
	})
	env.server = httptest.NewServer(api)
	t.Cleanup(env.server.Close)

	base := []Option{
		WithSleep(env.sleep),
		WithJitter(func(d time.Duration) time.Duration { return d }),
		WithObserver(env.observe),
	}
	c, err := New(env.server.URL+"/api/v1/", testKey, append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	env.client = c
	return env
}

func (env *testEnv) sleep(ctx context.Context, d time.Duration) error {
	env.mu.Lock()
	env.sleeps = append(env.sleeps, d)
	hook := env.onSleep
	env.mu.Unlock()
	if hook != nil {
		return hook(ctx, d)
	}
	return ctx.Err()
}

func (env *testEnv) observe(endpoint string, status int, _ time.Duration) {
	env.mu.Lock()
	defer env.mu.Unlock()
	env.observed = append(env.observed, observation{endpoint, status})
}

func (env *testEnv) sleepLog() []time.Duration {
	env.mu.Lock()
	defer env.mu.Unlock()
	return append([]time.Duration(nil), env.sleeps...)
}

func (env *testEnv) observations() []observation {
	env.mu.Lock()
	defer env.mu.Unlock()
	return append([]observation(nil), env.observed...)
}

// testHeaders checks what every request carries.
func testHeaders(t *testing.T, r *http.Request) {
	t.Helper()
	if got, want := r.Header.Get("Authorization"), "Bearer "+testKey; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if got := r.Header.Get("User-Agent"); got == "" {
		t.Errorf("no User-Agent")
	}
	if got := r.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q, want application/json", got)
	}
}

func testMethod(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if r.Method != want {
		t.Errorf("method = %s, want %s", r.Method, want)
	}
}

// testQuery checks the exact query string values.
func testQuery(t *testing.T, r *http.Request, want url.Values) {
	t.Helper()
	got := r.URL.Query()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("query = %v, want %v", got, want)
	}
}

// testJSONBody checks the request body is JSON equal to want and typed as JSON.
func testJSONBody(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(r.Body); err != nil {
		t.Fatalf("reading body: %v", err)
	}
	if !jsonEqual(body.Bytes(), []byte(want)) {
		t.Errorf("body = %s, want %s", body.String(), want)
	}
}

// testNoBody checks that a GET sent no body.
func testNoBody(t *testing.T, r *http.Request) {
	t.Helper()
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	if body.Len() != 0 {
		t.Errorf("unexpected body %q", body.String())
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// fixture reads testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// writeJSON answers with status and body as JSON.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// serveFixture registers pattern to check the request with check and answer
// with the fixture.
func (env *testEnv) serveFixture(pattern, name string, check func(t *testing.T, r *http.Request)) {
	body := fixture(env.t, name)
	env.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if check != nil {
			check(env.t, r)
		}
		writeJSON(w, http.StatusOK, body)
	})
}

func money(s string) Money {
	m, err := ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return m
}

func moneyPtr(s string) *Money {
	m := money(s)
	return &m
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// assertEqual compares got and want field by field: times by Equal, decimals
// by value, raw JSON semantically, nil and empty slices alike.
func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	var diffs []string
	deepDiff("", reflect.ValueOf(got), reflect.ValueOf(want), &diffs)
	for _, d := range diffs {
		t.Error(d)
	}
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	decimalType = reflect.TypeFor[decimal.Decimal]()
	rawType     = reflect.TypeFor[json.RawMessage]()
)

func deepDiff(path string, a, b reflect.Value, diffs *[]string) {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			*diffs = append(*diffs, fmt.Sprintf("%s: validity differs", path))
		}
		return
	}
	if a.Type() != b.Type() {
		*diffs = append(*diffs, fmt.Sprintf("%s: type %s != %s", path, a.Type(), b.Type()))
		return
	}
	switch a.Type() {
	case timeType:
		if !a.Interface().(time.Time).Equal(b.Interface().(time.Time)) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %v, want %v", path, a.Interface(), b.Interface()))
		}
		return
	case decimalType:
		if a.Interface().(decimal.Decimal).Cmp(b.Interface().(decimal.Decimal)) != 0 {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %v, want %v", path, a.Interface(), b.Interface()))
		}
		return
	case rawType:
		x, y := a.Bytes(), b.Bytes()
		if len(x) == 0 && len(y) == 0 {
			return
		}
		if !jsonEqual(x, y) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s, want %s", path, x, y))
		}
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				*diffs = append(*diffs, fmt.Sprintf("%s: got %v, want %v", path, show(a), show(b)))
			}
			return
		}
		deepDiff(path, a.Elem(), b.Elem(), diffs)
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			deepDiff(path+"."+f.Name, a.Field(i), b.Field(i), diffs)
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			*diffs = append(*diffs, fmt.Sprintf("%s: len %d, want %d (%v vs %v)", path, a.Len(), b.Len(), show(a), show(b)))
			return
		}
		for i := range a.Len() {
			deepDiff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i), diffs)
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, show(a), show(b)))
			return
		}
		for _, k := range a.MapKeys() {
			deepDiff(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k), diffs)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*diffs = append(*diffs, fmt.Sprintf("%s: got %#v, want %#v", path, a.Interface(), b.Interface()))
		}
	}
}

func show(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		return fmt.Sprintf("&%+v", v.Elem().Interface())
	}
	if !v.CanInterface() {
		return "?"
	}
	return fmt.Sprintf("%+v", v.Interface())
}

// decodeFixture decodes testdata/name into a new T.
func decodeFixture[T any](t *testing.T, name string) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal(fixture(t, name), v); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return v
}

// noKey fails when s contains the API key.
func noKey(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(s, testKey) {
		t.Errorf("API key leaked in %q", s)
	}
}
