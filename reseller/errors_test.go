package reseller

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestErrorMapping(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name        string
		status      int
		body        string
		contentType string
		wantType    string
		wantMsg     string // exact Message
		wantInError string // substring of Error()
		is          func(error) bool
	}{
		{"400", 400, `{"error":{"type":"invalid_request","message":"limit must be <= 100"}}`, "", ErrorTypeInvalidRequest, "limit must be <= 100", "400 invalid_request: limit must be <= 100", IsInvalidRequest},
		{"401", 401, `{"error":{"type":"unauthorized","message":"invalid API key"}}`, "", ErrorTypeUnauthorized, "invalid API key", "401 unauthorized", IsUnauthorized},
		{"403", 403, `{"error":{"type":"forbidden","message":"account suspended"}}`, "", ErrorTypeForbidden, "account suspended", "403 forbidden", IsForbidden},
		{"404", 404, `{"error":{"type":"not_found","message":"order not found"}}`, "", ErrorTypeNotFound, "order not found", "404 not_found", IsNotFound},
		{"429", 429, `{"error":{"type":"rate_limited","message":"slow down"}}`, "", ErrorTypeRateLimited, "slow down", "429 rate_limited", IsRateLimited},
		{"500 server_error", 500, `{"error":{"type":"server_error","message":"oops"}}`, "", ErrorTypeServerError, "oops", "500 server_error: oops", nil},
		{"server_error on 400", 400, `{"error":{"type":"server_error","message":"db down"}}`, "", ErrorTypeServerError, "db down", "400 server_error", IsInvalidRequest},
		{"unknown type kept", 409, `{"error":{"type":"insufficient_balance","message":"top up first","extra":1}}`, "", "insufficient_balance", "top up first", "409 insufficient_balance: top up first", nil},
		{"type by status", 404, `{"error":{"type":"","message":"gone"}}`, "", "", "gone", "404 Not Found: gone", IsNotFound},
		{"non-JSON body", 502, "<html><body>Bad Gateway</body></html>", "text/html", "", "<html><body>Bad Gateway</body></html>", "502 Bad Gateway: <html>", nil},
		{"empty body", 503, "", "text/plain", "", "", "503 Service Unavailable", nil},
		{"JSON without error", 400, `{"message":"nope"}`, "", "", `{"message":"nope"}`, `400 Bad Request: {"message":"nope"}`, IsInvalidRequest},
		{"control characters", 500, "line1\nline2\x00", "text/plain", "", "line1 line2", "line1 line2", nil},
		{"long body capped", 500, long, "text/plain", "", long[:maxErrorSnippet] + "...", "xxx...", nil},
		{"key in message", 401, `{"error":{"type":"unauthorized","message":"key ` + testKey + ` revoked"}}`, "", ErrorTypeUnauthorized, "key [REDACTED] revoked", "[REDACTED]", IsUnauthorized},
		{"key in type", 401, `{"error":{"type":"` + testKey + `","message":"x"}}`, "", "[REDACTED]", "x", "[REDACTED]", IsUnauthorized},
		{"key in non-JSON body", 500, "upstream echoed Bearer " + testKey, "text/plain", "", "upstream echoed Bearer [REDACTED]", "[REDACTED]", nil},
		{"key across the cut", 500, strings.Repeat("y", 250) + testKey, "text/plain", "", strings.Repeat("y", 250) + "[REDAC...", "y[REDAC...", nil},
		{"unexpected redirect", 302, "", "text/plain", "", "", "302 Found", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := setup(t, WithMaxAttempts(1))
			env.mux.HandleFunc("GET /orders/{number}", func(w http.ResponseWriter, r *http.Request) {
				ct := tt.contentType
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				if tt.status == 302 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			})
			_, err := env.client.Order(t.Context(), 42)
			if err == nil {
				t.Fatal("no error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %T %v, want *Error", err, err)
			}
			if e.Status != tt.status || e.Type != tt.wantType || e.Message != tt.wantMsg || e.Endpoint != "GET /orders/{number}" {
				t.Errorf("Error = %+v", e)
			}
			if !strings.Contains(err.Error(), tt.wantInError) {
				t.Errorf("Error() = %q, want it to contain %q", err.Error(), tt.wantInError)
			}
			noKey(t, err.Error())
			noKey(t, fmt.Sprintf("%+v %#v", err, err))
			for _, is := range []func(error) bool{IsInvalidRequest, IsUnauthorized, IsForbidden, IsNotFound, IsRateLimited} {
				want := tt.is != nil && fmt.Sprintf("%p", is) == fmt.Sprintf("%p", tt.is)
				if is(err) != want {
					t.Errorf("helper %p = %v, want %v", is, is(err), want)
				}
			}
			if env.requests.Load() != 1 {
				t.Errorf("requests = %d", env.requests.Load())
			}
		})
	}
}

func TestErrorHelpersOnOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("plain"), &ValidationError{Field: "x", Reason: "y"}} {
		if IsNotFound(err) || IsUnauthorized(err) || IsForbidden(err) || IsInvalidRequest(err) || IsRateLimited(err) || IsOutcomeUnknown(err) {
			t.Errorf("a helper matched %v", err)
		}
	}
	wrapped := fmt.Errorf("checkout: %w", &Error{Status: 404, Type: ErrorTypeNotFound})
	if !IsNotFound(wrapped) {
		t.Error("IsNotFound should see through wrapping")
	}
	var nilRL *RateLimitError = &RateLimitError{}
	if nilRL.Unwrap() != nil || nilRL.Error() == "" {
		t.Error("empty RateLimitError")
	}
}

func TestValidationErrorString(t *testing.T) {
	err := &ValidationError{Field: "quantity", Reason: "must be between 1 and 100, got 0"}
	if got := err.Error(); got != "reseller: invalid quantity: must be between 1 and 100, got 0" {
		t.Errorf("Error() = %q", got)
	}
}
