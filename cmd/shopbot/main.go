// Command shopbot runs the Telegram shop: `shopbot` serves buyers,
// `shopbot check` verifies the configuration, `shopbot demo` runs the whole
// shop locally in the terminal.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"shopbot/state/redisstore"
	"shopbot/state/redisstore/records"
	"shopbot/state/redisstore/work"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/term"

	"shopbot/bot"
	"shopbot/bot/admin"
	"shopbot/bot/books"
	"shopbot/bot/catalog"
	"shopbot/bot/checkout"
	"shopbot/bot/fulfil"
	"shopbot/bot/images"
	"shopbot/bot/referral"
	"shopbot/bot/remind"
	"shopbot/bot/restock"
	"shopbot/bot/storefront"
	"shopbot/bot/support"
	"shopbot/bot/webapp"
	"shopbot/bot/webapp/initdata"
	"shopbot/flows"
	"shopbot/flows/lines"
	"shopbot/flows/shop"
	"shopbot/reseller"
	"shopbot/state"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	mode := ""
	if len(args) > 0 {
		mode = args[0]
	}
	switch mode {
	case "", "run":
		return serve(ctx, getenv, stderr)
	case "check":
		return check(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "shopbot %s (%s)\n", bot.Version, runtime.Version())
		return 0
	case "demo":
		return demo(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: shopbot [run|check|demo|version]\n\n  run      serve the shop (default)\n  check    verify the token, upstream key, Redis and webhook, then exit\n           --allow-volatile  accept a Redis that evicts keys or keeps nothing (tests, demos)\n           --live            only ask the running shop's /healthz (container health check)\n  demo     run the whole shop locally in this terminal\n  version  print the version stamped at build")
		return 0
	default:
		fmt.Fprintf(stderr, "shopbot: unknown command %q (try: run, check, demo, version)\n", mode)
		return 2
	}
}

// newLogger logs JSON when stderr is not a terminal, text otherwise.
func newLogger(w io.Writer, level string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: durationsInMillis}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// durationsInMillis is the logger's safety net for durations: log calls name
// theirs with a unit (retry_after_s, took_ms), but a time.Duration that
// slips through would be written as nanoseconds; it is written as
// milliseconds instead, its key suffixed _ms.
func durationsInMillis(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	key := a.Key
	if !strings.HasSuffix(key, "_ms") {
		key += "_ms"
	}
	return slog.Float64(key, float64(d)/float64(time.Millisecond))
}

func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) int {
	cfg, err := LoadConfig(getenv, false)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	log := newLogger(stderr, cfg.LogLevel)
	if path := getenv("SHOPBOT_CPUPROFILE"); path != "" {
		stop, err := cpuProfile(path)
		if err != nil {
			fmt.Fprintln(stderr, "SHOPBOT_CPUPROFILE:", err)
			return 2
		}
		defer stop()
	}
	// The Redis client's own notes (a new master after a failover, failed
	// dials) go to the shop's log instead of a plain line on stderr.
	redis.SetLogger(redisLog{log})
	conn, err := redisstore.OpenEndpoint(ctx, cfg.Redis)
	if err != nil {
		fmt.Fprintln(stderr, "redis:", err)
		return 1
	}
	defer conn.Close()
	// Before anything else of the store: a build that cannot run beside
	// the replicas running now must change nothing (docs/operator.md,
	// "Upgrades").
	leave, err := joinReplicas(ctx, redisstore.NewReplicas(conn.Client, redisstore.DefaultPrefix), log)
	if err != nil {
		fmt.Fprintln(stderr, "shopbot: refusing to start:", err)
		return 1
	}
	defer leave()
	if conn.Embedded {
		log.Warn("none of REDIS_URL, REDIS_SENTINEL_URL, REDIS_CLUSTER_URL is set: using an embedded in-memory store. STATE IS NOT DURABLE: a restart loses orders, quotes and wallets. Set REDIS_URL for production.")
	}
	if !conn.Embedded {
		// Keys of the layout before Redis Cluster support move to their
		// shards before anything reads them.
		rep, err := work.MigrateLayout(ctx, conn.Client, redisstore.DefaultPrefix)
		if err != nil {
			fmt.Fprintln(stderr, "redis:", err)
			return 1
		}
		if rep != (work.MigrateReport{}) {
			log.Info("moved the stored state to the sharded key layout", "keys", rep.Keys, "chats", rep.Chats, "jobs", rep.Jobs)
		}
	}
	b, err := newShop(cfg, conn, log, shopExtras{})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer nextGenWork(ctx, conn.Client, log)()
	if err := b.Run(ctx); err != nil {
		log.Error("shop stopped", "err", err)
		return 1
	}
	log.Info("shop stopped cleanly")
	return 0
}

// shopExtras are what the demo sets beside the configuration: the HTTP
// listener, and the Mini App served on it at a local path though
// WEBAPP_URL is unset (the demo's page in an ordinary browser); and the
// fulfilment worker's timings its tests shorten (demoFulfilKey; the zero
// Config: the defaults).
type shopExtras struct {
	httpListener net.Listener
	webAppPath   string
	fulfil       fulfil.Config
}

// newShop builds the shop from the configuration: the upstream client
// (with its calls counted in the bot's metrics), the cached catalog,
// quotes, the per-buyer rate limit, the product-line flows and, with
// WEBAPP_URL, the Mini App over the same lines.
func newShop(cfg *Config, conn *redisstore.Conn, log *slog.Logger, extra shopExtras) (*storefront.Shop, error) {
	engine := flows.NewEngine(cfg.Languages, cfg.DefaultLang)
	metrics := bot.NewMetrics()
	var upstream *reseller.Client // places and tracks paid orders
	var pay *checkout.Options
	if cfg.ResellerURL != "" {
		client, err := reseller.New(cfg.ResellerURL, cfg.ResellerKey,
			reseller.WithObserver(metrics.ObserveUpstream), reseller.WithMediaHosts(cfg.MediaHosts...))
		if err != nil {
			return nil, fmt.Errorf("reseller client: %w", err)
		}
		upstream = client
		pay = &checkout.Options{Stars: cfg.PayStars, Wallet: cfg.PayWallet, Upstream: client, Topup: checkout.TopupOptions{
			MinUSD: cfg.Topup.MinUSD, MaxUSD: cfg.Topup.MaxUSD, MaxBalanceUSD: cfg.Topup.MaxBalanceUSD, StarsUSDRate: cfg.StarsUSDRate,
		}}
	}
	var watch *admin.Watch // the upstream account's alerts
	if upstream != nil {
		watch = &admin.Watch{Account: upstream, Low: cfg.LowBalanceUSD, Every: time.Minute}
	}
	var imageOpts *images.Options // the upstream's catalog images, fetched like operator images
	if cfg.ShowImages && upstream != nil {
		imageOpts = &images.Options{}
	}
	menuApp := ""           // the menu button opens the Mini App when it is served
	var lineShop *shop.Shop // the product lines, over the upstream's catalog
	if upstream != nil {
		menuApp = cfg.WebAppURL
		lineShop = newLines(cfg, upstream, conn.Client, redisstore.DefaultPrefix)
	}
	journal, err := state.OpenJournal(cfg.JournalDir, cfg.JournalKeep, nil)
	if err != nil {
		return nil, fmt.Errorf("JOURNAL_DIR: %w", err)
	}
	ful := extra.fulfil
	if ful.PollMin == 0 { // the shipped timings (the demo's tests set their own)
		ful.PollFirst = cfg.PollFirst
	}
	b, err := storefront.New(storefront.Options{
		Options: bot.Options{
			Token: cfg.TelegramToken, APIURL: cfg.TelegramAPIURL,
			WebhookURL: cfg.WebhookURL, WebhookSecret: cfg.WebhookSecret, HTTPAddr: cfg.HTTPAddr,
			HTTPListener: extra.httpListener, MetricsAddr: cfg.MetricsAddr, WebAppURL: menuApp,
			Admins: cfg.AdminIDs, SupportAgents: cfg.SupportIDs, Accountants: cfg.AccountantIDs, Workers: cfg.Workers, Logger: log, Metrics: metrics,
		},
		Reseller: upstream, Journal: journal, Fulfil: ful, Admin: admin.Options{StarsUSDRate: cfg.StarsUSDRate},
		Books:    books.Options{StarsUSDRate: cfg.StarsUSDRate, ReconcileEvery: cfg.ReconcileEvery},
		Support:  support.Options{URL: cfg.SupportURL, TermsText: cfg.TermsText, TermsURL: cfg.TermsURL},
		Checkout: pay, Images: imageOpts,
		Referral: referral.Options{Percent: cfg.ReferralPercent, StarsUSDRate: cfg.StarsUSDRate},
		Watch:    watch,
		Restock:  restockOptions(lineShop),
		Remind:   remind.Options{After: cfg.QuoteReminder},
	}, conn.Client, engine)
	if err != nil {
		return nil, err
	}
	if lineShop == nil {
		log.Info("Mini App off: no upstream (RESELLER_BASE_URL), nothing to sell")
		return b, nil
	}
	if b.Reminders.Enabled() {
		// Each quote the lines save may be reminded of.
		lineShop.Quotes = catalog.Quotes{Store: records.NewQuotes(conn.Client, redisstore.DefaultPrefix), Saved: b.Reminders.Quoted}
	}
	lines.Register(engine, lineShop)
	if err := serveWebApp(cfg, b, lineShop, extra, log); err != nil {
		return nil, err
	}
	return b, nil
}

// serveWebApp serves the Mini App over the lines' shop sh when WEBAPP_URL
// is set (or the demo asks for it), and says in the log whether it is on.
func serveWebApp(cfg *Config, b *storefront.Shop, sh *shop.Shop, extra shopExtras, log *slog.Logger) error {
	path := extra.webAppPath
	if cfg.WebAppURL != "" {
		u, err := url.Parse(cfg.WebAppURL)
		if err != nil {
			return fmt.Errorf("WEBAPP_URL: %w", err)
		}
		path = u.Path
	}
	if path == "" {
		if cfg.WebAppOff == webAppUnset {
			log.Info("Mini App off: " + cfg.WebAppOff)
		} else {
			log.Warn("Mini App off: " + cfg.WebAppOff)
		}
		return nil
	}
	app, err := b.ServeWebApp(webapp.Options{Path: path}, sh)
	if err != nil {
		return err
	}
	log.Info("Mini App on", "url", cfg.WebAppURL, "path", app.Path(), "http_addr", cfg.HTTPAddr, "initdata_max_age_h", int(initdata.DefaultMaxAge.Hours()))
	return nil
}

// restockOptions check the sold-out items buyers wait for in the product
// lines' catalog; none without lines.
func restockOptions(sh *shop.Shop) restock.Options {
	if sh == nil {
		return restock.Options{}
	}
	return restock.Options{Catalog: sh.Catalog}
}

// newLines builds the product lines' shared dependencies from the
// configuration.
func newLines(cfg *Config, client *reseller.Client, rdb redis.UniversalClient, prefix string) *shop.Shop {
	p := shop.Pricing{
		Markup:       shop.Markup{Percent: cfg.Markup.Percent, Fixed: cfg.Markup.Fixed},
		Lines:        map[string]shop.Markup{},
		StarsUSDRate: cfg.StarsUSDRate,
		ShowStars:    cfg.PayStars,
		ShowUSD:      cfg.PayWallet,
	}
	for line, m := range cfg.Markup.Lines {
		p.Lines[line] = shop.Markup{Percent: m.Percent, Fixed: m.Fixed}
	}
	cat := catalog.New(client, work.NewCache(rdb, prefix), cfg.CatalogTTL)
	return &shop.Shop{
		Catalog: cat,
		Funds:   cat,
		Pricing: p,
		Quotes:  catalog.Quotes{Store: records.NewQuotes(rdb, prefix)},
		Promos:  catalog.Promos{Store: records.NewPromos(rdb, prefix)},
		Reviews: catalog.Reviews{Store: records.NewReviews(rdb, prefix)},
		Restock: catalog.Restock{Store: records.NewRestock(rdb, prefix)},
		Limiter: redisstore.NewLimiter(rdb, prefix, 10, time.Minute),
		// The inline mode asks with every few keystrokes: a limit of its own.
		InlineLimiter: redisstore.NewLimiter(rdb, prefix, 40, time.Minute),
		QuoteTTL:      cfg.QuoteTTL,
	}
}

// cpuProfile writes a CPU profile of the process to path until stop is
// called (SHOPBOT_CPUPROFILE, for profiling under load; see CONTRIBUTING.md,
// "The load benchmark").
func cpuProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// redisLog passes go-redis's log lines to the shop's logger.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.InfoContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
