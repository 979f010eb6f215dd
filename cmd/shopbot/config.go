package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"shopbot/state/redisstore"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shopbot/bot/fulfil"
	"shopbot/locales"
	"shopbot/reseller"
)

// Config is everything the shop reads from its environment
// (docs/operator.md, "Configuration"). Load validates it once; nothing else reads the
// environment.
type Config struct {
	TelegramToken  string
	TelegramAPIURL string
	ResellerURL    string
	ResellerKey    string
	Redis          redisstore.Endpoint // the zero Endpoint: the embedded store
	AdminIDs       []int64             // ADMIN_IDS: the owners
	SupportIDs     []int64             // SUPPORT_IDS: the support agents
	AccountantIDs  []int64             // ACCOUNTANT_IDS: the accountants
	PayStars       bool
	PayWallet      bool
	StarsUSDRate   decimal.Decimal
	Topup          TopupConfig // WALLET_TOPUP_MIN_USD, WALLET_TOPUP_MAX_USD, WALLET_MAX_BALANCE_USD
	Markup         Markup
	WebhookURL     string
	WebhookSecret  string
	// WebAppURL is WEBAPP_URL: the public https address of the Mini App,
	// which the shop serves on HTTP_ADDR at the URL's path; "" when the
	// app is off, and WebAppOff then says why.
	WebAppURL   string
	WebAppOff   string
	HTTPAddr    string
	MetricsAddr string        // METRICS_ADDR: /metrics on its own listener; "off" for none
	MediaHosts  []string      // RESELLER_MEDIA_HOSTS: extra hosts operator images may come from
	JournalDir  string        // JOURNAL_DIR: the host's journal of paid orders and creates; "" keeps it in memory
	JournalKeep time.Duration // JOURNAL_KEEP: how long journal entries are read back (default 15m, at least 30s)
	// PollFirst is UPSTREAM_POLL_FIRST: how often a new upstream order is
	// read in its first two seconds (fulfil.Config.PollFirst; default
	// 500ms, 50ms to 2s).
	PollFirst   time.Duration
	Languages   []locales.Lang
	DefaultLang locales.Lang
	Workers     int
	QuoteTTL    time.Duration
	// QuoteReminder is how long after an unpaid quote its buyer is
	// reminded of it (QUOTE_REMINDER); 0: never.
	QuoteReminder  time.Duration
	CatalogTTL     time.Duration
	ReconcileEvery time.Duration // RECONCILE_EVERY: how often the reconciliation job runs (default 24h)
	LowBalanceUSD  decimal.Decimal
	LogLevel       string
	SupportURL     string // an external helpdesk linked from support
	TermsText      string // the shop's terms as plain text; "" for the default
	TermsURL       string // the full terms online
	ShowImages     bool   // SHOW_IMAGES: catalog screens show the upstream's images (default true)

	// ReferralPercent is REFERRAL_PERCENT: the share of a delivered
	// order's margin credited to the buyer who referred its buyer (0 to
	// 100; 0, the default, turns referrals off; they need the wallet).
	ReferralPercent decimal.Decimal
}

// Markup is the shop's margin: percent and fixed fee, with optional
// per-line overrides keyed by line name (topup, stars, ...).
type Markup struct {
	Percent decimal.Decimal
	Fixed   decimal.Decimal
	Lines   map[string]LineMarkup
}

// LineMarkup overrides the markup for one product line.
type LineMarkup struct {
	Percent decimal.Decimal
	Fixed   decimal.Decimal
}

// ConfigError names the variable that is wrong; its message is the one line
// printed at start.
type ConfigError struct {
	Var    string
	Reason string
}

func (e *ConfigError) Error() string { return "config: " + e.Var + " " + e.Reason }

var (
	tokenRe  = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,}$`)
	secretRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
)

// lineEnvNames map product lines to the suffix of their markup overrides,
// e.g. MARKUP_PERCENT_GIFTCARDS.
var lineEnvNames = []string{"topup", "stars", "premium", "services", "gifts", "giftcards", "keys", "games"}

// LoadConfig reads and validates the configuration from getenv. In demo
// mode the token, upstream URL and key are not required. Error texts never
// contain the token or the API key.
func LoadConfig(getenv func(string) string, demo bool) (*Config, error) {
	c := &Config{}
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }

	c.TelegramToken = get("TELEGRAM_TOKEN")
	switch {
	case c.TelegramToken == "" && !demo:
		return nil, &ConfigError{"TELEGRAM_TOKEN", "is required (the bot token from @BotFather)"}
	case c.TelegramToken != "" && !tokenRe.MatchString(c.TelegramToken):
		return nil, &ConfigError{"TELEGRAM_TOKEN", "does not look like a bot token (digits, a colon, then at least 20 letters, digits, _ or -)"}
	}
	var err error
	if c.TelegramAPIURL, err = httpURL(get("TELEGRAM_API_URL"), "https://api.telegram.org"); err != nil {
		return nil, &ConfigError{"TELEGRAM_API_URL", err.Error()}
	}
	c.TelegramAPIURL = strings.TrimRight(c.TelegramAPIURL, "/")

	c.ResellerURL = get("RESELLER_BASE_URL")
	switch {
	case c.ResellerURL == "" && !demo:
		return nil, &ConfigError{"RESELLER_BASE_URL", "is required (the upstream base URL, ending in /api/v1)"}
	case c.ResellerURL != "":
		if _, err := httpURL(c.ResellerURL, ""); err != nil {
			return nil, &ConfigError{"RESELLER_BASE_URL", err.Error()}
		}
		c.ResellerURL = strings.TrimRight(c.ResellerURL, "/")
		if !strings.HasSuffix(c.ResellerURL, "/api/v1") {
			return nil, &ConfigError{"RESELLER_BASE_URL", "must end in /api/v1"}
		}
	}
	c.ResellerKey = get("RESELLER_API_KEY")
	switch {
	case c.ResellerKey == "" && !demo:
		return nil, &ConfigError{"RESELLER_API_KEY", "is required (the upstream API key from the dashboard)"}
	case strings.ContainsAny(c.ResellerKey, " \t\r\n"):
		return nil, &ConfigError{"RESELLER_API_KEY", "must not contain spaces or line breaks"}
	}

	if c.Redis, err = redisEndpoint(get); err != nil {
		return nil, err
	}

	// The staff: one list per role (an id in two lists has both roles).
	for _, l := range []struct {
		name string
		ids  *[]int64
	}{{"ADMIN_IDS", &c.AdminIDs}, {"SUPPORT_IDS", &c.SupportIDs}, {"ACCOUNTANT_IDS", &c.AccountantIDs}} {
		if *l.ids, err = userIDs(l.name, get(l.name)); err != nil {
			return nil, err
		}
	}

	pm := get("PAYMENT_METHODS")
	if pm == "" {
		pm = "stars"
	}
	for _, f := range strings.Split(pm, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "stars":
			c.PayStars = true
		case "wallet":
			c.PayWallet = true
		case "":
		default:
			return nil, &ConfigError{"PAYMENT_METHODS", fmt.Sprintf("has %q; use stars, wallet, or both (stars,wallet)", strings.TrimSpace(f))}
		}
	}
	if !c.PayStars && !c.PayWallet {
		return nil, &ConfigError{"PAYMENT_METHODS", "names no payment method; use stars, wallet, or both"}
	}

	if c.StarsUSDRate, err = decimalVar(get("STARS_USD_RATE"), "0.013", true); err != nil {
		return nil, &ConfigError{"STARS_USD_RATE", err.Error()}
	}
	if err := loadTopupConfig(get, c); err != nil {
		return nil, err
	}
	if c.Markup.Percent, err = decimalVar(get("MARKUP_PERCENT"), "10", false); err != nil {
		return nil, &ConfigError{"MARKUP_PERCENT", err.Error()}
	}
	if c.Markup.Fixed, err = decimalVar(get("MARKUP_FIXED_USD"), "0", false); err != nil {
		return nil, &ConfigError{"MARKUP_FIXED_USD", err.Error()}
	}
	for _, line := range lineEnvNames {
		pv, fv := "MARKUP_PERCENT_"+strings.ToUpper(line), "MARKUP_FIXED_USD_"+strings.ToUpper(line)
		if get(pv) == "" && get(fv) == "" {
			continue
		}
		lm := LineMarkup{Percent: c.Markup.Percent, Fixed: c.Markup.Fixed}
		if v := get(pv); v != "" {
			if lm.Percent, err = decimalVar(v, "", false); err != nil {
				return nil, &ConfigError{pv, err.Error()}
			}
		}
		if v := get(fv); v != "" {
			if lm.Fixed, err = decimalVar(v, "", false); err != nil {
				return nil, &ConfigError{fv, err.Error()}
			}
		}
		if c.Markup.Lines == nil {
			c.Markup.Lines = map[string]LineMarkup{}
		}
		c.Markup.Lines[line] = lm
	}

	c.WebhookURL = get("WEBHOOK_URL")
	c.WebhookSecret = get("WEBHOOK_SECRET")
	if c.WebhookURL != "" {
		u, err := url.Parse(c.WebhookURL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, &ConfigError{"WEBHOOK_URL", "must be an https:// URL that Telegram can reach"}
		}
		if c.WebhookSecret == "" {
			return nil, &ConfigError{"WEBHOOK_SECRET", "is required in webhook mode (1-256 of A-Z, a-z, 0-9, _ and -)"}
		}
	}
	if c.WebhookSecret != "" && !secretRe.MatchString(c.WebhookSecret) {
		return nil, &ConfigError{"WEBHOOK_SECRET", "must be 1-256 of A-Z, a-z, 0-9, _ and -"}
	}
	c.WebAppURL, c.WebAppOff = webAppURL(get("WEBAPP_URL"), c.WebhookURL)
	c.HTTPAddr = get("HTTP_ADDR")
	switch {
	case c.HTTPAddr != "":
	case c.WebhookURL != "":
		c.HTTPAddr = ":8080" // Telegram (or the proxy in front) must reach the webhook
	default:
		// Long polling serves only /healthz here: nothing outside the
		// host needs it (a container sets HTTP_ADDR to be reached).
		c.HTTPAddr = "127.0.0.1:8080"
	}
	if err := checkAddr(c.HTTPAddr, ":8080"); err != nil {
		return nil, &ConfigError{"HTTP_ADDR", err.Error()}
	}
	c.MetricsAddr = get("METRICS_ADDR")
	switch c.MetricsAddr {
	case "":
		c.MetricsAddr = "127.0.0.1:9090"
	case "off":
		c.MetricsAddr = ""
	}
	if c.MetricsAddr != "" {
		if err := checkAddr(c.MetricsAddr, "127.0.0.1:9090"); err != nil {
			return nil, &ConfigError{"METRICS_ADDR", err.Error() + ", or off"}
		}
		if c.MetricsAddr == c.HTTPAddr && !strings.HasSuffix(c.MetricsAddr, ":0") {
			return nil, &ConfigError{"METRICS_ADDR", "must differ from HTTP_ADDR: /metrics is not served on the webhook's listener"}
		}
	}
	switch c.JournalDir = get("JOURNAL_DIR"); c.JournalDir {
	case "":
		// Shared by every replica of this bot and upstream account on the
		// host (the bot id, before the token's colon, is public; the
		// account is a fingerprint of the key, never the key). Another
		// shop with the same token but another account gets its own.
		id, _, _ := strings.Cut(c.TelegramToken, ":")
		id = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, id)
		c.JournalDir = filepath.Join(os.TempDir(), "shopbot-journal-"+id)
		if c.ResellerKey != "" {
			c.JournalDir += "-" + reseller.AccountFingerprint(c.ResellerURL, c.ResellerKey)[:12]
		}
	case "off":
		c.JournalDir = ""
	default:
		if !filepath.IsAbs(c.JournalDir) {
			return nil, &ConfigError{"JOURNAL_DIR", "must be an absolute directory path, or off"}
		}
	}
	for _, h := range strings.Split(get("RESELLER_MEDIA_HOSTS"), ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/?#@ ") {
			return nil, &ConfigError{"RESELLER_MEDIA_HOSTS", fmt.Sprintf("has %q; give host names (or host:port), comma-separated", h)}
		}
		c.MediaHosts = append(c.MediaHosts, h)
	}

	langs := get("LANGUAGES")
	if langs == "" {
		langs = "en,ru,uk"
	}
	for _, f := range strings.Split(langs, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		l, ok := locales.Parse(f)
		if !ok {
			return nil, &ConfigError{"LANGUAGES", fmt.Sprintf("has %q; supported: en, ru, uk", strings.TrimSpace(f))}
		}
		if !slices.Contains(c.Languages, l) {
			c.Languages = append(c.Languages, l)
		}
	}
	if len(c.Languages) == 0 {
		return nil, &ConfigError{"LANGUAGES", "names no language; supported: en, ru, uk"}
	}
	def := get("DEFAULT_LANGUAGE")
	if def == "" {
		def = "en"
	}
	l, ok := locales.Parse(def)
	if !ok {
		return nil, &ConfigError{"DEFAULT_LANGUAGE", fmt.Sprintf("is %q; supported: en, ru, uk", def)}
	}
	if !slices.Contains(c.Languages, l) {
		return nil, &ConfigError{"DEFAULT_LANGUAGE", fmt.Sprintf("is %q, which is not in LANGUAGES", def)}
	}
	c.DefaultLang = l

	if c.Workers, err = intVar(get("WORKERS"), 16, 1, 1024); err != nil {
		return nil, &ConfigError{"WORKERS", err.Error()}
	}
	if c.QuoteTTL, err = durationVar(get("QUOTE_TTL"), 15*time.Minute); err != nil {
		return nil, &ConfigError{"QUOTE_TTL", err.Error()}
	}
	if v := get("QUOTE_REMINDER"); v != "0" { // 0 (the default): no reminders
		if c.QuoteReminder, err = durationVar(v, 0); err != nil {
			return nil, &ConfigError{"QUOTE_REMINDER", err.Error() + ", or 0 for none"}
		}
	}
	if c.CatalogTTL, err = durationVar(get("CATALOG_CACHE_TTL"), 5*time.Minute); err != nil {
		return nil, &ConfigError{"CATALOG_CACHE_TTL", err.Error()}
	}
	if c.JournalKeep, err = durationVar(get("JOURNAL_KEEP"), fulfil.JournalKeep); err != nil || c.JournalKeep < 30*time.Second {
		return nil, &ConfigError{"JOURNAL_KEEP", "must be a duration of at least 30s such as 15m (how long Redis may still lose a write or a repair may need the journal)"}
	}
	if c.PollFirst, err = durationVar(get("UPSTREAM_POLL_FIRST"), 500*time.Millisecond); err != nil || c.PollFirst < 50*time.Millisecond || c.PollFirst > 2*time.Second {
		return nil, &ConfigError{"UPSTREAM_POLL_FIRST", "must be a duration from 50ms to 2s such as 500ms (how often a new upstream order is read in its first two seconds)"}
	}
	if c.ReconcileEvery, err = durationVar(get("RECONCILE_EVERY"), 24*time.Hour); err != nil {
		return nil, &ConfigError{"RECONCILE_EVERY", err.Error()}
	}
	if c.LowBalanceUSD, err = decimalVar(get("LOW_BALANCE_USD"), "20", false); err != nil {
		return nil, &ConfigError{"LOW_BALANCE_USD", err.Error()}
	}
	if c.ReferralPercent, err = decimalVar(get("REFERRAL_PERCENT"), "0", false); err != nil {
		return nil, &ConfigError{"REFERRAL_PERCENT", err.Error()}
	}
	if c.ReferralPercent.GreaterThan(decimal.NewFromInt(100)) {
		return nil, &ConfigError{"REFERRAL_PERCENT", fmt.Sprintf("is %s; use a percent of the margin from 0 to 100", c.ReferralPercent)}
	}
	if c.SupportURL, err = httpURL(get("SUPPORT_URL"), ""); err != nil {
		return nil, &ConfigError{"SUPPORT_URL", err.Error()}
	}
	if c.TermsURL, err = httpURL(get("TERMS_URL"), ""); err != nil {
		return nil, &ConfigError{"TERMS_URL", err.Error()}
	}
	c.TermsText = strings.ReplaceAll(get("TERMS_TEXT"), `\n`, "\n")
	if n := len([]rune(c.TermsText)); n > 3800 {
		return nil, &ConfigError{"TERMS_TEXT", fmt.Sprintf("is %d characters long; at most 3800 fit in one message (link longer terms with TERMS_URL)", n)}
	}
	switch v := strings.ToLower(strings.TrimSpace(get("SHOW_IMAGES"))); v {
	case "", "true", "1", "on", "yes":
		c.ShowImages = true
	case "false", "0", "off", "no":
	default:
		return nil, &ConfigError{"SHOW_IMAGES", fmt.Sprintf("is %q; use true or false", v)}
	}
	c.LogLevel = strings.ToLower(get("LOG_LEVEL"))
	switch c.LogLevel {
	case "":
		c.LogLevel = "info"
	case "debug", "info", "warn", "error":
	default:
		return nil, &ConfigError{"LOG_LEVEL", "must be debug, info, warn or error"}
	}
	return c, nil
}

// checkAddr checks a listen address: host:port or :port.
func checkAddr(addr, example string) error {
	i := strings.LastIndex(addr, ":")
	if i < 0 || i == len(addr)-1 {
		return fmt.Errorf("must be host:port or :port, e.g. %s", example)
	}
	if n, err := strconv.Atoi(addr[i+1:]); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("has a bad port")
	}
	return nil
}

// redisVars are the variables naming the Redis deployment; at most one may
// be set.
var redisVars = []struct {
	name string
	mode redisstore.Mode
}{
	{"REDIS_URL", redisstore.ModeSingle},
	{"REDIS_SENTINEL_URL", redisstore.ModeSentinel},
	{"REDIS_CLUSTER_URL", redisstore.ModeCluster},
}

// redisEndpoint reads REDIS_URL, REDIS_SENTINEL_URL and REDIS_CLUSTER_URL:
// none set is the embedded store, one set is that deployment, two or more
// are an error naming them.
func redisEndpoint(get func(string) string) (redisstore.Endpoint, error) {
	var e redisstore.Endpoint
	var set []string
	for _, v := range redisVars {
		if u := get(v.name); u != "" {
			set = append(set, v.name)
			e = redisstore.Endpoint{Mode: v.mode, URL: u}
		}
	}
	switch len(set) {
	case 0:
		return redisstore.Endpoint{}, nil
	case 1:
	default:
		both := "are both set"
		if len(set) > 2 {
			both = "are all set"
		}
		return redisstore.Endpoint{}, &ConfigError{strings.Join(set, " and "), both + "; set exactly one of REDIS_URL (one server), REDIS_SENTINEL_URL (Sentinel) or REDIS_CLUSTER_URL (Cluster)"}
	}
	var err error
	switch e.Mode {
	case redisstore.ModeSingle:
		_, err = redisstore.ParseURL(e.URL)
	case redisstore.ModeSentinel:
		_, err = redisstore.ParseSentinelURL(e.URL)
	case redisstore.ModeCluster:
		_, err = redisstore.ParseClusterURL(e.URL)
	}
	if err != nil {
		return redisstore.Endpoint{}, &ConfigError{set[0], err.Error()}
	}
	return e, nil
}

func httpURL(v, def string) (string, error) {
	if v == "" {
		return def, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("must be an absolute http(s) URL")
	}
	return v, nil
}

func decimalVar(v, def string, positive bool) (decimal.Decimal, error) {
	if v == "" {
		v = def
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("is %q, which is not a number", v)
	}
	if positive && !d.IsPositive() {
		return decimal.Decimal{}, fmt.Errorf("must be greater than 0")
	}
	if d.IsNegative() {
		return decimal.Decimal{}, fmt.Errorf("must not be negative")
	}
	return d, nil
}

func intVar(v string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("must be a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

func durationVar(v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("must be a positive duration such as 15m or 1h")
	}
	return d, nil
}

// userIDs reads a comma-separated list of Telegram user ids (ADMIN_IDS,
// SUPPORT_IDS, ACCOUNTANT_IDS): positive integers, each kept once, empty
// items skipped.
func userIDs(name, v string) ([]int64, error) {
	var ids []int64
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id <= 0 {
			return nil, &ConfigError{name, fmt.Sprintf("has %q, which is not a positive Telegram user id", f)}
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// webAppUnset is why the Mini App is off when WEBAPP_URL is not set.
const webAppUnset = "WEBAPP_URL is not set"

// webAppURL reads WEBAPP_URL: the Mini App's address as the bot's menu
// button will open it (its path ending in "/"), or "" and why the app is
// off. It is off, not an error, when unset or not a public https URL:
// Telegram opens Mini Apps only over https, from a host it can reach.
func webAppURL(raw, webhook string) (string, string) {
	if raw == "" {
		return "", webAppUnset
	}
	u, err := url.Parse(raw)
	bad := err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != ""
	if !bad {
		host := u.Hostname()
		ip := net.ParseIP(host)
		bad = host == "localhost" || strings.HasSuffix(host, ".localhost") || (ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified()))
	}
	if bad {
		return "", fmt.Sprintf("WEBAPP_URL must be a public https:// address such as https://shop.example.com/app/ (got %q)", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	if webhook != "" {
		if w, err := url.Parse(webhook); err == nil && w.Path == u.Path {
			return "", "WEBAPP_URL's path is WEBHOOK_URL's: give the Mini App a path of its own, such as /app/"
		}
	}
	return u.String(), ""
}
