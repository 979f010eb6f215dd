package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"shopbot/state/redisstore"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"shopbot/bot"
	"shopbot/reseller"
)

// checkResult is one line of `shopbot check`, with notes printed below it.
type checkResult struct {
	name   string
	status string // ok, warn or FAIL
	detail string
	notes  []string
}

// check verifies the configuration against the real services without
// starting the bot: the token (getMe), the upstream key and account
// (GET /me), Redis, and the webhook when one is configured. It prints one
// line per check and returns 1 when any check failed. Redis fails when it
// may evict keys or keeps nothing through a restart, unless
// --allow-volatile is given (a test or demo store). With --live it only
// asks the running shop's /healthz (the container health check).
func check(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	allowVolatile, live := false, false
	for _, a := range args {
		switch a {
		case "--allow-volatile":
			allowVolatile = true
		case "--live":
			live = true
		default:
			fmt.Fprintf(stderr, "shopbot check: unknown flag %q (flags: --allow-volatile, --live)\n", a)
			return 2
		}
	}
	if live {
		return checkLive(ctx, getenv, stdout, stderr)
	}
	cfg, err := LoadConfig(getenv, false)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	// The Redis client's own log lines (a pool that failed to dial) would
	// come before the report on stderr; the redis line says what failed.
	redis.SetLogger(quietRedis{})
	tg, err := bot.NewProbe(cfg.TelegramAPIURL, cfg.TelegramToken, 10*time.Second)
	if err != nil {
		fmt.Fprintln(stderr, "telegram client:", scrubSecrets(err.Error(), cfg))
		return 1
	}
	results := []checkResult{checkTelegram(ctx, cfg, tg), checkUpstream(ctx, cfg), checkRedis(ctx, cfg, allowVolatile)}
	if cfg.Redis.URL != "" {
		results = append(results, checkRunning(ctx, cfg))
	}
	if cfg.WebhookURL != "" {
		results = append(results, checkWebhook(ctx, cfg, tg))
	}
	results = append(results, checkWebApp(cfg))
	code := 0
	for _, r := range results {
		fmt.Fprintf(stdout, "%-4s  %-8s  %s\n", r.status, r.name, r.detail)
		for _, n := range r.notes {
			for i, line := range wrap(n, 84) {
				indent := 16
				if i > 0 {
					indent = 18
				}
				fmt.Fprintf(stdout, "%*s%s\n", indent, "", line)
			}
		}
		if r.status == "FAIL" {
			code = 1
		}
	}
	return code
}

// wrap breaks text into lines of at most width runes at spaces (a longer
// word gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func checkTelegram(ctx context.Context, cfg *Config, tg *bot.Probe) checkResult {
	r := checkResult{name: "telegram"}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	username, id, err := tg.Me(ctx)
	if err != nil {
		r.status, r.detail = "FAIL", "getMe: "+scrubSecrets(err.Error(), cfg)+" ("+telegramHint(err)+")"
		return r
	}
	r.status, r.detail = "ok", fmt.Sprintf("bot @%s (id %d)", username, id)
	return r
}

func checkUpstream(ctx context.Context, cfg *Config) checkResult {
	r := checkResult{name: "upstream"}
	c, err := reseller.New(cfg.ResellerURL, cfg.ResellerKey, reseller.WithMaxAttempts(2), reseller.WithTimeout(10*time.Second))
	if err != nil {
		r.status, r.detail = "FAIL", scrubSecrets(err.Error(), cfg)
		return r
	}
	me, err := c.Me(ctx)
	switch {
	case reseller.IsUnauthorized(err):
		r.status, r.detail = "FAIL", "the upstream rejected RESELLER_API_KEY (401); copy it again from the dashboard's API section"
	case reseller.IsForbidden(err):
		r.status, r.detail = "FAIL", "the upstream account is suspended (403)"
	case err != nil:
		r.status, r.detail = "FAIL", "GET /me: "+scrubSecrets(err.Error(), cfg)
		if hint := networkHint(err, "RESELLER_BASE_URL"); hint != "" {
			r.detail += " (" + hint + ")"
		}
	case me.Status != reseller.AccountActive:
		r.status, r.detail = "FAIL", fmt.Sprintf("account %s is %s", me.Nickname, me.Status)
	case me.BalanceUSD.LessThan(cfg.LowBalanceUSD):
		r.status, r.detail = "warn", fmt.Sprintf("account %s is ACTIVE but the balance %s USD is below LOW_BALANCE_USD %s", me.Nickname, me.BalanceUSD.StringFixed(2), cfg.LowBalanceUSD)
	default:
		r.status, r.detail = "ok", fmt.Sprintf("account %s is ACTIVE, balance %s USD", me.Nickname, me.BalanceUSD.StringFixed(2))
	}
	return r
}

// checkRedis connects and reports the mode, the master(s) it reached and
// what each keeps through a crash or failover (version, AOF and fsync
// policy, RDB, replicas, and so how redisstore.Durability will confirm money
// writes): one master for REDIS_URL and REDIS_SENTINEL_URL (the one the
// sentinels name now), every master for REDIS_CLUSTER_URL. It fails when a
// master may evict keys (an evicted order is lost money), keeps nothing
// through a restart, or cannot be probed, unless allowVolatile.
func checkRedis(ctx context.Context, cfg *Config, allowVolatile bool) checkResult {
	r := checkResult{name: "redis"}
	if cfg.Redis.URL == "" {
		r.status, r.detail = volatileStatus(allowVolatile), "none of REDIS_URL, REDIS_SENTINEL_URL, REDIS_CLUSTER_URL is set: the bot would use an embedded store that loses everything on restart"+volatileHint(allowVolatile)
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := redisstore.OpenEndpoint(ctx, cfg.Redis)
	if err != nil {
		r.status, r.detail = "FAIL", err.Error()
		return r
	}
	defer conn.Close()
	nodes, err := redisstore.ProbeMasters(ctx, conn.Client)
	if err != nil {
		r.status, r.detail = "FAIL", "answers, but its settings could not be read: "+err.Error()
		return r
	}
	switch cfg.Redis.Mode {
	case redisstore.ModeSentinel:
		if addr, err := redisstore.SentinelMaster(ctx, cfg.Redis.URL); err == nil {
			nodes[0].Node = addr
		}
		r.status, r.detail = redisVerdict(nodes[0], allowVolatile)
		r.detail = "sentinel: master " + nodes[0].Node + " " + r.detail
	case redisstore.ModeCluster:
		r.status = "ok"
		parts := make([]string, len(nodes))
		for i, p := range nodes {
			st, d := redisVerdict(p, allowVolatile)
			parts[i] = p.Node + " " + st + " " + d
			if rank(st) > rank(r.status) {
				r.status = st
			}
		}
		r.detail = fmt.Sprintf("cluster: %d masters: ", len(nodes)) + strings.Join(parts, " | ")
	default:
		r.status, r.detail = redisVerdict(nodes[0], allowVolatile)
	}
	for _, p := range nodes {
		if loss := unconfirmedLoss(p); loss != "" {
			r.notes = crashNotes(loss, cfg.JournalDir != "")
			break
		}
	}
	return r
}

// checkRunning reports the replicas running on the configured Redis
// (checkReplicas).
func checkRunning(ctx context.Context, cfg *Config) checkResult {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := redisstore.OpenEndpoint(ctx, cfg.Redis)
	if err != nil {
		return checkResult{name: "replicas", status: "FAIL", detail: err.Error()}
	}
	defer conn.Close()
	return checkReplicas(ctx, conn)
}

// unconfirmedLoss is what a crash of the node loses of the writes it
// acknowledged when the shop cannot confirm its money writes (no WAITAOF,
// no replica to WAIT for) but the node does keep them through a restart
// (AOF on, not fsynced on every write); "" otherwise. The verdict says
// what to change for a node that keeps nothing or may evict.
func unconfirmedLoss(p redisstore.Persistence) string {
	if p.Mode != redisstore.SyncNone || !p.AOF || p.Evicts() {
		return ""
	}
	switch p.AppendFsync {
	case "always":
		return ""
	case "everysec":
		return "up to about the last second"
	case "no":
		return "what the OS had not flushed yet, often the last 30 seconds"
	}
	return "about the last second or more"
}

// crashNotes say plainly, for a Redis that cannot confirm money writes,
// what a crash loses and what the shop does about it (see
// bot/fulfil/recover.go, bot/checkout/sweep.go and
// redisstore.Durability).
func crashNotes(loss string, journal bool) []string {
	notes := []string{
		"A crash of this Redis (kill -9, an OOM kill, a power cut) loses " + loss + " of the writes it had acknowledged, money writes among them: " +
			"new paid orders, wallet debits and credits, placing intents, upstream order numbers. The shop cannot have them confirmed before its next step (that needs Redis 7.2 or later for WAITAOF, or a replica for WAIT).",
	}
	if journal {
		notes = append(notes, "What the shop does about it: every paid order and every upstream create is first written, fsynced, to the journal in JOURNAL_DIR, outside Redis. "+
			"A canary counter in Redis shows within about a second that writes were lost; the shop then puts the lost upstream numbers back from the journal, "+
			"rebuilds lost wallet orders from it, and runs the Stars sweep, which rebuilds lost Star payments and wallet top-ups from Telegram's record of the charges. "+
			"Before any create the upstream is listed, so a create whose record was lost is found instead of bought again, or the order goes to review when that cannot be proven. "+
			"Codes go out only once the order's claim on its upstream order is older than what a crash can take (3 s), so no buyer gets codes on a claim the crash undoes.")
	} else {
		notes = append(notes, "What the shop does about it: JOURNAL_DIR is off, so nothing outside Redis records paid orders or creates. "+
			"A canary counter in Redis shows within about a second that writes were lost, and the Stars sweep then rebuilds lost Star payments and wallet top-ups from Telegram's record of the charges; "+
			"a wallet-paid order the crash took is rebuilt only when its debit survived. Before any create the upstream is listed, so a create whose record was lost is found instead of bought again, "+
			"or the order goes to review when that cannot be proven. Codes go out only once their order's claim is older than what a crash can take (3 s).")
	}
	notes = append(notes, "Writes only Redis holds (settings, an admin's wallet adjustment, a buyer's menus) stay lost. "+
		"To have money writes confirmed: Redis 7.2 or later with appendonly yes (WAITAOF), or a replica (WAIT), or appendfsync always.")
	return notes
}

// rank orders check statuses from best to worst.
func rank(status string) int {
	switch status {
	case "ok":
		return 0
	case "warn":
		return 1
	}
	return 2
}

// redisVerdict grades a probed Redis: FAIL when it may evict keys, when a
// restart loses everything (no AOF, no RDB, no replica) or when nobody can
// tell, unless allowVolatile, which makes those warnings; ok otherwise. The
// detail says what a crash or failover can lose.
func redisVerdict(p redisstore.Persistence, allowVolatile bool) (status, detail string) {
	detail = "answers: " + p.Summary() + "; sync " + string(p.Mode) + ": " + p.Guarantee()
	switch {
	case p.Evicts():
		return volatileStatus(allowVolatile), detail + " (use noeviction: Redis must refuse writes rather than drop them)" + volatileHint(allowVolatile)
	case p.Version == "":
		return volatileStatus(allowVolatile), detail + " (persistence cannot be confirmed)" + volatileHint(allowVolatile)
	case !p.AOF && (!p.SaveKnown || p.Save == "") && p.Replicas == 0:
		return volatileStatus(allowVolatile), detail + " (use appendonly yes, appendfsync everysec)" + volatileHint(allowVolatile)
	case !p.AOF && p.Mode == redisstore.SyncNone:
		return "warn", detail + " (use appendonly yes, appendfsync everysec)"
	case unconfirmedLoss(p) != "":
		return "warn", detail + " (see below)"
	default:
		return "ok", detail
	}
}

func volatileStatus(allow bool) string {
	if allow {
		return "warn"
	}
	return "FAIL"
}

func volatileHint(allow bool) string {
	if allow {
		return " [allowed by --allow-volatile]"
	}
	return " [--allow-volatile accepts this for tests and demos]"
}

// checkLive asks the running shop's /healthz on HTTP_ADDR (loopback when
// the address has no host) and returns 0 when it answers 200: the container
// health check, which needs neither the token nor the upstream.
func checkLive(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	addr := getenv("HTTP_ADDR")
	if addr == "" {
		addr = ":8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		fmt.Fprintln(stderr, "shopbot check --live: HTTP_ADDR must be host:port or :port")
		return 2
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		fmt.Fprintln(stderr, "shopbot check --live:", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(stdout, "FAIL  live      ", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stdout, "FAIL  live      /healthz answered %d: %s\n", resp.StatusCode, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintln(stdout, "ok    live      /healthz answered 200")
	return 0
}

// checkWebApp says whether the Mini App is on (WEBAPP_URL), where the shop
// serves it and what must reach it; off is a warning, not a failure.
func checkWebApp(cfg *Config) checkResult {
	r := checkResult{name: "mini app"}
	switch {
	case cfg.WebAppURL == "":
		r.status, r.detail = "warn", "off: "+cfg.WebAppOff+" (docs/operator.md, \"The Mini App\")"
	default:
		u, _ := url.Parse(cfg.WebAppURL)
		r.status, r.detail = "ok", fmt.Sprintf("%s, served on HTTP_ADDR %s at %s", cfg.WebAppURL, cfg.HTTPAddr, u.Path)
		r.notes = []string{fmt.Sprintf("Your https proxy must forward %s to %s; the bot's menu button opens it.", u.Path, cfg.HTTPAddr)}
	}
	return r
}

func checkWebhook(ctx context.Context, cfg *Config, tg *bot.Probe) checkResult {
	r := checkResult{name: "webhook"}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := tg.Webhook(ctx)
	switch {
	case err != nil:
		r.status, r.detail = "FAIL", "getWebhookInfo: "+scrubSecrets(err.Error(), cfg)
	case info.URL == "":
		r.status, r.detail = "warn", "no webhook is set yet; the bot sets WEBHOOK_URL when it starts"
	case info.URL != cfg.WebhookURL:
		r.status, r.detail = "warn", fmt.Sprintf("the webhook points to %s; the bot will set WEBHOOK_URL when it starts", info.URL)
	case info.LastErrorMessage != "" && time.Since(info.LastErrorDate) < time.Hour:
		r.status, r.detail = "FAIL", fmt.Sprintf("Telegram's last delivery failed: %s (%d updates pending)", info.LastErrorMessage, info.Pending)
	default:
		r.status, r.detail = "ok", fmt.Sprintf("set to WEBHOOK_URL, %d updates pending", info.Pending)
	}
	return r
}

// telegramHint says what a failed getMe most likely means: a token
// Telegram rejected (401), or a Bot API it could not reach.
func telegramHint(err error) string {
	if errors.Is(err, bot.ErrTokenRejected) {
		return "Telegram rejected TELEGRAM_TOKEN: copy it again from @BotFather"
	}
	if hint := networkHint(err, "TELEGRAM_API_URL"); hint != "" {
		return hint
	}
	return "the Bot API answered with an error; check TELEGRAM_TOKEN and TELEGRAM_API_URL"
}

// networkHint names a failure to reach a service at all (the host name
// does not resolve, the connection is refused or times out), with the
// variable holding its address, or gives "" for anything else.
func networkHint(err error, urlVar string) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return fmt.Sprintf("the host %s does not resolve: check %s and this machine's DNS", dns.Name, urlVar)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &op) && op.Timeout():
		return fmt.Sprintf("no answer in time: check %s, the network and any firewall or proxy", urlVar)
	case errors.As(err, &op):
		return fmt.Sprintf("cannot connect: check %s, the network and any firewall or proxy", urlVar)
	}
	return ""
}

// minSecretInWord is the length from which a secret is redacted wherever
// it appears, also inside a longer word (the token inside a Bot API URL).
// A shorter one (a short test key) could be a piece of an ordinary word
// ("look" in "lookup"), so it is redacted only where it stands alone.
const minSecretInWord = 12

// scrubSecrets removes the token and the API key from a message.
func scrubSecrets(s string, cfg *Config) string {
	for _, secret := range []string{cfg.TelegramToken, cfg.ResellerKey} {
		switch {
		case secret == "":
		case len(secret) >= minSecretInWord:
			s = strings.ReplaceAll(s, secret, "<secret>")
		default:
			s = redactWhole(s, secret)
		}
	}
	return s
}

// redactWhole replaces each occurrence of secret in s that is not part of
// a longer word (letters, digits, _ or - on either side) with <secret>.
func redactWhole(s, secret string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, secret)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(secret)
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[end:])
		b.WriteString(s[:i])
		if i > 0 && wordRune(before) || end < len(s) && wordRune(after) {
			b.WriteString(secret)
		} else {
			b.WriteString("<secret>")
		}
		s = s[end:]
	}
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// quietRedis drops the Redis client's own log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
