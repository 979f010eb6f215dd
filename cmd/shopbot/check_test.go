package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"shopbot/bot/botapitest"
	"shopbot/reseller/resellersim"
	"shopbot/state/statetest"
)

const checkToken = "424242:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCC-secret"

func checkEnv(t *testing.T, over map[string]string) (func(string) string, *resellersim.Sim, *botapitest.Server) {
	fake := botapitest.NewT(t, botapitest.WithToken(checkToken))
	sim := resellersim.New(resellersim.Config{APIKey: goodKey})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	redisURL := "redis://" + statetest.Addr(t) + "/0"
	base := map[string]string{
		"TELEGRAM_TOKEN": checkToken, "TELEGRAM_API_URL": fake.URL(),
		"RESELLER_BASE_URL": srv.URL + "/api/v1", "RESELLER_API_KEY": goodKey, "REDIS_URL": redisURL,
	}
	for k, v := range over {
		base[k] = v
	}
	return func(k string) string { return base[k] }, sim, fake
}

func runCheck(t *testing.T, getenv func(string) string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, getenv, strings.NewReader(""), &out, &errOut)
	s := out.String() + errOut.String()
	if strings.Contains(s, checkToken) || strings.Contains(s, goodKey) {
		t.Fatalf("a secret in the output:\n%s", s)
	}
	return code, s
}

func TestCheckGoodConfiguration(t *testing.T) {
	getenv, _, _ := checkEnv(t, nil)
	code, out := runCheck(t, getenv)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "ok    telegram  bot @") ||
		!strings.Contains(out, "ok    upstream  account") || !strings.Contains(out, "redis") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestCheckBadConfigurations(t *testing.T) {
	cases := []struct {
		name string
		over map[string]string
		prep func(*resellersim.Sim)
		want string
	}{
		{"token rejected", map[string]string{"TELEGRAM_TOKEN": "424242:DDDDDDDDDDDDDDDDDDDDDDDDDDDDDD-other"}, nil, "FAIL  telegram"},
		{"key rejected", map[string]string{"RESELLER_API_KEY": "wrong-key"}, nil, "FAIL  upstream  the upstream rejected RESELLER_API_KEY"},
		{"account blocked", nil, func(s *resellersim.Sim) { s.SetAccountStatus(resellersim.StatusBlocked) }, "FAIL  upstream  the upstream account is suspended"},
		{"redis down", map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, nil, "FAIL  redis"},
		{"webhook never set", map[string]string{"WEBHOOK_URL": "https://shop.example/hook", "WEBHOOK_SECRET": "s"}, nil, "warn  webhook   no webhook is set yet"},
		{"missing variable", map[string]string{"RESELLER_API_KEY": ""}, nil, "RESELLER_API_KEY is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			getenv, sim, _ := checkEnv(t, tc.over)
			if tc.prep != nil {
				tc.prep(sim)
			}
			code, out := runCheck(t, getenv)
			if !strings.Contains(out, tc.want) {
				t.Fatalf("output lacks %q:\n%s", tc.want, out)
			}
			if strings.Contains(tc.want, "FAIL") || strings.Contains(tc.want, "required") {
				if code == 0 {
					t.Fatalf("exit 0 with a failure:\n%s", out)
				}
			} else if code != 0 {
				t.Fatalf("exit %d for a warning:\n%s", code, out)
			}
		})
	}
}
