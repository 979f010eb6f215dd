package reseller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestNew(t *testing.T) {
	for _, base := range []string{
		"", "api/v1", "/api/v1", "ftp://host/api/v1", "http:///api/v1", "https://host/api/v1?x=1",
		"https://host/api/v1#frag", "mailto:someone@example.com", "://bad",
	} {
		if _, err := New(base, testKey); err == nil {
			t.Errorf("New(%q) accepted", base)
		}
	}
	for _, key := range []string{"", "with space", "line\nbreak"} {
		_, err := New("https://host/api/v1", key)
		if err == nil {
			t.Errorf("New with key %q accepted", key)
		} else if key != "" && strings.Contains(err.Error(), key) {
			t.Errorf("error reveals the key: %v", err)
		}
	}
	for _, opt := range []Option{WithHTTPClient(nil), WithTimeout(0), WithMaxAttempts(0), WithClock(nil),
		WithSleep(nil), WithJitter(nil), WithUserAgent(""), WithBackoff(time.Second, time.Millisecond), WithMaxRetryWait(-1)} {
		if _, err := New("https://host/api/v1", testKey, opt); err == nil {
			t.Error("invalid option accepted")
		}
	}
}

func TestNew_baseURLForms(t *testing.T) {
	for _, suffix := range []string{"/api/v1", "/api/v1/", "/api/v1//"} {
		env := setup(t)
		c, err := New(env.server.URL+suffix, testKey, WithMaxAttempts(1))
		if err != nil {
			t.Fatal(err)
		}
		env.serveFixture("GET /me", "account.json", func(t *testing.T, r *http.Request) {
			if r.RequestURI != "/api/v1/me" {
				t.Errorf("%s: RequestURI = %s", suffix, r.RequestURI)
			}
		})
		if _, err := c.Me(t.Context()); err != nil {
			t.Errorf("%s: %v", suffix, err)
		}
	}
}

func TestClientStringHidesKey(t *testing.T) {
	c, err := New("https://user:pass@host.example/api/v1", testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		noKey(t, s)
		if strings.Contains(s, "pass") {
			t.Errorf("password leaked: %s", s)
		}
	}
	if !strings.Contains(c.String(), "host.example") {
		t.Errorf("String() = %s", c.String())
	}
}

func TestHeaders(t *testing.T) {
	env := setup(t)
	env.mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		if ua := r.Header.Get("User-Agent"); ua != DefaultUserAgent {
			t.Errorf("User-Agent = %q, want %q", ua, DefaultUserAgent)
		}
		writeJSON(w, http.StatusOK, fixture(t, "account.json"))
	})
	if _, err := env.client.Me(t.Context()); err != nil {
		t.Fatal(err)
	}

	env2 := setup(t, WithUserAgent("shopbot/2.0 (+ops)"))
	env2.mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		if ua := r.Header.Get("User-Agent"); ua != "shopbot/2.0 (+ops)" {
			t.Errorf("User-Agent = %q", ua)
		}
		writeJSON(w, http.StatusOK, fixture(t, "account.json"))
	})
	if _, err := env2.client.Me(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestObserverRouteTemplates(t *testing.T) {
	env := setup(t)
	env.serveFixture("GET /orders/{number}", "order_gift_card.json", nil)
	env.mux.HandleFunc("GET /game-keys/{gameId}/keys", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, []byte(`{"error":{"type":"not_found","message":"no game"}}`))
	})
	if _, err := env.client.Order(t.Context(), 1006); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.GameKeyOffers(t.Context(), "nope"); !IsNotFound(err) {
		t.Fatalf("err = %v", err)
	}
	want := []observation{{"GET /orders/{number}", 200}, {"GET /game-keys/{gameId}/keys", 404}}
	if got := env.observations(); !slices.Equal(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

// flaky answers with the given statuses in turn, then 200 with body.
func flaky(env *testEnv, pattern string, body []byte, statuses ...int) *atomic.Int64 {
	var calls atomic.Int64
	env.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		if n <= len(statuses) {
			st := statuses[n-1]
			if st == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "2")
				writeJSON(w, st, []byte(`{"error":{"type":"rate_limited","message":"slow down"}}`))
				return
			}
			writeJSON(w, st, []byte(`{"error":{"type":"server_error","message":"try later"}}`))
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
	return &calls
}

func TestRetry_429ThenSuccess(t *testing.T) {
	env := setup(t)
	calls := flaky(env, "GET /me", fixture(t, "account.json"), http.StatusTooManyRequests)
	if _, err := env.client.Me(t.Context()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 {
		t.Errorf("requests = %d, want 2", calls.Load())
	}
	if got := env.sleepLog(); !slices.Equal(got, []time.Duration{2 * time.Second}) {
		t.Errorf("sleeps = %v, want [2s] (Retry-After)", got)
	}
	want := []observation{{"GET /me", 429}, {"GET /me", 200}}
	if got := env.observations(); !slices.Equal(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

func TestRetry_5xxThenSuccess(t *testing.T) {
	env := setup(t)
	calls := flaky(env, "GET /orders/{number}", fixture(t, "order_gift_card.json"), 500, 502)
	if _, err := env.client.Order(t.Context(), 1006); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 {
		t.Errorf("requests = %d, want 3", calls.Load())
	}
	if got, want := env.sleepLog(), []time.Duration{DefaultBackoffBase, 2 * DefaultBackoffBase}; !slices.Equal(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}
}

func TestRetry_attemptsBounded(t *testing.T) {
	for _, tt := range []struct {
		opts  []Option
		calls int64
	}{
		{nil, DefaultMaxAttempts},
		{[]Option{WithMaxAttempts(2)}, 2},
		{[]Option{WithMaxAttempts(1)}, 1},
	} {
		env := setup(t, tt.opts...)
		calls := flaky(env, "GET /me", nil, 503, 503, 503, 503, 503, 503)
		_, err := env.client.Me(t.Context())
		var e *Error
		if !errors.As(err, &e) || e.Status != 503 || e.Type != ErrorTypeServerError {
			t.Errorf("err = %v", err)
		}
		if calls.Load() != tt.calls {
			t.Errorf("requests = %d, want %d", calls.Load(), tt.calls)
		}
		if n := len(env.sleepLog()); int64(n) != tt.calls-1 {
			t.Errorf("sleeps = %d, want %d", n, tt.calls-1)
		}
	}
}

func TestRetry_backoffCappedAndJittered(t *testing.T) {
	env := setup(t, WithMaxAttempts(6), WithBackoff(time.Second, 3*time.Second))
	flaky(env, "GET /me", nil, 500, 500, 500, 500, 500, 500)
	env.client.Me(t.Context())
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second}
	if got := env.sleepLog(); !slices.Equal(got, want) {
		t.Errorf("sleeps = %v, want %v", got, want)
	}

	env = setup(t, WithMaxAttempts(3), WithBackoff(time.Second, 10*time.Second),
		WithJitter(func(d time.Duration) time.Duration { return d / 4 }))
	flaky(env, "GET /me", nil, 500, 500, 500)
	env.client.Me(t.Context())
	if got, want := env.sleepLog(), []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("jittered sleeps = %v, want %v", got, want)
	}
}

func TestRetry_contextCancelStops(t *testing.T) {
	env := setup(t)
	calls := flaky(env, "GET /me", nil, 503, 503, 503, 503)
	ctx, cancel := context.WithCancel(t.Context())
	env.onSleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}
	_, err := env.client.Me(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if calls.Load() != 1 {
		t.Errorf("requests = %d, want 1", calls.Load())
	}
}

func TestRetry_deadlineShorterThanWait(t *testing.T) {
	env := setup(t)
	calls := flaky(env, "GET /me", nil, 429, 429)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second) // Retry-After is 2s
	defer cancel()
	_, err := env.client.Me(ctx)
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		t.Errorf("err = %v, want *RateLimitError", err)
	}
	if calls.Load() != 1 || len(env.sleepLog()) != 0 {
		t.Errorf("requests = %d, sleeps = %v", calls.Load(), env.sleepLog())
	}
}

func TestRateLimitError(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	env := setup(t, WithMaxAttempts(1), WithClock(func() time.Time { return now }))
	env.mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Retry-After", "7")
		h.Set("X-RateLimit-Limit", "120")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", "30")
		h.Set("X-Ratelimit-Window", "1m")
		h.Set("X-Other", "x")
		writeJSON(w, http.StatusTooManyRequests, []byte(`{"error":{"type":"rate_limited","message":"too many requests"}}`))
	})
	_, err := env.client.Me(t.Context())
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %T %v", err, err)
	}
	if rl.RetryAfter != 7*time.Second || rl.Limit == nil || *rl.Limit != 120 || rl.Remaining == nil || *rl.Remaining != 0 ||
		!rl.Reset.Equal(now.Add(30*time.Second)) {
		t.Errorf("rate limit = %+v", rl)
	}
	wantHeaders := map[string]string{"X-Ratelimit-Limit": "120", "X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "30", "X-Ratelimit-Window": "1m"}
	if fmt.Sprint(rl.Headers) != fmt.Sprint(wantHeaders) {
		t.Errorf("Headers = %v, want %v", rl.Headers, wantHeaders)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != 429 || e.Type != ErrorTypeRateLimited || !IsRateLimited(err) {
		t.Errorf("wrapped error = %+v", e)
	}
	if !strings.Contains(err.Error(), "retry after 7s") {
		t.Errorf("Error() = %s", err)
	}
}

func TestRetry_longRetryAfterReturnedAtOnce(t *testing.T) {
	env := setup(t)
	var calls atomic.Int64
	env.mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "120")
		writeJSON(w, http.StatusTooManyRequests, []byte(`{"error":{"type":"rate_limited","message":"later"}}`))
	})
	_, err := env.client.Me(t.Context())
	var rl *RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Minute {
		t.Errorf("err = %v", err)
	}
	if calls.Load() != 1 || len(env.sleepLog()) != 0 {
		t.Errorf("requests = %d, sleeps = %v", calls.Load(), env.sleepLog())
	}
}

func TestRetry_getNetworkErrorThenSuccess(t *testing.T) {
	env := setup(t)
	var calls atomic.Int64
	env.mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			cutConnection(t, w)
			return
		}
		writeJSON(w, http.StatusOK, fixture(t, "account.json"))
	})
	if _, err := env.client.Me(t.Context()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 2 {
		t.Errorf("requests = %d, want at least 2", calls.Load())
	}
	if obs := env.observations(); len(obs) != 2 || obs[0].status != 0 || obs[1].status != 200 {
		t.Errorf("observed %v", obs)
	}
}

// cutConnection closes the connection without answering.
func cutConnection(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Fatalf("hijack: %v", err)
	}
	conn.Close()
}

var giftReq = &GiftCardOrderRequest{CategoryID: "cat-psn-us", CardID: "psn-10", Quantity: 1}

// assertOutcomeUnknown checks err is an *OutcomeUnknownError of the gift-card create.
func assertOutcomeUnknown(t *testing.T, err error) *OutcomeUnknownError {
	t.Helper()
	var u *OutcomeUnknownError
	if !errors.As(err, &u) {
		t.Fatalf("err = %T %v, want *OutcomeUnknownError", err, err)
	}
	if u.Endpoint != "POST /gift-cards/order" || !IsOutcomeUnknown(err) {
		t.Errorf("OutcomeUnknownError = %+v", u)
	}
	noKey(t, err.Error())
	return u
}

func TestCreate_5xxIsOutcomeUnknown(t *testing.T) {
	env := setup(t)
	calls := flaky(env, "POST /gift-cards/order", fixture(t, "order_gift_card.json"), 502)
	_, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
	u := assertOutcomeUnknown(t, err)
	var e *Error
	if !errors.As(u.Err, &e) || e.Status != 502 {
		t.Errorf("inner = %v", u.Err)
	}
	if IsNotFound(err) || IsInvalidRequest(err) {
		t.Error("an unknown outcome matched a clean-failure helper")
	}
	if calls.Load() != 1 || len(env.sleepLog()) != 0 {
		t.Errorf("requests = %d, sleeps = %v; want exactly one request", calls.Load(), env.sleepLog())
	}
}

func TestCreate_connectionCutAfterWriteIsOutcomeUnknown(t *testing.T) {
	env := setup(t)
	var calls atomic.Int64
	env.mux.HandleFunc("POST /gift-cards/order", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		testJSONBody(t, r, `{"category_id":"cat-psn-us","card_id":"psn-10","quantity":1}`)
		cutConnection(t, w)
	})
	_, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
	assertOutcomeUnknown(t, err)
	if calls.Load() != 1 {
		t.Errorf("requests = %d, want exactly 1", calls.Load())
	}
}

func TestCreate_timeoutAfterSendIsOutcomeUnknown(t *testing.T) {
	env := setup(t, WithTimeout(100*time.Millisecond))
	var calls atomic.Int64
	release := make(chan struct{})
	defer close(release)
	env.mux.HandleFunc("POST /gift-cards/order", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	_, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
	u := assertOutcomeUnknown(t, err)
	if !errors.Is(u, context.DeadlineExceeded) {
		t.Errorf("inner = %v, want a deadline", u.Err)
	}
	if calls.Load() != 1 {
		t.Errorf("requests = %d, want exactly 1", calls.Load())
	}
}

func TestCreate_callerCancelAfterSendIsOutcomeUnknown(t *testing.T) {
	env := setup(t)
	ctx, cancel := context.WithCancel(t.Context())
	release := make(chan struct{})
	defer close(release)
	env.mux.HandleFunc("POST /gift-cards/order", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
		cancel()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	_, err := env.client.CreateGiftCardOrder(ctx, giftReq)
	assertOutcomeUnknown(t, err)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to wrap context.Canceled", err)
	}
	if env.requests.Load() != 1 {
		t.Errorf("requests = %d", env.requests.Load())
	}
}

func TestCreate_undecodableBodyIsOutcomeUnknown(t *testing.T) {
	for _, body := range []string{``, `<html>ok</html>`, `{"object":"order","number":"x"}`, `{"object":"order"}`, `{"error":{"type":"x"}}`} {
		env := setup(t)
		env.mux.HandleFunc("POST /gift-cards/order", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, []byte(body))
		})
		_, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
		assertOutcomeUnknown(t, err)
		if env.requests.Load() != 1 {
			t.Errorf("%q: requests = %d", body, env.requests.Load())
		}
	}
}

func TestCreate_400IsCleanFailure(t *testing.T) {
	env := setup(t)
	env.mux.HandleFunc("POST /gift-cards/order", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error":{"type":"invalid_request","message":"insufficient balance"}}`))
	})
	_, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
	if !IsInvalidRequest(err) || IsOutcomeUnknown(err) {
		t.Errorf("err = %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Message != "insufficient balance" {
		t.Errorf("err = %+v", e)
	}
	if env.requests.Load() != 1 {
		t.Errorf("requests = %d", env.requests.Load())
	}
}

// TestCreate429ReturnsAtOnceWithRetryAfter: a 429 on an order-creating POST
// is never waited out inside the call, however short its Retry-After (the
// default WithMaxRetryWait of 30s would allow 25s): the call ends after one
// request with a *RateLimitError carrying RetryAfter, which is not
// outcome-unknown (nothing was created).
func TestCreate429ReturnsAtOnceWithRetryAfter(t *testing.T) {
	for _, retryAfter := range []string{"25", "1", ""} {
		t.Run("Retry-After="+retryAfter, func(t *testing.T) {
			env := setup(t)
			env.onSleep = func(context.Context, time.Duration) error {
				t.Error("the create call waited")
				return nil
			}
			var calls atomic.Int64
			env.mux.HandleFunc("POST /gift-cards/order", func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) > 1 {
					writeJSON(w, http.StatusOK, fixture(t, "order_gift_card.json"))
					return
				}
				if retryAfter != "" {
					w.Header().Set("Retry-After", retryAfter)
				}
				writeJSON(w, http.StatusTooManyRequests, []byte(`{"error":{"type":"rate_limited","message":"slow down"}}`))
			})
			got, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
			if got != nil {
				t.Fatalf("order %d returned after a 429", got.Number)
			}
			var rl *RateLimitError
			if !errors.As(err, &rl) {
				t.Fatalf("err = %v, want *RateLimitError", err)
			}
			want := time.Duration(0)
			if retryAfter != "" {
				n, _ := strconv.Atoi(retryAfter)
				want = time.Duration(n) * time.Second
			}
			if rl.RetryAfter != want {
				t.Errorf("RetryAfter = %v, want %v", rl.RetryAfter, want)
			}
			if !IsRateLimited(err) || IsOutcomeUnknown(err) {
				t.Errorf("IsRateLimited = %v, IsOutcomeUnknown = %v, want true, false", IsRateLimited(err), IsOutcomeUnknown(err))
			}
			if calls.Load() != 1 || len(env.sleepLog()) != 0 {
				t.Errorf("requests = %d, sleeps = %v: want one request and no wait", calls.Load(), env.sleepLog())
			}
		})
	}
}

// Every order-creating endpoint returns a 429 at once; reads and the
// check-login POST still wait it out (TestRetry_429ThenSuccess).
func TestCreate429AtOnceOnEveryCreateEndpoint(t *testing.T) {
	env := setup(t)
	var calls atomic.Int64
	env.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "3")
		writeJSON(w, http.StatusTooManyRequests, []byte(`{"error":{"type":"rate_limited","message":"slow down"}}`))
	})
	ctx := t.Context()
	c := env.client
	creates := map[string]func() (*Order, error){
		"store top-up": func() (*Order, error) {
			return c.CreateStoreTopupOrder(ctx, &StoreTopupOrderRequest{StoreLogin: "gaben", Amount: decimal.RequireFromString("5")})
		},
		"stars": func() (*Order, error) {
			return c.BuyStars(ctx, &StarsOrderRequest{MessengerUsername: "alice", Quantity: 50})
		},
		"premium": func() (*Order, error) {
			return c.BuyPremium(ctx, &PremiumOrderRequest{MessengerUsername: "alice", Months: 3})
		},
		"manual": func() (*Order, error) {
			return c.CreateManualServiceOrder(ctx, &ManualServiceOrderRequest{ServiceID: "s", ProductID: "p", Fields: map[string]string{"login": "x"}})
		},
		"store gift": func() (*Order, error) {
			return c.CreateStoreGiftOrder(ctx, &StoreGiftOrderRequest{AppID: 1, SubID: 2, Region: "EU", InviteURL: "https://s.team/p/abc"})
		},
		"gift card": func() (*Order, error) { return c.CreateGiftCardOrder(ctx, giftReq) },
		"game key": func() (*Order, error) {
			return c.CreateGameKeyOrder(ctx, &GameKeyOrderRequest{GameID: "g", KeyID: "k", Quantity: 1})
		},
		"game top-up": func() (*Order, error) {
			return c.CreateTopUpOrder(ctx, &TopUpOrderRequest{CategoryID: "c", OfferID: "o", Fields: map[string]string{"player_id": "1"}})
		},
	}
	for name, create := range creates {
		before := calls.Load()
		_, err := create()
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != 3*time.Second || IsOutcomeUnknown(err) {
			t.Errorf("%s: err = %v, want *RateLimitError with RetryAfter 3s", name, err)
		}
		if n := calls.Load() - before; n != 1 {
			t.Errorf("%s: %d requests, want 1", name, n)
		}
	}
	if got := env.sleepLog(); len(got) != 0 {
		t.Errorf("sleeps = %v, want none", got)
	}
	// A read still waits a 429 out, up to the attempts.
	if _, err := c.Me(ctx); !IsRateLimited(err) {
		t.Fatalf("Me: err = %v", err)
	}
	if got := env.sleepLog(); !slices.Equal(got, []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}) {
		t.Errorf("read sleeps = %v, want three Retry-After waits", got)
	}
}

// closedAddr returns the address of a port nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestCreate_retriedAfterDialError(t *testing.T) {
	dead := closedAddr(t)
	var dials atomic.Int64
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			addr = dead // the first connection attempt is refused
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	env := setup(t, WithHTTPClient(&http.Client{Transport: tr}))
	calls := flaky(env, "POST /gift-cards/order", fixture(t, "order_gift_card.json"))
	got, err := env.client.CreateGiftCardOrder(t.Context(), giftReq)
	if err != nil {
		t.Fatal(err)
	}
	if got.Number != 1006 || calls.Load() != 1 || dials.Load() != 2 {
		t.Errorf("order %d, requests %d, dials %d", got.Number, calls.Load(), dials.Load())
	}
	want := []observation{{"POST /gift-cards/order", 0}, {"POST /gift-cards/order", 200}}
	if got := env.observations(); !slices.Equal(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

func TestCreate_closedPortIsPlainError(t *testing.T) {
	var obs []int
	var sleeps int
	c, err := New("http://"+closedAddr(t)+"/api/v1", testKey,
		WithSleep(func(ctx context.Context, d time.Duration) error { sleeps++; return nil }),
		WithObserver(func(_ string, status int, _ time.Duration) { obs = append(obs, status) }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateGiftCardOrder(t.Context(), giftReq)
	if err == nil || IsOutcomeUnknown(err) {
		t.Fatalf("err = %v, want a plain dial error (nothing was sent)", err)
	}
	if op := (*net.OpError)(nil); !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("err = %v, want a dial error", err)
	}
	noKey(t, err.Error())
	if !slices.Equal(obs, []int{0, 0, 0, 0}) || sleeps != 3 {
		t.Errorf("observed %v, sleeps %d; want 4 attempts", obs, sleeps)
	}
}

// roundTripFunc is an http.RoundTripper that reports no trace events.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestCreate_untracedTransportErrorIsOutcomeUnknown(t *testing.T) {
	var calls int
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return nil, errors.New("proxy reset, key " + r.Header.Get("Authorization"))
	})}
	c, err := New("https://upstream.example/api/v1", testKey, WithHTTPClient(hc),
		WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateGiftCardOrder(t.Context(), giftReq)
	assertOutcomeUnknown(t, err)
	if calls != 1 {
		t.Errorf("calls = %d, want 1: an unprovable send must not be retried", calls)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("Error() = %s", err)
	}

	// The same failure on a GET is retried, and still scrubbed.
	calls = 0
	_, err = c.Me(t.Context())
	if calls != DefaultMaxAttempts || err == nil {
		t.Errorf("GET: calls = %d, err = %v", calls, err)
	}
	noKey(t, err.Error())
}

// A caller that limits the wait (LimitRetryWait: a placement slot holder)
// gets a 429 with a longer Retry-After back at once; a shorter one is still
// waited out.
func TestLimitRetryWaitReturnsALongerRateLimitAtOnce(t *testing.T) {
	env := setup(t)
	calls := flaky(env, "GET /me", fixture(t, "account.json"), http.StatusTooManyRequests)
	_, err := env.client.Me(LimitRetryWait(t.Context(), time.Second))
	var rl *RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Fatalf("err = %v, want the 429 with its Retry-After of 2s", err)
	}
	if calls.Load() != 1 || len(env.sleepLog()) != 0 {
		t.Fatalf("requests = %d, sleeps = %v: want one request and no wait", calls.Load(), env.sleepLog())
	}
	env = setup(t)
	flaky(env, "GET /me", fixture(t, "account.json"), http.StatusTooManyRequests)
	if _, err := env.client.Me(LimitRetryWait(t.Context(), 3*time.Second)); err != nil {
		t.Fatalf("a Retry-After within the limit: %v", err)
	}
	if got := env.sleepLog(); !slices.Equal(got, []time.Duration{2 * time.Second}) {
		t.Errorf("sleeps = %v, want [2s]", got)
	}
}
