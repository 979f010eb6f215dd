package botapitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
)

// recordingTB is a testing.TB whose Errorf is captured instead of failing
// the test, to prove that violations are reported.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// newBot returns a go-telegram/bot client talking to s.
func newBot(t *testing.T, s *Server) *bot.Bot {
	t.Helper()
	b, err := bot.New(s.Token(), bot.WithServerURL(s.URL()), bot.WithSkipGetMe(),
		bot.WithErrorsHandler(func(err error) { t.Logf("bot: %v", err) }))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apiAnswer is a decoded Bot API answer.
type apiAnswer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// post sends a raw request and decodes the answer.
func post(t *testing.T, s *Server, method, contentType, body string) (int, apiAnswer) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/bot"+s.Token()+"/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var a apiAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("decode %s answer %q: %v", method, data, err)
	}
	return resp.StatusCode, a
}

// postJSON sends params as an application/json body.
func postJSON(t *testing.T, s *Server, method string, params any) (int, apiAnswer) {
	t.Helper()
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	return post(t, s, method, "application/json", string(body))
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
