package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"shopbot/reseller"
	"shopbot/state/redisstore"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	goodToken = "123456789:AAH-secret-token-value_abcdefghijkl"
	goodKey   = "sk-live-very-secret-key"
)

func env(over map[string]string) func(string) string {
	base := map[string]string{
		"TELEGRAM_TOKEN":    goodToken,
		"RESELLER_BASE_URL": "https://reseller.example/api/v1",
		"RESELLER_API_KEY":  goodKey,
	}
	for k, v := range over {
		base[k] = v
	}
	return func(k string) string { return base[k] }
}

// HTTP_ADDR defaults to the loopback interface in long-polling mode, where
// it serves only /healthz, and to every interface with a webhook, which
// Telegram must reach.
func TestHTTPAddrDefaultsToLoopbackWhenPolling(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil || c.HTTPAddr != "127.0.0.1:8080" {
		t.Fatalf("long polling: HTTP_ADDR %q, %v", c.HTTPAddr, err)
	}
	c, err = LoadConfig(env(map[string]string{"WEBHOOK_URL": "https://shop.example/hook", "WEBHOOK_SECRET": "s"}), false)
	if err != nil || c.HTTPAddr != ":8080" {
		t.Fatalf("webhook: HTTP_ADDR %q, %v", c.HTTPAddr, err)
	}
	c, err = LoadConfig(env(map[string]string{"HTTP_ADDR": ":9000"}), false)
	if err != nil || c.HTTPAddr != ":9000" {
		t.Fatalf("set: HTTP_ADDR %q, %v", c.HTTPAddr, err)
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.TelegramAPIURL != "https://api.telegram.org" || !c.PayStars || c.PayWallet || c.StarsUSDRate.String() != "0.013" ||
		c.Markup.Percent.String() != "10" || !c.Markup.Fixed.IsZero() || c.HTTPAddr != "127.0.0.1:8080" || len(c.Languages) != 3 || c.DefaultLang != "en" {
		t.Fatalf("defaults: %+v", c)
	}
	account := reseller.AccountFingerprint(c.ResellerURL, c.ResellerKey)[:12]
	if want := filepath.Join(os.TempDir(), "shopbot-journal-"+strings.Split(goodToken, ":")[0]+"-"+account); c.JournalDir != want {
		t.Fatalf("JOURNAL_DIR default %q, want %q", c.JournalDir, want)
	}
	// Another upstream account with the same bot: another directory.
	if other, err := LoadConfig(env(map[string]string{"RESELLER_API_KEY": "another-key"}), false); err != nil || other.JournalDir == c.JournalDir {
		t.Fatalf("JOURNAL_DIR default for another upstream key: %q, %v", other.JournalDir, err)
	}
	for v, want := range map[string]string{"off": "", "/var/lib/shopbot": "/var/lib/shopbot"} {
		if c, err := LoadConfig(env(map[string]string{"JOURNAL_DIR": v}), false); err != nil || c.JournalDir != want {
			t.Fatalf("JOURNAL_DIR=%s: %q, %v", v, c.JournalDir, err)
		}
	}
	if _, err := LoadConfig(env(map[string]string{"JOURNAL_DIR": "data/journal"}), false); err == nil || !strings.Contains(err.Error(), "JOURNAL_DIR") {
		t.Fatalf("a relative JOURNAL_DIR: %v", err)
	}
	if !c.ReferralPercent.IsZero() {
		t.Fatalf("REFERRAL_PERCENT default %s, want 0 (off)", c.ReferralPercent)
	}
	for _, v := range []string{"5", "2.5", "100", "0"} {
		if c, err := LoadConfig(env(map[string]string{"REFERRAL_PERCENT": v}), false); err != nil || c.ReferralPercent.String() != v {
			t.Fatalf("REFERRAL_PERCENT=%s: %v, %v", v, c, err)
		}
	}
}

func TestConfigMetricsAddrAndMediaHosts(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "127.0.0.1:9090" || len(c.MediaHosts) != 0 {
		t.Fatalf("defaults: METRICS_ADDR %q, media hosts %q", c.MetricsAddr, c.MediaHosts)
	}
	c, err = LoadConfig(env(map[string]string{"METRICS_ADDR": "0.0.0.0:9100", "RESELLER_MEDIA_HOSTS": " CDN.example ,files.example:8443,"}), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "0.0.0.0:9100" || strings.Join(c.MediaHosts, " ") != "cdn.example files.example:8443" {
		t.Fatalf("got METRICS_ADDR %q, media hosts %q", c.MetricsAddr, c.MediaHosts)
	}
	if c, err = LoadConfig(env(map[string]string{"METRICS_ADDR": "off"}), false); err != nil || c.MetricsAddr != "" {
		t.Fatalf("METRICS_ADDR=off: %q, %v", c.MetricsAddr, err)
	}
}

// One test per required variable, and one per kind of bad value: the exit is
// non-zero, the one line names the variable, and no secret leaks.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		over map[string]string
		want string
	}{
		{"missing TELEGRAM_TOKEN", map[string]string{"TELEGRAM_TOKEN": ""}, "TELEGRAM_TOKEN is required"},
		{"missing RESELLER_BASE_URL", map[string]string{"RESELLER_BASE_URL": ""}, "RESELLER_BASE_URL is required"},
		{"missing RESELLER_API_KEY", map[string]string{"RESELLER_API_KEY": ""}, "RESELLER_API_KEY is required"},
		{"bad token", map[string]string{"TELEGRAM_TOKEN": "nonsense-" + goodKey}, "TELEGRAM_TOKEN does not look like"},
		{"bad api url", map[string]string{"TELEGRAM_API_URL": "ftp://x"}, "TELEGRAM_API_URL must be"},
		{"reseller url without prefix", map[string]string{"RESELLER_BASE_URL": "https://reseller.example"}, "RESELLER_BASE_URL must end in /api/v1"},
		{"key with spaces", map[string]string{"RESELLER_API_KEY": "a b"}, "RESELLER_API_KEY must not contain"},
		{"bad redis", map[string]string{"REDIS_URL": "http://localhost:6379"}, "REDIS_URL must start with redis://"},
		{"bad admin", map[string]string{"ADMIN_IDS": "12,abc"}, `ADMIN_IDS has "abc"`},
		{"bad support id", map[string]string{"SUPPORT_IDS": "12, -3"}, `SUPPORT_IDS has "-3"`},
		{"bad accountant id", map[string]string{"ACCOUNTANT_IDS": "@bob"}, `ACCOUNTANT_IDS has "@bob"`},
		{"bad payment", map[string]string{"PAYMENT_METHODS": "stars,card"}, `PAYMENT_METHODS has "card"`},
		{"zero rate", map[string]string{"STARS_USD_RATE": "0"}, "STARS_USD_RATE must be greater than 0"},
		{"bad markup", map[string]string{"MARKUP_PERCENT": "ten"}, "MARKUP_PERCENT is \"ten\""},
		{"negative fee", map[string]string{"MARKUP_FIXED_USD": "-1"}, "MARKUP_FIXED_USD must not be negative"},
		{"referral percent over 100", map[string]string{"REFERRAL_PERCENT": "100.5"}, "REFERRAL_PERCENT is 100.5; use a percent"},
		{"negative referral percent", map[string]string{"REFERRAL_PERCENT": "-1"}, "REFERRAL_PERCENT must not be negative"},
		{"bad referral percent", map[string]string{"REFERRAL_PERCENT": "5%"}, `REFERRAL_PERCENT is "5%"`},
		{"bad line markup", map[string]string{"MARKUP_PERCENT_GIFTCARDS": "x"}, "MARKUP_PERCENT_GIFTCARDS is"},
		{"http webhook", map[string]string{"WEBHOOK_URL": "http://shop.example/hook", "WEBHOOK_SECRET": "s"}, "WEBHOOK_URL must be an https://"},
		{"webhook without secret", map[string]string{"WEBHOOK_URL": "https://shop.example/hook"}, "WEBHOOK_SECRET is required"},
		{"bad secret", map[string]string{"WEBHOOK_SECRET": "has space"}, "WEBHOOK_SECRET must be"},
		{"bad addr", map[string]string{"HTTP_ADDR": "8080"}, "HTTP_ADDR must be"},
		{"bad metrics addr", map[string]string{"METRICS_ADDR": "9090"}, "METRICS_ADDR must be host:port"},
		{"bad metrics port", map[string]string{"METRICS_ADDR": "127.0.0.1:99999"}, "METRICS_ADDR has a bad port"},
		{"metrics on the webhook listener", map[string]string{"HTTP_ADDR": ":8080", "METRICS_ADDR": ":8080"}, "METRICS_ADDR must differ from HTTP_ADDR"},
		{"bad media host", map[string]string{"RESELLER_MEDIA_HOSTS": "cdn.example, http://x/"}, `RESELLER_MEDIA_HOSTS has "http://x/"`},
		{"bad language", map[string]string{"LANGUAGES": "en,de"}, `LANGUAGES has "de"`},
		{"bad support url", map[string]string{"SUPPORT_URL": "help.example"}, "SUPPORT_URL must be"},
		{"bad terms url", map[string]string{"TERMS_URL": "javascript:alert(1)"}, "TERMS_URL must be"},
		{"terms too long", map[string]string{"TERMS_TEXT": strings.Repeat("t", 3801)}, "TERMS_TEXT is 3801 characters long"},
		{"default not enabled", map[string]string{"LANGUAGES": "ru,uk"}, "DEFAULT_LANGUAGE is \"en\", which is not in LANGUAGES"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), nil, env(tc.over), strings.NewReader(""), &out, &errOut)
			if code == 0 {
				t.Fatalf("exit 0 for %v", tc.over)
			}
			msg := errOut.String()
			if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) {
				t.Fatalf("stderr = %q, want one line containing %q", msg, tc.want)
			}
			if strings.Contains(msg, goodKey) || strings.Contains(msg, "secret-token") || strings.Contains(msg, "goroutine") {
				t.Fatalf("secret or stack in %q", msg)
			}
		})
	}
}

func TestConfigLineMarkupAndDemo(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{"MARKUP_PERCENT": "5", "MARKUP_FIXED_USD_STARS": "0.25", "PAYMENT_METHODS": "wallet, stars", "ADMIN_IDS": "1, 2,2"}), false)
	if err != nil {
		t.Fatal(err)
	}
	lm := c.Markup.Lines["stars"]
	if lm.Percent.String() != "5" || lm.Fixed.String() != "0.25" || !c.PayWallet || !c.PayStars || len(c.AdminIDs) != 2 {
		t.Fatalf("%+v", c)
	}
	if _, err := LoadConfig(func(string) string { return "" }, true); err != nil {
		t.Fatalf("demo needs no token or key: %v", err)
	}
}

// SUPPORT_IDS and ACCOUNTANT_IDS are read as ADMIN_IDS is; an id may be in
// several lists (it then has each role).
func TestConfigStaffLists(t *testing.T) {
	c, err := LoadConfig(env(map[string]string{"ADMIN_IDS": "1", "SUPPORT_IDS": " 2, 3,,2 ", "ACCOUNTANT_IDS": "3,4"}), false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.AdminIDs, []int64{1}) || !slices.Equal(c.SupportIDs, []int64{2, 3}) || !slices.Equal(c.AccountantIDs, []int64{3, 4}) {
		t.Fatalf("owners %v, support %v, accountants %v", c.AdminIDs, c.SupportIDs, c.AccountantIDs)
	}
}

// The Redis contract: none of the three variables is the embedded store,
// exactly one names the deployment, two at once is an error naming both,
// and a bad URL names its variable without repeating the password.
func TestConfigRedisModes(t *testing.T) {
	cases := []struct {
		name string
		over map[string]string
		mode redisstore.Mode
		want string // the error, when there is one
	}{
		{"none is embedded", nil, "", ""},
		{"single", map[string]string{"REDIS_URL": "redis://:pw@127.0.0.1:6379/2"}, redisstore.ModeSingle, ""},
		{"sentinel", map[string]string{"REDIS_SENTINEL_URL": "redis://:pw@10.0.0.1:26379/0?master_name=shop&addr=10.0.0.2:26379"}, redisstore.ModeSentinel, ""},
		{"cluster", map[string]string{"REDIS_CLUSTER_URL": "redis://u:pw@10.0.0.1:7001?addr=10.0.0.2:7001"}, redisstore.ModeCluster, ""},
		{"single and sentinel", map[string]string{"REDIS_URL": "redis://h:1", "REDIS_SENTINEL_URL": "redis://h:2?master_name=m"}, "",
			"config: REDIS_URL and REDIS_SENTINEL_URL are both set"},
		{"sentinel and cluster", map[string]string{"REDIS_SENTINEL_URL": "redis://h:2?master_name=m", "REDIS_CLUSTER_URL": "redis://h:3"}, "",
			"config: REDIS_SENTINEL_URL and REDIS_CLUSTER_URL are both set"},
		{"all three", map[string]string{"REDIS_URL": "redis://h:1", "REDIS_SENTINEL_URL": "redis://h:2?master_name=m", "REDIS_CLUSTER_URL": "redis://h:3"}, "",
			"config: REDIS_URL and REDIS_SENTINEL_URL and REDIS_CLUSTER_URL are all set"},
		{"sentinel without master name", map[string]string{"REDIS_SENTINEL_URL": "redis://:secretpw@h:26379"}, "",
			"config: REDIS_SENTINEL_URL needs ?master_name=NAME"},
		{"sentinel bad scheme", map[string]string{"REDIS_SENTINEL_URL": "sentinel://h:26379?master_name=m"}, "",
			"config: REDIS_SENTINEL_URL must start with redis://"},
		{"sentinel bad addr", map[string]string{"REDIS_SENTINEL_URL": "redis://:secretpw@h:26379?master_name=m&addr=nope"}, "",
			"config: REDIS_SENTINEL_URL is not a valid sentinel URL"},
		{"cluster with a database", map[string]string{"REDIS_CLUSTER_URL": "redis://:secretpw@h:7001/3"}, "",
			"config: REDIS_CLUSTER_URL must not name a database"},
		{"cluster unknown option", map[string]string{"REDIS_CLUSTER_URL": "redis://:secretpw@h:7001?bogus=1"}, "",
			"config: REDIS_CLUSTER_URL is not a valid cluster URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(env(tc.over), false)
			if tc.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "secretpw") {
					t.Fatalf("the password leaked: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Redis.Mode != tc.mode {
				t.Fatalf("mode %q, want %q", c.Redis.Mode, tc.mode)
			}
		})
	}
}

// The URLs parse into the clients the modes need: sentinels and the
// master's password, cluster seeds.
func TestConfigRedisURLsParse(t *testing.T) {
	so, err := redisstore.ParseSentinelURL("redis://:pw@10.0.0.1:26379/2?master_name=shop&addr=10.0.0.2:26379")
	if err != nil {
		t.Fatal(err)
	}
	if so.MasterName != "shop" || so.DB != 2 || so.Password != "pw" || so.SentinelPassword != "" ||
		strings.Join(so.SentinelAddrs, ",") != "10.0.0.1:26379,10.0.0.2:26379" {
		t.Fatalf("sentinel options: %+v", so)
	}
	co, err := redisstore.ParseClusterURL("redis://u:pw@10.0.0.1:7001?addr=10.0.0.2:7001&addr=10.0.0.3:7001")
	if err != nil {
		t.Fatal(err)
	}
	if co.Username != "u" || co.Password != "pw" || strings.Join(co.Addrs, ",") != "10.0.0.1:7001,10.0.0.2:7001,10.0.0.3:7001" {
		t.Fatalf("cluster options: %+v", co)
	}
}

func TestConfigJournalKeep(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil || c.JournalKeep != 15*time.Minute {
		t.Fatalf("JOURNAL_KEEP default: %v, %v", c, err)
	}
	if c, err := LoadConfig(env(map[string]string{"JOURNAL_KEEP": "90s"}), false); err != nil || c.JournalKeep != 90*time.Second {
		t.Fatalf("JOURNAL_KEEP=90s: %v, %v", c, err)
	}
	for _, v := range []string{"10s", "0", "-1m", "soon"} {
		if _, err := LoadConfig(env(map[string]string{"JOURNAL_KEEP": v}), false); err == nil || !strings.Contains(err.Error(), "JOURNAL_KEEP") {
			t.Fatalf("JOURNAL_KEEP=%s: %v", v, err)
		}
	}
}

func TestConfigUpstreamPollFirst(t *testing.T) {
	c, err := LoadConfig(env(nil), false)
	if err != nil || c.PollFirst != 500*time.Millisecond {
		t.Fatalf("UPSTREAM_POLL_FIRST default: %v, %v", c, err)
	}
	if c, err := LoadConfig(env(map[string]string{"UPSTREAM_POLL_FIRST": "2s"}), false); err != nil || c.PollFirst != 2*time.Second {
		t.Fatalf("UPSTREAM_POLL_FIRST=2s: %v, %v", c, err)
	}
	for _, v := range []string{"10ms", "0", "3s", "-1s", "soon"} {
		if _, err := LoadConfig(env(map[string]string{"UPSTREAM_POLL_FIRST": v}), false); err == nil || !strings.Contains(err.Error(), "UPSTREAM_POLL_FIRST") {
			t.Fatalf("UPSTREAM_POLL_FIRST=%s: %v", v, err)
		}
	}
}

// WEBAPP_URL turns the Mini App on only with a public https address; any
// other value leaves it off with the reason, and does not stop the shop.
func TestWebAppURL(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                  "",
		"https://shop.example.com/app":      "https://shop.example.com/app/",
		"https://shop.example.com/":         "https://shop.example.com/",
		"https://shop.example.com":          "https://shop.example.com/",
		"http://shop.example.com/app/":      "",
		"https://localhost/app/":            "",
		"https://127.0.0.1/app/":            "",
		"https://10.0.0.7/app/":             "",
		"https://shop.example.com/app/?x=1": "",
		"https://user:pw@shop.example.com/": "",
		"shop.example.com/app/":             "",
		"https://shop.example.com/hook":     "", // WEBHOOK_URL's path
	} {
		got, why := webAppURL(raw, "https://shop.example.com/hook/")
		if got != want || (got == "") == (why == "") {
			t.Errorf("WEBAPP_URL %q: %q, %q; want %q", raw, got, why, want)
		}
	}
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"TELEGRAM_TOKEN": "123:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "RESELLER_BASE_URL": "http://up/api/v1", "RESELLER_API_KEY": "k", "WEBAPP_URL": "http://plain.example/"}[k]
	}, false)
	if err != nil || cfg.WebAppURL != "" || !strings.Contains(cfg.WebAppOff, "https") {
		t.Fatalf("a plain-http WEBAPP_URL: %v, %+v", err, cfg)
	}
}
